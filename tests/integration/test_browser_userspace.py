"""The browser workloads inside the shared amd64 and i386 test userspaces, with their own Chromium.

Chromium is installed into both on first use, as a run does it (runner.provide_alike: the
newest version both are offered), once per SHOOTOUT_TEST_HOME. Then, as a run does:
calibrate on amd64, one trial on each side at a small size; the binaries that ran are
checked 64- and 32-bit by their ELF headers, the kernels' results must agree, and the
Chromium versions are equal or reported as a confounder. Needs root, fails without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from shared_spaces import AMD64, I386, Spaces

from shootout.base.errors import TargetError
from shootout.judge.analysis import confounders
from shootout.measure.runner import provide_alike, verify_binaries
from shootout.places.chroot import ChrootTarget, named_userspace_config
from shootout.system.journal import journal
from shootout.userspace.registry import META, get_ready, userspaces_dir
from shootout.workloads.browser import Browser, BrowserTabs
from shootout.workloads.browser.workload import CHROMIUM
from shootout.workloads.contract import Context

SIDES = {AMD64: (64, "x86-64"), I386: (32, "x86")}
SMALL = {"heavy_sections": 8, "items": 30, "todo_target_ms": 150, "kernel_target_ms": 30, "samples": 3,
         "kernels": {"splay": 2000, "raytrace": 40, "regexp": 500, "json": 500, "physics": 400}}


@pytest.fixture(scope="module")
def targets(spaces: Spaces) -> Iterator[dict[str, ChrootTarget]]:
    """Both userspaces open, Chromium in both (installed here the first time)."""
    for name in SIDES:
        spaces.need(name)
    with journal() as j:
        opened = {name: ChrootTarget(named_userspace_config(name), j) for name in SIDES}
        try:
            for target in opened.values():
                target.open()
            provide_alike(list(opened.values()), Browser())
            yield opened
        finally:
            for target in opened.values():
                target.close()


def _processes_in(target: ChrootTarget) -> list[int]:
    """Processes whose root is this chroot session's (a browser left behind would be one)."""
    root = str(target.host_path("/")).rstrip("/")
    found = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if os.readlink(f"/proc/{pid}/root").rstrip("/") == root:
                found.append(int(pid))
        except OSError:
            continue  # gone, or a kernel thread
    return found


def test_browser_runs_inside_amd64_and_i386_with_their_own_chromium(targets):
    w = Browser()
    facts, values, contexts, prepared = {}, {}, {}, {}
    for name, target in targets.items():
        w.check_tools(target)
        contexts[name] = Context(target, "browser", {**w.default_params(target.probe()), **w.quick, **SMALL})
        prepared[name] = w.prepare(contexts[name])
        verify_binaries(target.config, target, w, prepared[name])
        bits, machine = SIDES[name]
        elf = prepared[name].facts["elf"][CHROMIUM]
        assert (elf["elf_class"], elf["machine"]) == (bits, machine)
        assert prepared[name].facts["elf"]["node"]["elf_class"] == bits
    params = w.calibrate(contexts[AMD64], prepared[AMD64])  # once, as a run does
    for name, target in targets.items():
        result = target.run(w.argv(prepared[name], params), timeout=600)
        assert result.exit_status == 0, result.stderr_tail(3)
        values[name] = w.parse(result, params)  # checks the kernels' results against amd64's
        facts[name] = {"target": {}, "workloads": {"browser": {**prepared[name].facts,
                                                               "versions": prepared[name].versions}}}
        deadline = time.monotonic() + 10
        while _processes_in(target) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_in(target) == []
        w.cleanup(contexts[name], prepared[name])
    for name in SIDES:
        assert set(values[name]) == {m.name for m in Browser.spec.metrics}
        assert all(v > 0 for v in values[name].values()), values[name]
    versions = {n: prepared[n].versions["chromium"] for n in SIDES}
    found = [c for c in confounders(facts[AMD64], facts[I386], "browser") if c.startswith("versions.chromium")]
    expected = [] if versions[AMD64] == versions[I386] else [f"versions.chromium: {versions[AMD64]} vs {versions[I386]}"]
    assert found == expected


def test_browser_tabs_run_inside_i386(targets, run_workload):
    run = run_workload(targets[I386], BrowserTabs(), {**BrowserTabs.quick, "tabs": 3, "switches": 6, "heavy_sections": 8})
    assert set(run.values) == {m.name for m in BrowserTabs.spec.metrics}


def test_a_package_the_release_lacks_is_a_one_line_error_that_changes_nothing(targets):
    meta = userspaces_dir() / I386 / META
    before = meta.read_text()
    with pytest.raises(TargetError, match="Debian bookworm has no shootout-no-such-browser package for i386") as err:
        targets[I386].provide(["shootout-no-such-browser"])
    assert "\n" not in str(err.value)
    assert get_ready(I386).state == "ready" and meta.read_text() == before

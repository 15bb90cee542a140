"""The browser workloads inside the amd64 and i386 test userspaces, with their own Chromium.

The userspaces are the shared ones of test_userspace.py (SHOOTOUT_TEST_HOME keeps them
between modules and runs; created here when missing). Chromium goes into both once, at
one version where the mirror offers a common one. Then, as a run does: calibrate on amd64,
one trial on each side at a small size; the binaries that ran are checked 64- and 32-bit by
their ELF headers, the kernels' results must agree, and the Chromium versions are equal or
reported as a confounder. Needs root, fails without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from shootout.analysis import confounders
from shootout.errors import TargetError
from shootout.runner import verify_binaries
from shootout.system.journal import journal
from shootout.targets.chroot import ChrootTarget
from shootout.userspace import WORKLOAD_PACKAGES, create_userspace, named_userspace_config, version_confounders
from shootout.userspace.install import PIN_FILE, install_packages
from shootout.userspace.registry import META, find, get_ready, userspaces_dir
from shootout.workloads.browser import Browser, BrowserTabs
from shootout.workloads.browser.workload import CHROMIUM

RELEASE = "bookworm"
SIDES = {f"debian-{RELEASE}-amd64": ("amd64", 64, "x86-64"), f"debian-{RELEASE}-i386": ("i386", 32, "x86")}
SMALL = {"heavy_sections": 8, "items": 30, "todo_target_ms": 150, "kernel_target_ms": 30, "samples": 3,
         "kernels": {"splay": 2000, "raytrace": 40, "regexp": 500, "json": 500, "physics": 400}}


@pytest.fixture(scope="module")
def userspaces(tmp_path_factory: pytest.TempPathFactory, workload_packages) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.fail("the browser in userspaces needs root (CI runs as root)")
    home = Path(os.environ.get("SHOOTOUT_TEST_HOME") or tmp_path_factory.mktemp("userspaces"))
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOOTOUT_HOME", str(home))
    try:
        missing = [(n, arch) for n, (arch, _, _) in SIDES.items() if not any(u.state == "ready" for u in find(n))]
        with journal() as j, ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(create_userspace, n, a, RELEASE, packages=WORKLOAD_PACKAGES, journal=j)
                           for n, a in missing]:
                future.result()
        workload_packages(list(SIDES))
        yield home
    finally:
        mp.undo()


def _session_processes(target: ChrootTarget) -> list[psutil.Process]:
    """Processes started in this target's chroot session (their root is its mount point)."""
    session = str(target.inside(target.workdir))  # unique per session: /tmp/shootout-work-PID-N
    return [p for p in psutil.process_iter(["cmdline"]) if any(session in a for a in p.info["cmdline"] or [])]


def test_browser_runs_inside_amd64_and_i386_with_their_own_chromium(userspaces):
    w = Browser()
    params = {**Browser.quick_params(), **SMALL}
    facts, values = {}, {}
    with journal() as j:
        targets = {name: ChrootTarget(named_userspace_config(name), j) for name in SIDES}
        try:
            prepared = {}
            for name, target in targets.items():
                target.open()
                prepared[name] = w.prepare(target, dict(params))
                verify_binaries(target.config, target, w, prepared[name])
                _, bits, machine = SIDES[name]
                elf = prepared[name].facts["elf"][CHROMIUM]
                assert (elf["elf_class"], elf["machine"]) == (bits, machine)
                assert prepared[name].facts["elf"]["node"]["elf_class"] == bits
            first = next(iter(SIDES))
            params = w.calibrate(targets[first], prepared[first], params)  # once, as a run does
            for name, target in targets.items():
                result = target.run(w.argv(prepared[name], params), timeout=600)
                assert result.exit_status == 0, result.stderr_tail(3)
                values[name] = w.parse(result, params)  # checks the kernels' results against amd64's
                facts[name] = {"target": {}, "workloads": {"browser": prepared[name].facts}}
                deadline = time.monotonic() + 10
                while _session_processes(target) and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert _session_processes(target) == []
        finally:
            for target in targets.values():
                target.close()
    for name in SIDES:
        assert set(values[name]) == {m.name for m in Browser.spec.metrics}
        assert all(v > 0 for v in values[name].values())
    amd64, i386 = SIDES
    versions = {n: facts[n]["workloads"]["browser"]["chromium_version"] for n in SIDES}
    found = confounders(facts[amd64], facts[i386], "browser")
    if versions[amd64] == versions[i386]:
        assert not [c for c in found if c.startswith("chromium_version")]
        assert version_confounders([amd64, i386], ["chromium"]) == []
    else:
        assert f"chromium_version: {versions[amd64]} vs {versions[i386]}" in found
        assert version_confounders([amd64, i386], ["chromium"])[0].startswith("chromium: ")


def test_browser_tabs_run_inside_i386(userspaces, run_workload):
    w = BrowserTabs()
    name = f"debian-{RELEASE}-i386"
    with journal() as j:
        target = ChrootTarget(named_userspace_config(name), j)
        target.open()
        try:
            run = run_workload(target, w, {**BrowserTabs.quick_params(), "tabs": 3, "switches": 6, "heavy_sections": 8})
            assert set(run.values) == {m.name for m in BrowserTabs.spec.metrics}
        finally:
            target.close()


def test_a_package_the_release_lacks_is_a_one_line_error_that_changes_nothing(userspaces):
    name = f"debian-{RELEASE}-i386"
    meta = userspaces_dir() / name / META
    before = meta.read_text()
    with pytest.raises(TargetError, match=f"Debian {RELEASE} has no shootout-no-such-browser package for i386") as err:
        install_packages([name], ["shootout-no-such-browser"])
    assert "\n" not in str(err.value)
    assert get_ready(name).state == "ready" and meta.read_text() == before
    assert not (userspaces_dir() / name / "root" / PIN_FILE).exists()

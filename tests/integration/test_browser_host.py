"""The browser workloads on the host's Chromium (Debian's package; ./install.sh --test installs it).

Every metric at a small size, a host-vs-host A/A that says "same", pages that throw or log
errors and renderers or browsers that die as one-line failed trials, and no Chromium
process left behind by any of them (nor by a driver killed with SIGKILL).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from reaper import subreaper

from shootout.base.model import Config, RunSettings, aa_copy
from shootout.execution.process import ProcResult
from shootout.judge.analysis import analyze
from shootout.measure.runner import Runner, RunRequest, verify_binaries
from shootout.places.host import HostTarget
from shootout.store import Store
from shootout.system.journal import Journal
from shootout.workloads.browser import Browser, BrowserTabs, assets
from shootout.workloads.browser.workload import CHROMIUM
from shootout.workloads.contract import Context

SMALL = {"heavy_sections": 8, "items": 30, "todo_target_ms": 200, "kernel_target_ms": 30, "samples": 3,
         "kernels": {"splay": 2000, "raytrace": 40, "regexp": 500, "json": 500, "physics": 400}}


@pytest.fixture(scope="module")
def chromium(host: HostTarget) -> HostTarget:
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed on the host: apt-get install chromium (./install.sh --test)")
    return host


def ours(target: HostTarget) -> list[psutil.Process]:
    """Processes whose command line names this target's work directory: the trials' browsers."""
    where = target.workdir()
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(where in part for part in proc.info["cmdline"] or []):
            found.append(proc)
    return found


def assert_none_left(target: HostTarget, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while (left := ours(target)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], [" ".join(p.cmdline())[:160] for p in left]


def test_browser_gives_every_metric_with_its_facts(chromium, run_workload):
    w = Browser()
    run = run_workload(chromium, w, {**Browser.quick, **SMALL})
    assert set(run.values) == {m.name for m in Browser.spec.metrics}
    assert run.values["renderer_peak_rss"] > 20  # MiB: a real renderer, not a stray process
    assert run.values["todo_runs_per_min"] > run.values["todo_wall_runs_per_min"] / 10
    assert set(run.params["expect"]) == set(SMALL["kernels"]) and run.params["iterations"] >= 1
    verify_binaries(chromium.config, chromium, w, run.prepared)
    assert run.prepared.facts["elf"][CHROMIUM]["elf_class"] == 64
    facts = run.prepared.facts
    assert run.prepared.versions["chromium"].startswith("Chromium ") and facts["npm_versions"]["puppeteer-core"]
    assert len(facts["input_sha256"]) == 64 and facts["chromium_flags"][0] == "--headless"
    assert_none_left(chromium)


def test_browser_tabs_gives_every_metric(chromium, run_workload):
    run = run_workload(chromium, BrowserTabs(), {**BrowserTabs.quick, "tabs": 3, "switches": 6,
                                                 "heavy_sections": 8})
    assert set(run.values) == {m.name for m in BrowserTabs.spec.metrics}
    assert run.values["switch_p90_ms"] >= run.values["switch_ms"]
    assert_none_left(chromium)


PINNED_BUNDLES = {
    "app-preact.js": "102f04a7049bd06faa6e06a7c9e0d71c4047c3253e43a7baabb8652e08b27312",
    "app-react.js": "33d7a2a7e9cdbe9a285db182e1e1b61b6093dd506c47d74652e0cdfb8507b784",
    "app-svelte.js": "05cccd2fae3f090761661dc95466d15bb568972137df8952f5bd41cf6aff065d",
    "app-vanilla.js": "1d7758363ca16a0c97a521b2bd6e269d1d65efc723c3c955956db6575ab4b80d",
    "app-vue.js": "5c4af2c9bcbd4e18b30944ee52ea6e61bd02e4aa668b64865f58ea7f96cfd745",
}


def test_app_bundles_are_byte_identical_to_their_pinned_hashes(cached_home):
    built = assets.bundles()
    got = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(built.glob("app-*.js"))}
    assert got == PINNED_BUNDLES


def test_host_against_itself_is_same(chromium, tmp_path):
    """A/A at a small size: the headline's verdict is "same" (its interval within ±20%). At this
    size a trial's CPU time varies by about 8% on a quiet machine and by more on a busy one, so
    the run goes on past 10 rounds until the sequential rule decides, as a user's run would;
    a run of fixed length would fail now and then on noise alone, not on a bias."""
    host = Config(name="host")
    settings = RunSettings(seed=5, budget_s=1200, aa=True, counters=False, threshold=0.20, precision=0.10, min_rounds=10, max_rounds=30)
    params = {"browser": {**Browser.quick, **SMALL, "sets": ["todo"], "todo_target_ms": 300}}
    store = Store(f"sqlite:///{tmp_path / 'aa.db'}")
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest([host, aa_copy(host)], [Browser()], settings, params=params))
    trials = store.trials(run_id)
    assert all(t.ok for t in trials), [t.error for t in trials if not t.ok]
    headline = next(c for c in analyze(store.get_run(run_id), trials).comparisons if c.metric == "todo_runs_per_min")
    assert headline.verdict == "same", headline.estimate


# -- bad pages, crashes, kills ------------------------------------------------------------------------

PAGES = {
    "throws": "window.heavyReady = Promise.resolve(1); null.boom();",
    "console": 'window.heavyReady = Promise.resolve(1); console.error("the widget is broken");',
    "grows": ("window.heavyReady = new Promise(() => { const keep = []; const grow = () => { "
              "for (let i = 0; i < 2000; i++) keep.push(new Array(10000).fill(i)); setTimeout(grow, 0); }; grow(); });"),
    "hangs": "window.heavyReady = new Promise(() => {});",
}


@pytest.fixture(scope="module")
def startup(chromium: HostTarget):
    """A prepared browser workload whose heavy page a test replaces: (target, prepared, params)."""
    w = Browser()
    params = {**w.default_params(chromium.probe()), **Browser.quick, **SMALL, "sets": ["startup"], "timeout_s": 60}
    return chromium, w, w.prepare(Context(chromium, "browser", params)), params


def driver_argv(startup, page: str, timeout_s: float = 60, flags: tuple[str, ...] = ()) -> list[str]:
    target, w, prepared, params = startup
    html = Path(target.workdir()) / f"bad-{page}.html"
    html.write_text(f"<!doctype html><html><body><p>bad page</p><script>{PAGES[page]}</script></body></html>")
    plan = {**w.plan(prepared, {**params, "timeout_s": timeout_s}), "heavy": str(html)}
    plan["flags"] = [*plan["flags"], *flags]
    return ["node", prepared.files["driver"], json.dumps(plan)]


def one_line_failure(done: ProcResult, message: str) -> None:
    assert done.exit_status == 2, done.stdout
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith("error: "), done.stderr
    assert message in done.stderr, done.stderr


@pytest.mark.parametrize(("page", "timeout_s", "flags", "message"), [
    ("throws", 60, (), "the heavy page threw: Cannot read properties of null (reading 'boom')"),
    ("console", 60, (), "the heavy page logged an error: the widget is broken"),
    ("grows", 60, ("--js-flags=--max-old-space-size=48",), "a renderer crashed during startup"),
    ("hangs", 6, (), "timed out after 5.4 s during startup"),
])
def test_a_bad_page_is_a_one_line_failed_trial(startup, page, timeout_s, flags, message):
    target = startup[0]
    done = target.run(driver_argv(startup, page, timeout_s, flags), timeout=120)
    one_line_failure(done, message)
    assert_none_left(target)


def test_a_browser_that_dies_while_starting_is_reported_with_its_own_words(startup, tmp_path):
    target, w, prepared, params = startup
    dying = tmp_path / "chromium"
    dying.write_text("#!/bin/sh\necho 'starting up' >&2\necho 'FATAL: Check failed: shm_open' >&2\nexit 1\n")
    dying.chmod(0o755)
    plan = {**w.plan(prepared, params), "chromium": str(dying)}
    done = target.run(["node", prepared.files["driver"], json.dumps(plan)], timeout=120)
    one_line_failure(done, "Chromium's last words: starting up | FATAL: Check failed: shm_open")
    assert "(during launch)" in done.stderr, done.stderr


def test_a_work_directory_too_deep_for_chromiums_socket_is_named(startup, tmp_path):
    target, w, prepared, params = startup
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    plan = {**w.plan(prepared, params), "scratch": str(deep)}
    done = target.run(["node", prepared.files["driver"], json.dumps(plan)], timeout=120)
    one_line_failure(done, "the work directory's path is too long for Chromium's singleton socket")
    assert_none_left(target)


def _start(startup, page: str) -> subprocess.Popen[str]:
    """The driver on a page that never gets ready, once it has launched the browser (startup)."""
    target = startup[0]
    child = subprocess.Popen(driver_argv(startup, page), env=target.environment(), cwd=target.workdir(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    assert child.stdout is not None and child.stdout.readline().startswith("launch_ms "), child.stderr
    return child


def _kind(proc: psutil.Process) -> str:
    return next((a.split("=", 1)[1] for a in proc.info["cmdline"] if a.startswith("--type=")), "browser")


def _wait_for(target: HostTarget, kind: str) -> list[psutil.Process]:
    """The trial's Chromium processes of one kind ("renderer"; "browser" has no --type), once
    the page is up (its renderer and the spare one)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [p for p in ours(target) if Path(p.info["cmdline"][0]).name == "chromium"]
        if sum(_kind(p) == "renderer" for p in found) >= 2:
            return [p for p in found if _kind(p) == kind]
        time.sleep(0.2)
    pytest.fail(f"no {kind} process appeared")


def test_a_killed_renderer_is_a_failed_trial_that_says_so(startup):
    target = startup[0]
    child = _start(startup, "hangs")
    try:
        for proc in _wait_for(target, "renderer"):
            proc.send_signal(signal.SIGKILL)  # what the kernel's OOM killer does
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 2
    assert err.strip().count("\n") == 0 and "a renderer was killed (out of memory?) during startup" in err, err
    assert_none_left(target)


def test_a_killed_browser_is_a_failed_trial_that_says_so(startup):
    target = startup[0]
    child = _start(startup, "hangs")
    try:
        (browser,) = _wait_for(target, "browser")
        browser.send_signal(signal.SIGKILL)
        _, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 2
    assert "the browser exited during startup (killed by SIGKILL, out of memory?)" in err, err
    assert_none_left(target)


def test_a_killed_driver_leaves_no_browser_behind(startup):
    target = startup[0]
    child = _start(startup, "hangs")
    try:
        _wait_for(target, "renderer")
        os.killpg(child.pid, signal.SIGKILL)  # the driver and only its process group, as a runner timeout does
    finally:
        child.wait()
    assert_none_left(target)


def test_a_trial_returns_only_when_its_whole_browser_has_exited(startup):
    """A runner's timeout kills the driver's group; Chromium's own session (puppeteer starts it
    with setsid), its zygotes, renderers and crash handlers must be gone too when run()
    returns, not a moment later. The same for a trial that ends by itself."""
    target = startup[0]
    with subreaper() as left:
        killed = target.run(driver_argv(startup, "hangs"), timeout=8)
        after_kill = left()
        failed = target.run(driver_argv(startup, "throws"), timeout=120)
        after_end = left()
    assert killed.timed_out and after_kill == []
    assert failed.exit_status == 2 and after_end == []

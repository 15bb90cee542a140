"""Progress when stdout is not a terminal (CI logs, `> run.log`): one line per round."""

from __future__ import annotations

import io

from rich.console import Console

from shootout.base.model import Trial, TrialSpec
from shootout.cli.progress import ProgressView
from shootout.measure import events as ev


def view(terminal: bool) -> tuple[ProgressView, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100)
    return ProgressView(console, Console(file=io.StringIO()), min_rounds=6), out


def events() -> list[ev.Event]:
    return [ev.RunStarted(4, ["amd64", "i386"], ["a", "b", "c"]),
            ev.RoundStarted(0, ["a", "b", "c"], None),
            ev.BudgetEstimate(rounds=6, round_s=20.0, needed_s=120.0, left_s=200.0),
            ev.RoundStarted(1, ["a", "b", "c"], 125.0),
            ev.RoundStarted(7, ["b"], 12.0)]


def test_a_line_per_round_with_workloads_left_and_eta_when_piped() -> None:
    progress, out = view(terminal=False)
    with progress:
        for event in events():
            progress(event)
    lines = out.getvalue().splitlines()
    assert "warm-up: 3 workloads left, ETA …" in lines
    assert "round 1 of 6: 3 workloads left, ETA 2m05s" in lines
    assert "round 7 (undecided only): 1 workload left, ETA 12s" in lines
    assert any(line.startswith("a first verdict needs 6 rounds: about 2m00s (20s a round, as the warm-up took)") for line in lines)


def _trial(ok: bool) -> Trial:
    return Trial(TrialSpec(0, 0, "work", "A"), {"v": 1.0} if ok else {}, 0.2, 0.2, 0, 1, 1, 0 if ok else 127, "", 0.0,
                 error=None if ok else "exit status 127")


def test_a_run_of_one_workload_says_one_workload() -> None:
    progress, out = view(terminal=False)
    progress(ev.RunStarted(5, ["A", "B"], ["work"]))
    progress(ev.TrialDone(_trial(ok=True), None))
    assert out.getvalue().splitlines() == ["run 5: 1 workload × A, B"]


def test_what_comes_before_the_first_measured_trial_is_held_and_dropped_with_a_run_not_kept() -> None:
    errors = io.StringIO()
    out = io.StringIO()
    progress = ProgressView(Console(file=out, width=100), Console(file=errors, width=100), 6, head=["  load: idle"])
    progress(ev.RunStarted(5, ["A", "B"], ["work"]))
    progress(ev.RoundStarted(0, ["work"], None))
    progress(ev.TrialDone(_trial(ok=False), None))
    progress(ev.WorkloadSkipped("work", "A: exit status 127"))
    assert out.getvalue() == errors.getvalue() == ""
    progress(ev.RunFinished(5, "failed", kept=False))
    assert out.getvalue() == errors.getvalue() == ""  # the run's error will be the only line


def test_held_lines_come_out_in_order_once_a_trial_is_measured_or_the_run_is_kept() -> None:
    for last in (ev.TrialDone(_trial(ok=True), None), ev.RunFinished(5, "interrupted")):
        errors = io.StringIO()
        out = io.StringIO()
        progress = ProgressView(Console(file=out, width=100), Console(file=errors, width=100), 6, head=["  load: idle"])
        progress(ev.RunStarted(5, ["A", "B"], ["work"]))
        progress(ev.WorkloadSkipped("other", "A: no such tool"))
        progress(last)
        assert errors.getvalue().splitlines() == ["  load: idle", "skipping other: A: no such tool"]
        assert out.getvalue().splitlines()[0] == "run 5: 1 workload × A, B"


def test_no_round_lines_on_a_terminal_the_bar_shows_them() -> None:
    progress, out = view(terminal=True)
    with progress:
        for event in events():
            progress(event)
    assert "round 1 of 6" not in out.getvalue()


def test_an_attempt_set_aside_shows_on_the_bar_and_adds_no_line() -> None:
    progress, out = view(terminal=False)
    with progress:
        for event in events():
            progress(event)
        before = out.getvalue()
        progress(ev.TrialSetAside(Trial(TrialSpec(7, 0, "b", "i386"), {}, 0.2, 0.2, 0, 1, 1, 0, "", 0.0)))
        assert progress.progress.tasks[0].description == "round 7 (measuring again)"
    assert out.getvalue().strip() == before.strip()  # the round lines say enough when piped


def test_a_short_budget_is_said_before_measuring() -> None:
    progress, out = view(terminal=False)
    progress(ev.BudgetEstimate(rounds=6, round_s=120.0, needed_s=720.0, left_s=100.0))
    assert " ".join(out.getvalue().split()).endswith("1m40s of the budget left: not enough with a 20% margin")


def test_rounds_are_counted_to_the_first_verdict_when_it_comes_after_the_minimum() -> None:
    progress, out = view(terminal=False)
    with progress:
        for event in [*events()[:2], ev.BudgetEstimate(rounds=11, round_s=15.0, needed_s=165.0, left_s=200.0),
                      ev.RoundStarted(1, ["a", "b", "c"], 150.0), ev.RoundStarted(9, ["a", "b", "c"], 30.0)]:
            progress(event)
        assert progress.progress.tasks[0].total == 12 * 2 * 3  # warm-up and 11 rounds of 3 workloads on 2 sides
    lines = out.getvalue().splitlines()
    assert "round 1 of 11: 3 workloads left, ETA 2m30s" in lines and "round 9 of 11: 3 workloads left, ETA 30s" in lines


def test_userspace_creation_shows_a_start_and_a_ready_line_each_when_piped() -> None:
    from shootout.cli.progress import preparing

    out = io.StringIO()
    line = preparing(Console(file=out, force_terminal=False, width=80), status=None)
    for text in ("u-amd64: Retrieving InRelease", "u-i386: Retrieving InRelease", "u-amd64: Extracting libc6",
                 "u-amd64: ready in 78 s", "u-i386: Installing core packages", "u-i386: ready in 93 s"):
        line(text)
    assert out.getvalue().splitlines() == ["u-amd64: Retrieving InRelease", "u-i386: Retrieving InRelease",
                                           "u-amd64: ready in 78 s", "u-i386: ready in 93 s"]
    out.truncate(0)
    out.seek(0)  # mmdebstrap's first line is its own and long: wrapped at 80 columns like the rest
    line("debian-bookworm-amd64: chroot architecture amd64 is equal to the host's architecture")
    assert [s.rstrip() for s in out.getvalue().splitlines()] == [
        "debian-bookworm-amd64: chroot architecture amd64 is equal to the host's", "architecture"]


def test_an_install_into_a_userspace_is_said_before_it_starts_in_both_layouts() -> None:
    """A browser's install took 2 minutes with no line: said at once, not held for the first trial."""
    for terminal in (False, True):
        errors = io.StringIO()
        progress = ProgressView(Console(file=io.StringIO(), force_terminal=terminal, width=100),
                                Console(file=errors, width=100), min_rounds=6, head=["load: idle"])
        with progress:
            progress(ev.RunStarted(4, ["amd64", "i386"], ["browser"]))
            progress(ev.Installing("browser", "debian:bookworm:i386", ["chromium", "chromium-driver"]))
        assert errors.getvalue().splitlines() == [
            "installing chromium, chromium-driver into debian:bookworm:i386 for browser (apt; this may take minutes)"]


def test_provide_alike_tells_of_each_install_before_it_starts() -> None:
    from shootout.measure.binaries import provide_alike
    from shootout.workloads.contract import Tool, Workload

    class Side:
        def __init__(self, name: str, lacking: list[str]) -> None:
            self.name, self.lacking, self.done = name, lacking, []

        def which(self, command: str) -> str | None:
            return None if command in self.lacking else f"/usr/bin/{command}"

        def offers(self, packages, components):  # type: ignore[no-untyped-def]
            return {}, []

        def lacks(self, packages):  # type: ignore[no-untyped-def]
            return [p for p in packages if p in self.lacking]

        def provide(self, packages, components, versions):  # type: ignore[no-untyped-def]
            self.done.append(list(packages))

    class Browserish(Workload):
        tools = (Tool("chromium", "chromium"), Tool("sh", "dash"))

        def argv(self, prepared, params):  # type: ignore[no-untyped-def]
            return ["chromium"]

        def parse(self, result, params):  # type: ignore[no-untyped-def]
            return {}

    said: list[tuple[str, list[str], int]] = []
    sides = [Side("amd64", ["chromium"]), Side("host", [])]
    provide_alike(sides, Browserish(), lambda side, packages: said.append((side.name, packages, len(side.done))))  # type: ignore[arg-type]
    assert said == [("amd64", ["chromium"], 0)]  # before its provide, and none for the side that has it
    assert [s.done for s in sides] == [[["chromium"]], [[]]]

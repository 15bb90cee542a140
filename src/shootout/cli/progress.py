"""Turn runner events into a Rich progress bar with an ETA and one-line notices."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.status import Status
from rich.table import Column
from rich.text import Text

from shootout.base.units import fmt_duration
from shootout.measure import events as ev


def _workloads(n: int) -> str:
    return f"{n} workload{'s' if n != 1 else ''}"


def _fmt_eta(seconds: float | None) -> str:
    return "ETA …" if seconds is None else f"ETA {fmt_duration(seconds)}"


# The preparation step (preparation.py), by the name the display gives it: what is built,
# compiled or probed after the options are parsed and before the first trial.
PREPARING = "preparing configurations"


def preparing(errors: Console, status: Status | None) -> Callable[[str], None]:
    """The preparation step's passing status: the spinner on a terminal; piped (a log), one line
    when each userspace starts being made and one when it is ready, not mmdebstrap's every step."""
    if errors.is_terminal and status is not None:
        return lambda text: status.update(escape(f"{PREPARING}: {text}"))
    started: set[str] = set()

    def line(text: str) -> None:
        who = text.split(":", 1)[0]
        if who not in started or " ready in " in text:
            started.add(who)
            errors.print(escape(text), highlight=False)  # wrapped at the width: mmdebstrap says long lines
    return line


def prepared_lines(done: Sequence[str]) -> list[str]:
    """What the preparation step did, said with the run's first lines (none when it did nothing)."""
    return [escape(f"{PREPARING}: {'; '.join(done)}")] if done else []


class ProgressView:
    """A live bar on a terminal; when stdout is a file or a pipe (CI logs), a line per round."""

    def __init__(self, console: Console, errors: Console, min_rounds: int, head: Sequence[str] = ()) -> None:
        self.console = console
        # What is said before the first trial is measured (the machine's conditions, the run's
        # number, skipped workloads) is held until then: a run that fails as a whole before
        # measuring anything is not kept, and its error is then the only line.
        # The head is information, wrapped at words under its indent; later lines on stderr are
        # problems, each kept on one line.
        self.held: list[tuple[Console, str, bool]] | None = [(errors, line, True) for line in head]
        self.lines = not console.is_terminal
        self.errors = errors  # skipped workloads are problems: they go to stderr
        self.min_rounds = min_rounds
        self.progress = Progress(
            # long names wrap in their column; the counts and times beside them stay whole
            TextColumn("[bold]{task.description}", table_column=Column(ratio=1, overflow="fold")),
            BarColumn(bar_width=20), MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TextColumn("{task.fields[eta]}", table_column=Column(no_wrap=True)),
            TimeElapsedColumn(table_column=Column(no_wrap=True)), console=console, transient=True,
            # No refresh thread: it would redraw during trials and compete for a CPU. The bar
            # is redrawn on every event instead, i.e. between trials.
            auto_refresh=False,
        )
        self.task = None
        self.n_configs = 1
        self.per_round = 1  # trials in a round of every workload

    def __enter__(self) -> ProgressView:
        if not self.lines:  # written to a file, a stopped bar still leaves an empty line
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.lines:
            self.progress.stop()

    def __call__(self, event: ev.Event) -> None:
        match event:
            case ev.RunStarted(run_id=run_id, configs=configs, workloads=workloads, resumed=resumed):
                self.n_configs, self.per_round = len(configs), len(configs) * len(workloads)
                total = (self.min_rounds + 1) * self.per_round
                self._say(self.console, f"run {run_id}: {_workloads(len(workloads))} × {escape(', '.join(configs))}"
                          + (f" (resuming after {resumed} trials)" if resumed else ""))
                self.task = self.progress.add_task("preparing", total=total, completed=resumed, eta="")
            case ev.Preparing(workload=w, config=c):
                self._update(description=f"preparing {w} on {c}")
            case ev.Installing(workload=w, where=where, packages=packages):
                # said at once, not held: apt may take minutes with nothing else to show
                self._update(description=f"installing for {w} into {where}")
                self.errors.print(escape(f"installing {', '.join(packages)} into {where} for {w} (apt; this may "
                                         "take minutes)"), highlight=False, soft_wrap=True)
            case ev.WorkloadSkipped(workload=w, reason=reason):
                self._say(self.errors, f"[yellow]skipping {w}[/]: {escape(reason)}")
            case ev.Notice(text=text):
                self._say(self.errors, f"[yellow]note[/]: {escape(text)}", wrapped=True)
            case ev.BudgetEstimate() as est:
                self._release()
                if est.rounds > self.min_rounds:  # the sequential rule's first look comes later
                    if self.task is not None:
                        total = self.progress.tasks[self.task].total or 0
                        self.progress.update(self.task, total=total + (est.rounds - self.min_rounds) * self.per_round)
                    self.min_rounds = est.rounds
                self.console.print(
                    f"a first verdict needs {est.rounds} rounds: about {fmt_duration(est.needed_s)} "
                    f"({fmt_duration(est.round_s)} a round, as the warm-up took); "
                    f"{fmt_duration(est.left_s)} of the budget left"
                    + ("" if est.enough else f": not enough with a {ev.BUDGET_MARGIN - 1:.0%} margin"),
                    highlight=False)
            case ev.RoundStarted(round=r, workloads=ws, eta_s=eta):
                label = "warm-up" if r == 0 else f"round {r}"
                self._update(description=f"{label} ({_workloads(len(ws))})", eta=_fmt_eta(eta))
                if self.lines:
                    of = f" of {self.min_rounds}" if 0 < r <= self.min_rounds else " (undecided only)" if r else ""
                    self._say(self.console, f"{label}{of}: {_workloads(len(ws))} left, {_fmt_eta(eta)}")
                if r > self.min_rounds and self.task is not None:
                    # rounds past the minimum run only the undecided workloads
                    self.progress.update(self.task, total=self.progress.tasks[self.task].total + len(ws) * self.n_configs)
            case ev.TrialSetAside(trial=t):  # other programs interrupted it; the summary says how often
                self._release()
                self._update(description=f"round {t.spec.round} (measuring again)")
            case ev.TrialDone(trial=t, eta_s=eta):
                if t.ok:
                    self._release()
                self._update(advance=1, eta=_fmt_eta(eta))
            case ev.Stopped(reason=reason):
                self._release()
                self.console.print(f"stopped: {reason}")
            case ev.RunFinished(run_id=run_id, status=status, kept=kept):
                if kept:
                    self._release()
                    self.console.print(f"run {run_id} {status}")
                self.held = None  # not kept: the error is all there is to say

    def _say(self, console: Console, text: str, wrapped: bool = False) -> None:
        """Print a line (Rich markup), or hold it until the first trial is measured; a note
        (wrapped) wraps at words, a problem stays one line."""
        if self.held is not None:
            self.held.append((console, text, wrapped))
        else:
            self._print(console, text, wrapped)

    def _release(self) -> None:
        for console, text, wrapped in self.held or ():
            self._print(console, text, wrapped)
        self.held = None

    def _print(self, console: Console, text: str, wrapped: bool = False) -> None:
        # stdout's lines wrap at words to its width (80 into a pipe); a problem on stderr stays one line
        if wrapped:
            indent = len(text) - len(text.lstrip(" "))
            console.print(Padding(Text.from_markup(text[indent:]), (0, 0, 0, indent), expand=False), highlight=False)
        else:
            console.print(text, highlight=False, soft_wrap=console is self.errors)

    def _update(self, **kwargs: object) -> None:
        if self.task is not None:
            self.progress.update(self.task, refresh=True, **kwargs)  # type: ignore[arg-type]

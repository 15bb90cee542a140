"""What the runner reports while it works; the CLI renders these, the runner never prints."""

from __future__ import annotations

from dataclasses import dataclass

from shootout.base.model import Trial


class Event:
    pass


@dataclass(frozen=True)
class RunStarted(Event):
    run_id: int
    configs: list[str]
    workloads: list[str]
    resumed: int = 0  # trials already stored when resuming


@dataclass(frozen=True)
class Preparing(Event):
    workload: str
    config: str


@dataclass(frozen=True)
class Installing(Event):
    """Packages a workload needs are being installed into a configuration's userspace: apt may
    take minutes (a browser), said before it starts."""

    workload: str
    where: str  # the userspace (its configuration's display name)
    packages: list[str]


@dataclass(frozen=True)
class WorkloadSkipped(Event):
    workload: str
    reason: str


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should know that does not stop the run (e.g. an apt warning)."""

    text: str


@dataclass(frozen=True)
class RoundStarted(Event):
    round: int  # 0 = warm-up
    workloads: list[str]
    eta_s: float | None


# What the budget must hold beyond the estimate of the rounds up to a first verdict: trials
# set aside and measured again, and rounds slower than the warm-up, would otherwise leave a
# run that fitted on paper without a single verdict.
BUDGET_MARGIN = 1.2


@dataclass(frozen=True)
class BudgetEstimate(Event):
    """After the warm-up: what the rounds up to the first possible verdict still need against
    what the budget has left."""

    rounds: int  # rounds still to measure before the sequential rule can give a verdict
    round_s: float  # one round, as long as the warm-up round took
    needed_s: float
    left_s: float

    @property
    def enough(self) -> bool:
        return self.needed_s * BUDGET_MARGIN <= self.left_s


@dataclass(frozen=True)
class TrialSetAside(Event):
    """Other programs interrupted this attempt: it is kept with the run and run again."""

    trial: Trial


@dataclass(frozen=True)
class TrialDone(Event):
    trial: Trial
    eta_s: float | None


@dataclass(frozen=True)
class Stopped(Event):
    reason: str


@dataclass(frozen=True)
class RunFinished(Event):
    run_id: int
    status: str
    kept: bool = True  # False: it failed before measuring anything and was not stored

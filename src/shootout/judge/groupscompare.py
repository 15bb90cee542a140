"""Comparisons of groups of machines (groups.py): the machines are the units, as runs are in crossrun."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from shootout.base.model import Run, Trial
from shootout.base.runfacts import RunFacts
from shootout.configs.groups import (
    MACHINES_NOTE,
    MACHINES_RULE,
    ONE_MACHINE,
    ONE_MACHINE_NOTE,
    group_of,
    sides,
)
from shootout.judge.analysis import WITHIN_RUN, Analysis
from shootout.judge.crossrun import (
    ACROSS_RUNS_RULE,
    UNPAIRED_NOTE,
    Member,
    Part,
    compare_members,
)


def members_of(run: Run, trials: Sequence[Trial]) -> list[Member]:
    """The groups (and lone configurations) of a run as cross-run members: each machine a part
    of its own pseudo-run, so that crossrun takes the machines as its units."""
    out = []
    for i, (name, configs) in enumerate(sides(run.configs).items()):
        parts = tuple(Part(dataclasses.replace(run, id=-(100 * i + j + 1)), trials, c.name)
                      for j, c in enumerate(configs))
        label = name if len(configs) == 1 and not group_of(configs[0]) else f"{name} ({len(configs)} machines)"
        first = configs[0]
        shown = first if not group_of(first) else dataclasses.replace(first, name=name, label=label)
        out.append(Member(shown, parts))
    return out


def analyze_groups(run: Run, trials: Sequence[Trial]) -> Analysis:
    """`show` of a run of groups: each group against the first, machines as the units."""
    analysis = compare_members(members_of(run, trials))

    def relabel(flags: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(ONE_MACHINE if f == WITHIN_RUN else f for f in flags)

    # resolution says how many rounds would settle it: with machines as units, rounds do not
    comparisons = tuple(dataclasses.replace(c, flags=relabel(c.flags), resolution=None) for c in analysis.comparisons)
    summaries = tuple(dataclasses.replace(s, note=ONE_MACHINE if s.note == WITHIN_RUN else s.note)
                      for s in analysis.summaries)
    one = any(ONE_MACHINE in c.flags for c in comparisons)
    several = any(ONE_MACHINE not in c.flags for c in comparisons)
    notes = [n for n in analysis.notes if n != UNPAIRED_NOTE and not n.startswith(WITHIN_RUN)]
    notes = ([MACHINES_NOTE] if several else []) + ([ONE_MACHINE_NOTE] if one else []) + notes
    rules = tuple(MACHINES_RULE if r == ACROSS_RUNS_RULE else r for r in analysis.rules)
    facts = RunFacts(machine=run.facts.machine, sides=analysis.facts.sides)
    return dataclasses.replace(analysis, runs=(run,), comparisons=comparisons, summaries=summaries,
                               notes=tuple(notes), rules=rules, facts=facts)

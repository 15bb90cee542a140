"""rpi64's largest buffer: a capacity judged by whether each side got the write-up's 3 GB, not a speed-up."""

from __future__ import annotations

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.execution.process import ProcResult
from shootout.experiments import EXPERIMENTS
from shootout.experiments.rpi64 import BUFFER_MIB
from shootout.judge.analysis import analyze
from shootout.stats import Verdict
from shootout.workloads.memory import MaxAlloc

OUTPUT = "max_mib {}\nlimit_mib 2880\nstep_mib 64\nattempts 1\nprobes 7\nmlocked 1\n"


def parse(max_mib: int) -> dict[str, float]:
    out = ProcResult(("maxalloc",), 0, OUTPUT.format(max_mib), "", 1.0, 1.0, 0.0, 1000, 1, 0.0)
    return MaxAlloc().parse(out, {"limit_mib": BUFFER_MIB, "step_mib": 64})


def test_a_side_short_of_the_limit_is_refused() -> None:
    assert parse(2880) == {"max_mib": 2880.0, "refused": 0.0}
    assert parse(2560) == {"max_mib": 2560.0, "refused": 1.0}


def run_of(sixty_four: int, thirty_two: int, rounds: int = 8) -> tuple[Run, list[Trial]]:
    trials = [Trial(TrialSpec(r, 0, "maxalloc", config), parse(mib), 1.0, 0.5, 0.5, 1, 1, 0, "", 0.0)
              for r in range(1, rounds + 1) for config, mib in (("amd64", sixty_four), ("i386", thirty_two))]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=rounds), [Config("amd64"), Config("i386")],
              [MaxAlloc.spec], {"maxalloc": {"limit_mib": BUFFER_MIB}}, RunFacts())
    return run, trials


def test_the_32_bit_side_that_cannot_get_3_gb_is_worse_not_slower() -> None:
    run, trials = run_of(2880, 2560)
    analysis = analyze(run, trials)
    (comp,) = [c for c in analysis.comparisons if c.headline]
    assert comp.verdict is Verdict.WORSE and comp.decided_by is not None
    assert comp.decided_by.figure() == "refused 8 vs 0"
    assert not any(s.geomean for s in analysis.summaries)  # a capacity is no speed-up in the geomean
    lines = EXPERIMENTS["rpi64"].explain(analysis)
    (line,) = [ln for ln in lines if ln.startswith("maxalloc:")]
    assert line == ("maxalloc: largest buffer of the 2,880 MiB asked for (3 GB): i386 2,560 MiB, all of it in 0 of 8 "
                    "rounds; amd64 2,880 MiB, all of it in 8 of 8 rounds; verdict: worse; the write-up: a 3 GB "
                    "buffer worked in 64-bit and ran out of memory in 32-bit")


def test_sides_that_both_get_it_are_the_same() -> None:
    run, trials = run_of(2880, 2880)
    (comp,) = [c for c in analyze(run, trials).comparisons if c.headline]
    assert comp.verdict is Verdict.SAME and comp.decided_by is None


def test_rpi64_asks_for_the_write_ups_3_gb_rounded_up_to_the_step() -> None:
    params = EXPERIMENTS["rpi64"].settings().params["maxalloc"]
    assert params["limit_mib"] == BUFFER_MIB and BUFFER_MIB % 64 == 0
    assert BUFFER_MIB - 64 < 3_000_000_000 / 2**20 <= BUFFER_MIB


def test_a_buffer_set_on_the_command_line_is_the_one_the_paragraph_names() -> None:
    import dataclasses

    run, trials = run_of(1024, 1024)
    run = dataclasses.replace(run, params={"maxalloc": {"limit_mib": 1024}},
                              settings=dataclasses.replace(run.settings, overrides={"maxalloc": {"limit_mib": 1024}}))
    (line,) = [ln for ln in EXPERIMENTS["rpi64"].explain(analyze(run, trials)) if ln.startswith("maxalloc:")]
    assert line.startswith("maxalloc: largest buffer of the 1,024 MiB asked for (not the write-up's 3 GB, 2,880 MiB): ")

"""A bandwidth above a throttled link: a cache artefact unless compsize's ratio explains it,
flagged through the analysis for the baseline's and the configuration's trials."""

from __future__ import annotations

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.judge.analysis import analyze
from shootout.judge.ceiling import MARGIN, ceiling_flags
from shootout.workloads.ddwrite import DdWrite

LINK = 30_000_000


def trial(r: int, config: str, values: dict[str, float], throttled: bool = True) -> Trial:
    in_force = {"throttle": {"read_bps": LINK, "write_bps": LINK}} if throttled else {}
    return Trial(TrialSpec(r, 0, "dd-write", config), values, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0, in_force=in_force)


def test_within_the_link_and_its_margin_nothing_is_flagged():
    trials = [trial(r, "ext4", {"corpus_mbps": 30 * (1 + MARGIN) - 0.1}) for r in range(1, 7)]
    assert ceiling_flags(trials, "corpus_mbps", "MB/s") == []
    unthrottled = [trial(r, "ext4", {"corpus_mbps": 900.0}, throttled=False) for r in range(1, 7)]
    assert ceiling_flags(unthrottled, "corpus_mbps", "MB/s") == []  # no ceiling known
    assert ceiling_flags(trials, "corpus_mbps", "x") == []  # not a bandwidth


def test_above_the_link_without_compression_is_a_cache_artefact():
    trials = [trial(1, "ext4", {"corpus_mbps": 25.0}), trial(2, "ext4", {"corpus_mbps": 80.0})]
    (flag,) = ceiling_flags(trials, "corpus_mbps", "MB/s")
    assert flag.startswith("cache artefact: ext4 1/2 trials above the 30 MB/s link") and "80.0 MB/s" in flag


def test_compression_explains_a_figure_up_to_the_link_times_its_own_ratio():
    zeros = [trial(r, "zstd", {"zeros_mbps": 120.0, "zeros_compress_x": 30.0, "corpus_compress_x": 1.0})
             for r in range(1, 5)]
    (flag,) = ceiling_flags(zeros, "zeros_mbps", "MB/s")
    assert flag.startswith("compression: zstd 4/4 trials above the 30 MB/s link")
    # The same rate with a file that compressed only 2x: more than 60 MB/s + margin is a cache.
    poor = [trial(1, "zstd", {"zeros_mbps": 120.0, "zeros_compress_x": 2.0, "compress_x": 40.0})]
    assert ceiling_flags(poor, "zeros_mbps", "MB/s")[0].startswith("cache artefact: zstd 1/1")
    # A metric without a file of its own (fio) uses the trial's compress_x.
    fio = [trial(1, "zstd", {"seq_write_mbps": 70.0, "compress_x": 3.0})]
    assert ceiling_flags(fio, "seq_write_mbps", "MB/s")[0].startswith("compression: zstd 1/1")


def test_the_analysis_flags_the_pair_of_its_comparison():
    trials = []
    for r in range(1, 9):
        trials += [trial(r, "ext4", {"zeros_mbps": 28.0 + r / 10, "corpus_mbps": 27.0 + r / 10}),
                   trial(r, "zstd", {"zeros_mbps": 120.0 + r, "zeros_compress_x": 30.0,
                                     "corpus_mbps": 90.0 + r, "corpus_compress_x": 1.6})]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("ext4"), Config("zstd")], [DdWrite.spec],
              {"dd-write": {}}, RunFacts())
    comps = {c.metric: c for c in analyze(run, trials).comparisons}
    assert any(f.startswith("compression: zstd 8/8") for f in comps["zeros_mbps"].flags)
    assert any(f.startswith("cache artefact: zstd 8/8") for f in comps["corpus_mbps"].flags)  # 90 > 30×1.6×1.1
    assert not any(f.startswith("cache artefact: ext4") for c in comps.values() for f in c.flags)


def test_a_requests_per_second_limit_is_not_taken_for_the_links_bandwidth():
    def with_limits(limits: dict[str, int]) -> list[Trial]:
        return [Trial(TrialSpec(r, 0, "dd-write", "ext4"), {"corpus_mbps": 29.0}, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0,
                      in_force={"throttle": limits}) for r in range(1, 4)]

    both = with_limits({"read_bps": LINK, "write_bps": LINK, "read_iops": 2972, "write_iops": 2702})
    assert ceiling_flags(both, "corpus_mbps", "MB/s") == []  # 29 MB/s is within 30 MB/s
    assert ceiling_flags(with_limits({"read_iops": 2972, "write_iops": 2702}), "corpus_mbps", "MB/s") == []

"""The pi3desk experiment's paragraph: ratios with intervals, compsize per algorithm, the flags' meaning."""

from __future__ import annotations

from shootout.analysis import analyze
from shootout.experiments.pi3desk import explain
from shootout.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.workloads.ddwrite import DdWrite


def trial(r: int, config: str, values: dict[str, float]) -> Trial:
    return Trial(TrialSpec(r, 0, "dd-write", config), values, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0,
                 in_force={"throttle": {"read_bps": 30_000_000, "write_bps": 30_000_000}})


def test_the_paragraph_sets_each_algorithm_row_beside_the_ratios():
    trials = []
    for r in range(1, 9):
        trials += [trial(r, "ext4", {"zeros_mbps": 28.0 + r / 10, "corpus_mbps": 27.0 + r / 10}),
                   trial(r, "zstd", {"zeros_mbps": 120.0 + r, "zeros_compress_x": 30.0, "zeros_zstd_raw_mib": 128.0,
                                     "zeros_zstd_x": 30.0, "corpus_mbps": 45.0 + r / 10, "corpus_compress_x": 1.6,
                                     "corpus_zstd_raw_mib": 80.0, "corpus_zstd_x": 2.9, "corpus_none_raw_mib": 48.0})]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("ext4"), Config("zstd")], [DdWrite.spec],
              {"dd-write": {}}, {})
    text = "\n".join(explain(analyze(run, trials)))
    assert "zeros 4.4× [" in text and "realistic data 1.7× [" in text
    assert "corpus: none 38% of the data, zstd 62% of the data at 2.90×" in text
    assert "zeros: zstd 100% of the data at 30.00×" in text
    assert "'cache artefact' when even that does not" in text

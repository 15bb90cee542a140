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


def test_the_writeback_tuning_is_set_beside_the_same_filesystem_without_it():
    """btrfs-zlib-dirty against btrfs-zlib, the baseline (ext4) cancelling round by round."""
    from shootout.experiments.pi3desk import DIRTY, TUNED, UNTUNED

    trials = []
    for r in range(1, 9):
        trials += [trial(r, "ext4", {"zeros_mbps": 28.0 + r, "corpus_mbps": 27.0}),
                   trial(r, UNTUNED, {"zeros_mbps": 100.0 + r, "corpus_mbps": 40.0 + r / 10}),
                   trial(r, TUNED, {"zeros_mbps": 150.0 + 1.5 * r, "corpus_mbps": 40.0 + r / 10})]
    configs = [Config("ext4"), Config(UNTUNED), Config(TUNED, parts={"settings": {"sysctl": DIRTY}})]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [DdWrite.spec], {"dd-write": {}}, {})
    (line,) = [ln for ln in explain(analyze(run, trials)) if ln.startswith("E's writeback tuning")]
    assert "(vm.dirty_ratio=50, vm.dirty_background_ratio=1)" in line
    assert "zeros 1.50× [1.50, 1.50]; realistic data 1.00× [1.00, 1.00]" in line


def test_pi3desk_has_the_write_ups_tuning_as_a_configuration():
    from shootout.experiments import EXPERIMENTS

    configs = EXPERIMENTS["pi3desk"].settings().configs
    assert configs["btrfs-zlib-dirty"].parts["settings"] == {"sysctl": {"vm.dirty_ratio": "50",
                                                                       "vm.dirty_background_ratio": "1"}}
    assert configs["btrfs-zlib-dirty"].parts["scratch"] == configs["btrfs-zlib"].parts["scratch"]

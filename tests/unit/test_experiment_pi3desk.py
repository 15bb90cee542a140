"""The pi3desk experiment's paragraph: ratios with intervals, compsize per algorithm, the flags' meaning."""

from __future__ import annotations

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.experiments.pi3desk import explain
from shootout.judge.analysis import analyze
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
              {"dd-write": {}}, RunFacts())
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
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [DdWrite.spec], {"dd-write": {}}, RunFacts())
    (line,) = [ln for ln in explain(analyze(run, trials)) if ln.startswith("E's writeback tuning")]
    assert "(vm.dirty_ratio=50, vm.dirty_background_ratio=1)" in line
    assert "zeros 1.50× [1.50, 1.50]; realistic data 1.00× [1.00, 1.00]" in line


def test_pi3desk_has_the_write_ups_tuning_as_a_configuration():
    from shootout.experiments import EXPERIMENTS

    configs = EXPERIMENTS["pi3desk"].settings().configs
    assert configs["btrfs-zlib-dirty"].parts["settings"] == {"sysctl": {"vm.dirty_ratio": "50",
                                                                       "vm.dirty_background_ratio": "1"}}
    assert configs["btrfs-zlib-dirty"].parts["scratch"] == configs["btrfs-zlib"].parts["scratch"]


def _why_analysis(zeros_ext4: float = 29.5, zeros_zlib: float = 500.0):
    from shootout.workloads.fio import Fio

    throttle = {"throttle": {"bps": 30_000_000, "with_memory": False}}
    trials = []
    for r in range(1, 9):
        trials += [trial(r, "ext4", {"zeros_mbps": zeros_ext4 + r / 10, "corpus_mbps": 29.0 + r / 10}),
                   trial(r, "btrfs-zlib", {"zeros_mbps": zeros_zlib + r, "zeros_compress_x": 32.0,
                                           "corpus_mbps": 80.0 + r / 10, "corpus_compress_x": 2.63}),
                   Trial(TrialSpec(r, 0, "fio", "ext4"), {"geomean": 400.0 + r}, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0),
                   Trial(TrialSpec(r, 0, "fio", "btrfs-zlib"), {"geomean": 350.0 + r, "compress_x": 1.0},
                         5.0, 0.5, 0.1, 1, 1, 0, "", 0.0)]
    facts = RunFacts(machine={"cpu_model": "Example CPU 9000", "clock_mhz": [[1, 4300.0, 0.0], [2, 4320.0, 0.0]]},
                     sides={"ext4": {"workloads": {"fio": {"direct": True}}},
                            "btrfs-zlib": {"workloads": {"fio": {"direct": False}}}})
    configs = [Config("ext4", parts=throttle), Config("btrfs-zlib", label="btrfs compress=zlib", parts=throttle)]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [DdWrite.spec, Fio.spec], {}, facts)
    return analyze(run, trials)


def test_the_paragraph_says_the_zeros_rate_was_the_cpus_not_the_links():
    lines = explain(_why_analysis())
    (zeros,) = [ln for ln in lines if ln.startswith("zeros: ")]
    assert "btrfs compress=zlib 504 MB/s (16.8× the link; at its compsize ratio 32.00× the link carries 960 MB/s: " \
           "set by this side of the link)" in zeros
    assert "on this CPU set the rate: Example CPU 9000 (measured ~4,310 MHz)" in zeros
    assert "E's 123 MB/s (4.1× its 30 MB/s link)" in zeros and "Cortex-A53" in zeros
    # at what the link carries compressed, the link is the bound, and no CPU is blamed
    bound = [ln for ln in explain(_why_analysis(zeros_zlib=950.0)) if ln.startswith("zeros: ")][0]
    assert "set by the link)" in bound and "on this CPU set the rate" not in bound


def test_the_paragraph_sets_the_corpus_beside_e_s_desktop_data_and_names_fio_s_io_paths():
    lines = explain(_why_analysis())
    text = "\n".join(lines)
    assert "dd-write corpus 38% on disk (E's desktop data: 63%)" in text
    (corpus,) = [ln for ln in lines if ln.startswith("realistic data: ")]
    assert "30% text, 30% C-like source, 30% binary records, 10% random bytes" in corpus
    assert "took btrfs compress=zlib 38% of its size on disk; E's desktop data took 63% (its zlib extents 42%)" in corpus
    assert "a 30 MB/s link carries at most 48 MB/s of it" in corpus
    (fio,) = [ln for ln in lines if ln.startswith("fio: ")]
    assert fio.startswith("fio: ext4 with O_DIRECT, btrfs compress=zlib buffered with end_fsync")
    assert "fio's data is incompressible (compsize 1.00×)" in fio

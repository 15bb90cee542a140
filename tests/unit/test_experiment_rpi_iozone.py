"""The rpi-iozone experiment: E's devices emulated (a link and a per-request limit derived from E's
4k rows), and a paragraph that says of each row whether the link bound it, against E's figure."""

from __future__ import annotations

import pytest

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec

from shootout.base.runfacts import RunFacts
from shootout.experiments import EXPERIMENTS
from shootout.experiments.rpi_iozone import DEVICES, bound_kib, explain, reading
from shootout.judge.analysis import analyze
from shootout.workloads.iozone import COLUMNS, RECORDS, Iozone

SSD = DEVICES[0]
LIMITS = {"read_bps": 30_000_000, "write_bps": 30_000_000, "read_iops": 2973, "write_iops": 2702}


def values(r: int) -> dict[str, float]:
    out = {}
    for record in RECORDS:
        for column in COLUMNS:
            out[f"{column}_{record}"] = bound_kib(SSD, f"{column}_{record}") * (0.98 + r / 1000)
    out["read_512k"] = 1_400_000.0 + r  # this disk's cache, not the link
    out["rewrite_4k"] = 5_000.0 + r  # slower than the link allows
    return out


def analysis(names: tuple[str, str] = ("amd64-ssd", "i386-ssd")):
    trials = []
    for r in range(1, 9):
        for config in names:
            v = values(r)
            v["geomean"] = 1.0
            from statistics import geometric_mean
            v["geomean"] = geometric_mean(x for k, x in v.items() if k != "geomean")
            trials.append(Trial(TrialSpec(r, 0, "iozone", config), v, 15.0, 0.5, 0.5, 1, 1, 0, "", 0.0,
                                in_force={"throttle": LIMITS}))
    configs = [Config(n) for n in names]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), configs, [Iozone.spec], {"iozone": {}}, RunFacts())
    return analyze(run, trials)


def test_the_devices_limits_come_from_e_s_own_4k_rows():
    assert SSD.iops() == {"read": round((11881 + 12764 + 11026) / 3 / 4), "write": round((10885 + 11722 + 9815) / 3 / 4)}
    assert DEVICES[1].iops() == {"read": round(9279 / 4), "write": round((3061 + 3346) / 2 / 4)}
    assert bound_kib(SSD, "write_4k") == 2702 * 4 and bound_kib(SSD, "read_16m") == pytest.approx(30e6 / 1024)
    assert bound_kib(SSD, "geomean") is None


def test_the_experiment_runs_both_userspaces_behind_the_emulated_ssd_link():
    settings = EXPERIMENTS["rpi-iozone"].settings()
    native, companion = settings.run["configs"]
    for name in (native, companion):
        parts = settings.configs[name].parts
        assert parts["throttle"]["bps"] == 30_000_000 and parts["throttle"]["iops"] == SSD.iops()
        assert parts["scratch"]["fs"] == "ext4"
    sd = [c for n, c in settings.configs.items() if n.endswith("-sd")]
    assert len(sd) == 2 and all(c.parts["throttle"]["bps"] == 20_000_000 for c in sd)


def test_each_row_says_whether_the_link_bound_it_beside_e_s_figure():
    lines = explain(analysis())
    text = "\n".join(lines)
    assert "for scale" not in text
    (write,) = [ln for ln in lines if ln.startswith("write_4k:")]
    assert ("the link allows 10,808 KiB/s (2,702 writes/s × 4k): both bound by it (set by construction: only "
            "the ratio is measured); E's USB SSD 10,885 kB/s") in write
    (read16,) = [ln for ln in lines if ln.startswith("read_16m:")]
    assert "the link allows 29,297 KiB/s (30 MB/s): both bound by it;" in read16
    assert "E's USB SSD about 28,700–31,600 kB/s across the tests" in read16
    (cached,) = [ln for ln in lines if ln.startswith("read_512k:")]
    assert "both above it (4779%): more than the link carries, flagged as a cache artefact" in cached and "E gives no 512k read figure" in cached
    (slow,) = [ln for ln in lines if ln.startswith("rewrite_4k:")]
    assert "both below it (46%)" in slow
    assert any(ln.startswith("emulated: E's Pi 3 USB SSD (D gives no figures): a 30 MB/s link and 2,973 reads/s")
               for ln in lines)


def test_a_row_above_the_links_bandwidth_carries_the_ceiling_flag_in_the_table():
    (comp,) = [c for c in analysis().comparisons if c.metric == "read_512k"]
    assert any(f.startswith("cache artefact: amd64-ssd 8/8 trials above the 30 MB/s link") for f in comp.flags)


def test_reading_of_one_side():
    assert reading(SSD, "read_16m", 29_000.0) == "bound by it"
    assert reading(SSD, "read_16m", 40_000.0).startswith("above it (137%): more than the link carries")
    assert reading(SSD, "read_16m", 20_000.0).startswith("below it (68%)")
    assert reading(SSD, "geomean", 1.0) == ""


def test_the_why_line_names_the_emulated_per_request_limit():
    parts = {"throttle": {"bps": 30_000_000, "iops": {"read": 2973, "write": 2702}}}
    result = analysis()
    result = type(result)(**{**result.__dict__, "configs": tuple(Config(c.name, parts=parts) for c in result.configs)})
    said = "\n".join(EXPERIMENTS["rpi-iozone"].explain(result))
    assert "(amd64-ssd 30 MB/s, 2,973 reads/s, 2,702 writes/s, i386-ssd 30 MB/s" in said
    assert "its requests-per-second limit stands in for the bridge's cost per request" in said


def test_a_side_on_another_device_is_said_once_not_compared_row_by_row():
    lines = [ln for ln in explain(analysis(("amd64-ssd", "i386-sd"))) if "different devices" in ln]
    assert lines == ["i386-sd vs amd64-ssd: different devices, not a 64-vs-32 comparison (run its pair alone: "
                     "-c i386-sd -c ...)"]

"""Phoronix Test Suite composite.xml import: the hand-made file from the documented schema, and broken ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import Run
from shootout.base.units import UNITS
from shootout.importers import detect, import_foreign
from shootout.importers.phoronix import import_phoronix, scale_unit

COMPOSITE = Path(__file__).parents[1] / "fixtures" / "report" / "imports" / "composite.xml"


def test_every_system_result_and_run_value_is_imported():
    run, trials = import_phoronix(COMPOSITE)
    assert isinstance(run, Run) and run.id == 0 and run.status == "complete"
    assert [c.name for c in run.configs] == ["amd64", "i386"]
    assert [w.name for w in run.workloads] == [
        "7-Zip Compression: Test: Compression Rating",
        "7-Zip Compression: Test: Decompression Rating",
        "C-Ray: Resolution: 4K - Rays Per Pixel: 16",
        "RAMspeed SMP: Type: Copy - Benchmark: Integer",
    ]
    units = [w.metrics[0].unit for w in run.workloads]
    assert units == ["MIPS", "MIPS", "s", "MB/s"]
    assert UNITS["s"].direction == "lower" and UNITS["MIPS"].direction == "higher"
    # Every value of every RawString becomes one trial, numbered by its position.
    text = COMPOSITE.read_text()
    raw = re.findall(r"<RawString>(.*?)</RawString>", text)
    assert len(trials) == sum(len(r.split(":")) for r in raw) == 48
    first = [t for t in trials if t.spec.config == "amd64" and t.spec.workload == run.workloads[0].name]
    assert [t.values["result"] for t in first] == [float(v) for v in raw[0].split(":")]
    assert [t.spec.round for t in first] == [1, 2, 3, 4, 5, 6]
    assert all(t.ok and not t.spec.warmup for t in trials)
    positions = {(t.spec.round, t.spec.position) for t in trials}
    assert len(positions) == len(trials)  # unique position within each round


def test_facts_params_and_note():
    run, _ = import_phoronix(COMPOSITE)
    assert run.facts.side("amd64")["software"]["userspace"] == "x86_64"
    assert run.facts.side("i386")["software"]["userspace"] == "i686"
    assert run.facts.side("amd64")["hardware"]["processor"].startswith("Intel Xeon")
    assert run.params["C-Ray: Resolution: 4K - Rays Per Pixel: 16"]["app_version"] == "1.1"
    assert "not interleaved" in run.note
    assert run.created_at == 1714674667.0  # LastModified 2024-05-02 18:31:07 read as UTC


def test_detected_by_content():
    assert detect(COMPOSITE) == "phoronix"
    run, trials = import_foreign(COMPOSITE)
    assert len(run.configs) == 2 and trials


def test_scales_map_to_units_and_direction_is_checked():
    assert scale_unit("Seconds", "LIB", "x") == "s"
    assert scale_unit("MB/s", "HIB", "x") == "MB/s"
    assert scale_unit("Mbits/sec", "HIB", "x") == "Mbit/s"
    assert scale_unit("Frames Per Second", "HIB", "x") == "fps"
    with pytest.raises(UsageError, match="lower is better but the file says HIB"):
        scale_unit("Seconds", "HIB", "x")
    with pytest.raises(UsageError, match="no shootout unit"):
        scale_unit("Furlongs Per Fortnight", "HIB", "x")
    with pytest.raises(UsageError, match="HIB or LIB"):
        scale_unit("MB/s", "SIDEWAYS", "x")


def _broken(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    text = COMPOSITE.read_text()
    assert old in text
    path = tmp_path / "composite.xml"
    path.write_text(text.replace(old, new, count))
    return path


@pytest.mark.parametrize("old, new, message", [
    ("</PhoronixTestSuite>", "", "not well-formed XML"),
    ("<PhoronixTestSuite>", "<Other>", "not well-formed XML"),
    ("<RawString>41813:", "<RawString>fast:", "'fast' is not a number"),
    ("<RawString>41813:", "<RawString>-5:", "not a positive finite number"),
    ("<Identifier>i386</Identifier>\n        <Value>", "<Identifier>arm64</Identifier>\n        <Value>", "unknown system 'arm64'"),
    ("<Scale>MIPS</Scale>", "<Scale>Furlongs Per Fortnight</Scale>", "no shootout unit"),
    ("<Proportion>LIB</Proportion>", "<Proportion>HIB</Proportion>", "file says HIB"),
    ("<Identifier>amd64</Identifier>\n    <TestClientVersion>", "<Identifier>i386</Identifier>\n    <TestClientVersion>", "two systems"),
])
def test_broken_files_are_one_line_usage_errors(tmp_path, old, new, message):
    path = _broken(tmp_path, old, new)
    with pytest.raises(UsageError, match=re.escape(message)) as err:
        import_phoronix(path)
    assert "\n" not in str(err.value)


def test_wrong_root_element(tmp_path):
    path = tmp_path / "other.xml"
    path.write_text("<?xml version='1.0'?><TestSuite><Result/></TestSuite>")
    with pytest.raises(UsageError, match="not <PhoronixTestSuite>"):
        import_phoronix(path)
    with pytest.raises(UsageError, match="not a file shootout can import"):
        import_foreign(path)


def test_no_results_and_no_systems(tmp_path):
    text = COMPOSITE.read_text()
    no_results = tmp_path / "a.xml"
    no_results.write_text(re.sub(r"<Result>.*</Result>", "", text, flags=re.DOTALL))
    with pytest.raises(UsageError, match="no <Result>"):
        import_phoronix(no_results)
    no_systems = tmp_path / "b.xml"
    no_systems.write_text(re.sub(r"<System>.*</System>", "", text, flags=re.DOTALL))
    with pytest.raises(UsageError, match="no <System>"):
        import_phoronix(no_systems)


def test_non_numeric_results_are_listed_not_dropped_silently(tmp_path):
    path = _broken(tmp_path, "<DisplayFormat>BAR_GRAPH</DisplayFormat>", "<DisplayFormat>PASS_FAIL</DisplayFormat>")
    run, _ = import_phoronix(path)
    assert len(run.workloads) == 3
    assert "Compression Rating (PASS_FAIL)" in run.note


def test_value_without_rawstring_is_one_trial(tmp_path):
    text = COMPOSITE.read_text()
    path = tmp_path / "c.xml"
    path.write_text(re.sub(r"<RawString>[^<]*</RawString>", "<RawString/>", text, count=1))
    run, trials = import_phoronix(path)
    first = [t for t in trials if t.spec.config == "amd64" and t.spec.workload == run.workloads[0].name]
    assert [t.values["result"] for t in first] == [42102.0]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        import_phoronix(tmp_path / "absent.xml")
    with pytest.raises(UsageError, match="is a directory"):
        import_phoronix(tmp_path)


def test_load_results_gives_data_the_store_accepts(tmp_path):
    from shootout.importers import load_results
    from shootout.store.results import from_results, to_results

    data = load_results(COMPOSITE)
    run, trials = from_results(data)  # the store's own validation of a results file
    assert [c.name for c in run.configs] == ["amd64", "i386"] and len(trials) == 48
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(to_results(run, trials)))
    again = load_results(exported)  # a shootout results file passes through unchanged
    assert again["run"] == data["run"] and len(again["trials"]) == 48

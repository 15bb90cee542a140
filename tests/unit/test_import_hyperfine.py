"""hyperfine --export-json import: files produced by hyperfine 1.15 (Debian 12), and broken ones."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.importers import detect, import_foreign
from shootout.importers.hyperfine import import_hyperfine
from shootout.judge.analysis import WITHIN_RUN, analyze
from shootout.stats import unpaired_estimate

IMPORTS = Path(__file__).parents[1] / "fixtures" / "report" / "imports"


def test_each_command_is_a_configuration_each_time_a_trial():
    doc = json.loads((IMPORTS / "hyperfine.json").read_text())
    run, trials = import_hyperfine(IMPORTS / "hyperfine.json")
    assert run.id == 0 and run.status == "complete"
    assert [c.name for c in run.configs] == [r["command"] for r in doc["results"]]
    (spec,) = run.workloads
    assert spec.name == "hyperfine" and spec.metrics[0].unit == "s" and spec.headline == "wall"
    for result in doc["results"]:
        mine = sorted((t for t in trials if t.spec.config == result["command"]), key=lambda t: t.spec.round)
        assert [t.values["wall"] for t in mine] == result["times"]
        assert [t.wall_s for t in mine] == result["times"]
        assert [t.spec.round for t in mine] == list(range(1, len(result["times"]) + 1))
    assert run.facts.side(run.configs[0].name)["mean_user_s"] == doc["results"][0]["user"]
    assert "not interleaved" in run.note


def test_sequential_runs_are_analysed_as_two_independent_samples():
    # hyperfine ran all of A, then all of B: no round pairs them, so no paired interval either.
    run, trials = import_hyperfine(IMPORTS / "hyperfine.json")
    assert not run.settings.interleaved
    analysis = analyze(run, trials)
    comp = analysis.comparisons[0]
    a = [math.log(1 / t.values["wall"]) for t in trials if t.spec.config == comp.baseline]
    b = [math.log(1 / t.values["wall"]) for t in trials if t.spec.config == comp.config]
    plain = unpaired_estimate(a, b)
    assert not comp.paired and comp.log_ratios == {} and comp.estimate.method == plain.method
    assert (comp.estimate.low, comp.estimate.high) == (plain.low, plain.high)  # one comparison: no adjustment
    assert WITHIN_RUN in comp.flags and any(WITHIN_RUN in n for n in analysis.notes)
    # one workload: the geomean is that workload's estimate, method and all
    assert analysis.summaries[0].note == WITHIN_RUN and analysis.summaries[0].geomean == comp.estimate


def test_parameter_scan_keeps_parameters_as_facts():
    run, trials = import_hyperfine(IMPORTS / "hyperfine-params.json")
    assert len(run.configs) == 3
    assert [run.facts.side(c.name)["parameters"]["level"] for c in run.configs] == ["1", "2", "3"]
    assert len(trials) == 18


def test_failed_runs_are_kept_as_failed_trials():
    doc = json.loads((IMPORTS / "hyperfine-failing.json").read_text())
    _run, trials = import_hyperfine(IMPORTS / "hyperfine-failing.json")
    codes = doc["results"][0]["exit_codes"]
    failing = sorted((t for t in trials if t.spec.config == doc["results"][0]["command"]), key=lambda t: t.spec.round)
    assert [t.exit_status for t in failing] == codes
    assert [t.ok for t in failing] == [c == 0 for c in codes]
    assert all(t.values == {} and "status" in t.error for t in failing if t.exit_status)
    assert len(trials) == sum(len(r["times"]) for r in doc["results"])


def test_detected_by_content():
    assert detect(IMPORTS / "hyperfine.json") == "hyperfine"
    run, _ = import_foreign(IMPORTS / "hyperfine.json")
    assert run.workloads[0].name == "hyperfine"


def test_duplicate_commands_get_distinct_names(tmp_path):
    doc = json.loads((IMPORTS / "hyperfine.json").read_text())
    doc["results"].append(dict(doc["results"][0]))
    path = tmp_path / "dup.json"
    path.write_text(json.dumps(doc))
    run, _ = import_hyperfine(path)
    names = [c.name for c in run.configs]
    assert len(set(names)) == 3 and names[2] == names[0] + " (2)"


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ("[]", "no \"results\" list"),
    ('{"results": []}', "\"results\" is empty"),
    ('{"results": [{"mean": 1.0}]}', "no \"command\" string"),
    ('{"results": [{"command": "a", "mean": 1.0}]}', "no \"times\" list"),
    ('{"results": [{"command": "a", "times": [0.1, "x"]}]}', "'x' is not a number"),
    ('{"results": [{"command": "a", "times": [0.1, -2]}]}', "not a positive finite number"),
    ('{"results": [{"command": "a", "times": [0.1, 0.2], "exit_codes": [0]}]}', "does not match"),
])
def test_broken_files_are_one_line_usage_errors(tmp_path, content, message):
    path = tmp_path / "h.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=re.escape(message)) as err:
        import_hyperfine(path)
    assert "\n" not in str(err.value)


def test_unknown_json_is_not_importable(tmp_path):
    path = tmp_path / "other.json"
    path.write_text('{"benchmarks": [1, 2]}')
    assert detect(path) is None
    with pytest.raises(UsageError, match="not a file shootout can import"):
        import_foreign(path)


def test_load_results_gives_data_the_store_accepts():
    from shootout.importers import load_results
    from shootout.store.results import from_results

    run, trials = from_results(load_results(IMPORTS / "hyperfine-failing.json"))
    assert len(run.configs) == 2 and sum(not t.ok for t in trials) == 3

"""Named experiments: each parses, selects real workloads, and explains results beside its write-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from shootout.base.errors import UsageError
from shootout.base.model import RunSettings
from shootout.configs.specs import load_text
from shootout.experiments import EXPERIMENTS, experiment
from shootout.experiments.sizing import WRITEUP_SIZE
from shootout.request.preparation import prepare
from shootout.request.request import Wish, build_request
from shootout.workloads.catalogue import REGISTRY


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_selects_known_workloads_with_known_params(name):
    settings = EXPERIMENTS[name].settings()
    selected = list(settings.run.get("workloads", []))
    assert selected or settings.run.get("suite"), f"{name} selects nothing"
    for workload in selected:
        assert workload in REGISTRY or workload in settings.workloads, workload
    assert set(settings.params) <= set(selected)
    for workload, found in EXPERIMENTS[name].found.items():
        assert workload in selected and found


def test_an_experiment_is_the_request_a_file_would_make():
    request = build_request(Wish(configs=["host"], experiment="rpi64", settings=RunSettings()), lambda _: None)
    assert [w.spec.name for w in request.workloads] == ["intmix", "sha1-sparse", "membw", "maxalloc", "lame", "flac"]


def test_file_and_experiment_together_are_refused(tmp_path: Path):
    (tmp_path / "s.toml").write_text("[run]\nworkloads = ['intmix']\n")
    with pytest.raises(UsageError, match="--file and --experiment"):
        build_request(Wish(configs=["host"], file=tmp_path / "s.toml", experiment="rpi64"), lambda _: None)


def test_unknown_experiment_names_the_list_command():
    with pytest.raises(UsageError) as caught:
        experiment("nosuch")
    assert "shootout experiments" in caught.value.hint


def test_params_tables_set_parameters_of_selected_workloads_only(tmp_path: Path):
    toml = tmp_path / "s.toml"
    toml.write_text("[run]\nworkloads = ['intmix']\n[params.intmix]\niterations = 12345\n")
    request = build_request(Wish(configs=["host"], file=toml), lambda _: None)
    assert request.params["intmix"]["iterations"] == 12345
    toml.write_text("[run]\nworkloads = ['intmix']\n[params.ptrtree]\nnodes = 5\n")
    with pytest.raises(UsageError, match=r"\[params.ptrtree\] names a workload this run does not select"):
        build_request(Wish(configs=["host"], file=toml), lambda _: None)
    with pytest.raises(UsageError, match="must be a table"):
        load_text("params = { intmix = 3 }", "x")


def test_explanation_sets_each_headline_result_beside_the_write_up(analysis):
    lines = EXPERIMENTS["rpi64"].explain(analysis)
    heads = [c for c in analysis.comparisons if c.headline]
    assert lines[0].startswith("rpi64: A, ")
    assert len(lines) == 1 + len(heads)
    intmix = next(line for line in lines if line.startswith("intmix:"))
    assert "i386 userspace vs amd64 userspace" in intmix and "the write-up: Dhrystone, 64-bit faster" in intmix


def test_reports_show_the_explanation(analysis, tmp_path):
    import dataclasses

    from shootout.report.html import render_html
    from shootout.report.markdown import render_markdown

    explained = dataclasses.replace(analysis, explanation=("intmix: measured; the write-up: faster",))
    assert "- intmix: measured; the write-up: faster" in render_markdown(explained, {})
    assert "<li>intmix: measured; the write-up: faster</li>" in render_html(explained)


def test_kernel_modes_are_three_vms_refused_in_one_line_without_hardware_kvm(monkeypatch):
    from shootout.vm import kvm

    told: list[str] = []
    monkeypatch.setattr(kvm, "kvm_problem", lambda **_: "the CPU shows no vmx or svm flag")
    with pytest.raises(UsageError) as refused:
        prepare(build_request(Wish(experiment="kernel-modes", settings=RunSettings()), told.append), told.append)
    assert str(refused.value).startswith("no configuration can run here: vm:debian:bookworm:i386:686-pae, "
                                         "vm:debian:bookworm:i386:amd64, vm:debian:bookworm:amd64:amd64 cannot: "
                                         "no hardware KVM here")
    assert "--emulate" in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).count("no hardware KVM") == 1 and told == []  # one line, the reason once
    request = prepare(build_request(Wish(experiment="kernel-modes", settings=RunSettings(), emulate=True), told.append),
                      told.append)
    assert [c.name for c in request.configs] == ["vm:debian:bookworm:i386:686-pae", "vm:debian:bookworm:i386:amd64",
                                                 "vm:debian:bookworm:amd64:amd64"]
    assert all(c.option("emulate") == "yes" for c in request.configs)
    monkeypatch.setattr(kvm, "kvm_problem", lambda **_: None)
    assert len(prepare(build_request(Wish(experiment="kernel-modes", settings=RunSettings()), told.append),
                       told.append).configs) == 3


def test_rpi64_hashes_the_write_up_s_2_gb_only_at_its_size():
    from shootout.execution.placefacts import TargetFacts

    sha1 = REGISTRY["sha1-sparse"]()
    assert sha1.default_params(TargetFacts()) == {"size": 50_000_000}  # a rate: the size only sets its length
    assert "sha1-sparse" not in experiment("rpi64").settings().params  # the workload's own 50 MB
    assert experiment("rpi64").settings(WRITEUP_SIZE).params["sha1-sparse"] == {"size": 2_000_000_000}

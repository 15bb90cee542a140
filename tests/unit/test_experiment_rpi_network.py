"""rpi-network asks the write-up's questions only (64 vs 32 bits per test), through a built-in
workload under another name ([[workload]] builtin = ...), the vpn workload's tunnel parameter and
an experiment's own [run] threshold, which the user's --threshold overrides."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from shootout.base.errors import UsageError, WorkloadError
from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.configs.specs import load_text
from shootout.experiments import EXPERIMENTS
from shootout.experiments import writeup as experiments_base
from shootout.judge.analysis import analyze
from shootout.net.options import NetOptions
from shootout.parts.network import NetSession, _Wire
from shootout.places.host import HostTarget
from shootout.request import values as options
from shootout.request.request import make_workload, workloads_of
from shootout.request.settings import DEFAULT_THRESHOLD, Asked, resolve_settings
from shootout.workloads.contract import Context, Prepared
from shootout.workloads.net import TcpVeth
from shootout.workloads.vpn import Vpn

ALIASES = '''
[[workload]]
name = "vpn-openvpn"
builtin = "vpn"
'''


@pytest.fixture
def on_a_pc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(experiments_base, "host_arch", lambda: "amd64")
    monkeypatch.setattr(experiments_base, "kernel_arch", lambda: "amd64")


def test_its_headline_comparisons_are_64_vs_32_bits_for_each_test(on_a_pc: None) -> None:
    named = EXPERIMENTS["rpi-network"]
    settings = named.settings()
    assert settings.run["configs"] == ["amd64", "i386"]  # the baseline 64-bit, the other its 32-bit companion
    assert {n: c.userspace for n, c in settings.configs.items()} == {"amd64": "debian-bookworm-amd64",
                                                                      "i386": "debian-bookworm-i386"}
    assert settings.run["workloads"] == ["tcp-veth", "drop-rate", "vpn-wireguard", "vpn-openvpn"]
    assert named.family() == 4  # was 9: 4 configurations x 3 workloads, 6 of them A/A or mixed
    workloads = [make_workload(n, settings.workloads, "rpi-network") for n in settings.run["workloads"]]
    assert [type(w) for w in workloads[2:]] == [Vpn, Vpn]
    assert [settings.params[w.spec.name]["tunnel"] for w in workloads[2:]] == ["wireguard", "openvpn"]
    assert settings.params["tcp-veth"]["affinity"] and "threshold" in settings.run
    # each end of the OpenVPN tunnel on a CPU of its own; wireguard-go's goroutines keep both
    assert settings.params["vpn-openvpn"]["affinity"] == "auto" and "affinity" not in settings.params["vpn-wireguard"]
    assert named.plan().first_look <= named.plan().max_rounds


def test_a_builtin_workload_under_another_name_keeps_its_class_and_is_resumed_as_such() -> None:
    file = load_text(ALIASES, "f.toml")
    renamed = make_workload("vpn-openvpn", file.workloads)
    assert isinstance(renamed, Vpn) and renamed.spec.name == "vpn-openvpn"
    assert renamed.spec.metrics == Vpn.spec.metrics and renamed.spec.headline == Vpn.spec.headline
    assert Vpn.spec.name == "vpn"  # the class's own spec is untouched
    assert [w.spec.name for w in workloads_of(["vpn-openvpn", "vpn"], file.workloads)] == ["vpn-openvpn", "vpn"]


@pytest.mark.parametrize(("table", "message"), [
    ('name = "v2"\nbuiltin = "nosuch"', r"f.toml: workload v2: builtin = 'nosuch' is not a built-in workload"),
    ('name = "vpn"\nbuiltin = "vpn"', r"workload vpn is a built-in workload's own name"),
    ('name = "v2"\nbuiltin = "vpn"\ncommand = "true"', r"workload v2: command beside builtin"),
    ('name = "v 2"\nbuiltin = "vpn"', r"needs a name of letters"),
])
def test_a_bad_builtin_table_is_refused_when_the_file_is_read(table: str, message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        load_text(f"[[workload]]\n{table}\n", "f.toml")
    assert "\n" not in err.value.message


def _ctx(params: dict, vpn: str | None = None) -> Context:
    parts = {"network": {"vpn": vpn, "cipher": "CHACHA20-POLY1305"}} if vpn else {}
    return Context(HostTarget(Config(name="c", parts=parts)), "vpn-x", params)


def test_the_tunnel_parameter_sets_the_kind_and_keeps_the_configurations_other_options() -> None:
    assert Vpn.options(_ctx({"tunnel": "configuration"}, "openvpn")).vpn == "openvpn"
    assert Vpn.options(_ctx({}, "openvpn")).vpn == "openvpn"
    chosen = Vpn.options(_ctx({"tunnel": "wireguard"}, "openvpn"))
    assert (chosen.vpn, chosen.cipher) == ("wireguard", "CHACHA20-POLY1305")
    assert Vpn.options(_ctx({"tunnel": "openvpn"})) == NetOptions(vpn="openvpn")
    with pytest.raises(UsageError, match="vpn-x: tunnel = 'ipsec' is not a choice"):
        Vpn.options(_ctx({"tunnel": "ipsec"}))


class _Ns:
    def run(self, argv: list[str], what: str) -> str:
        return "cubic\n"


def test_in_force_names_each_tunnel_kind_the_configurations_workloads_bring_up() -> None:
    session = NetSession(journal=None)  # type: ignore[arg-type]
    side = SimpleNamespace(ns=_Ns())
    topo = SimpleNamespace(sides=(side, side))
    wg = {"kind": "wireguard", "implementation": "go", "release": "0.0.20250522"}
    ovpn = {"kind": "openvpn", "cipher": "AES-256-GCM"}
    session._wires[("amd64", "vpn-wireguard")] = _Wire(topo, None, wg, {"a": {}, "b": {}})  # type: ignore[arg-type]
    config = Config(name="amd64")
    assert session.in_force(config)["vpn"] == wg  # one tunnel: as a configuration's vpn setting says it
    session._wires[("amd64", "vpn-openvpn")] = _Wire(topo, None, ovpn, {"a": {}, "b": {}})  # type: ignore[arg-type]
    assert session.in_force(config)["vpn"] == {"wireguard": {"implementation": "go", "release": "0.0.20250522"},
                                               "openvpn": {"cipher": "AES-256-GCM"}}


def _options(threshold: str | None, experiment: str | None = None, file: Path | None = None) -> Asked:
    return Asked(threshold=threshold, experiment=experiment, file=file)


def _threshold(asked: Asked) -> float:
    return resolve_settings(asked).threshold


def test_the_threshold_is_the_users_else_the_run_tables_else_one_percent(on_a_pc: None, tmp_path: Path) -> None:
    assert _threshold(_options(None)) == DEFAULT_THRESHOLD == 0.01  # type: ignore[arg-type]
    assert _threshold(_options(None, "rpi64")) == 0.01  # type: ignore[arg-type]  # an experiment without one
    own = EXPERIMENTS["rpi-network"].threshold
    assert own is not None and own > 0.01
    assert _threshold(_options(None, "rpi-network")) == pytest.approx(own)  # type: ignore[arg-type]
    assert _threshold(_options("1%", "rpi-network")) == 0.01  # type: ignore[arg-type]  # the user's wins
    toml = tmp_path / "s.toml"
    toml.write_text('[run]\nthreshold = "3%"\n')
    assert _threshold(_options(None, file=toml)) == pytest.approx(0.03)  # type: ignore[arg-type]
    toml.write_text('[run]\nthreshold = "0%"\n')
    with pytest.raises(UsageError, match=r"s.toml: \[run\] threshold 0%: a verdict needs a threshold from 0.1%"):
        _threshold(_options(None, file=toml))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_an_experiments_own_threshold_parses_and_says_why(name: str) -> None:
    named = EXPERIMENTS[name]
    if named.threshold is None:
        assert not named.threshold_why
        return
    text = str(tomllib.loads(named.toml)["run"]["threshold"])
    assert options.threshold(text) == pytest.approx(named.threshold)
    assert len(named.threshold_why) > 20


def _analysis(threshold: float) -> object:
    spec = Vpn.spec
    trials = [Trial(TrialSpec(r, 0, "vpn", name), {"mbit_s": (900.0 if name == "amd64" else 600.0) + r},
                    5.0, 0.5, 0.1, 1, 1, 0, "", 0.0) for r in range(1, 9) for name in ("amd64", "i386")]
    run = Run(1, 0.0, "complete", RunSettings(threshold=threshold, max_rounds=8),
              [Config("amd64"), Config("i386")], [spec], {}, RunFacts(machine={}))
    return analyze(run, trials)


def test_the_explanation_says_which_threshold_the_run_used_and_why() -> None:
    named = EXPERIMENTS["rpi-network"]
    own = named.threshold
    assert own is not None
    lines = named.explain(_analysis(own))  # type: ignore[arg-type]
    said = next(line for line in lines if line.startswith("threshold"))
    assert said.startswith(f"threshold ±{own * 100:g}%: the experiment's own threshold") and named.threshold_why in said
    given = next(line for line in named.explain(_analysis(0.01)) if line.startswith("threshold"))  # type: ignore[arg-type]
    assert given.startswith("threshold ±1% (--threshold); the experiment's own threshold")
    assert not any(line.startswith("threshold") for line in EXPERIMENTS["vpn"].explain(_analysis(0.01)))  # type: ignore[arg-type]


def test_tcp_veth_pins_sender_and_receiver_when_asked() -> None:
    prepared = Prepared(files={"dir": "/w", "enter_a": "A", "enter_b": "B", "dev_a": "x", "dev_b": "y"})
    script = " ".join(TcpVeth().argv(prepared, {"seconds": 2, "parallel": 0, "affinity": "0,1"}))
    assert "iperf3 -c 192.0.2.2 -p 5201 -t 2 -P 1 -A 0,1 -J" in script
    assert " -A " not in " ".join(TcpVeth().argv(prepared, {"seconds": 2, "parallel": 0, "affinity": ""}))
    with pytest.raises(WorkloadError, match="tcp-veth: affinity = '0' is not two CPUs of this machine"):
        TcpVeth().argv(prepared, {"seconds": 2, "parallel": 0, "affinity": "0"})


def test_a_tunnels_daemons_are_pinned_one_cpu_a_side_when_asked() -> None:
    from shootout.net.tunnels import OpenVpn, WireGuard

    sides = (SimpleNamespace(enter="A", addr="192.0.2.1"), SimpleNamespace(enter="B", addr="192.0.2.2"))
    topo = SimpleNamespace(sides=sides, name=lambda suffix: f"sox{suffix}")
    ovpn = OpenVpn(topo, "AES-256-GCM")  # type: ignore[arg-type]
    lines = "\n".join(ovpn.up(*sides, ("0", "1")))  # type: ignore[arg-type]
    assert "B taskset -c 1 openvpn --config server.conf" in lines and "A taskset -c 0 openvpn --config client.conf" in lines
    assert "taskset" not in "\n".join(ovpn.up(*sides))  # type: ignore[arg-type]
    go = WireGuard(topo, "go")  # type: ignore[arg-type]
    assert "A taskset -c 0 ./wireguard-go -f soxta" in "\n".join(go.up(*sides, ("0", "1")))  # type: ignore[arg-type]


def test_a_renamed_vpn_workload_still_gets_the_why_it_may_differ_lines() -> None:
    import dataclasses

    spec = dataclasses.replace(Vpn.spec, name="vpn-wireguard")
    tunnel = {"tunnel": {"kind": "wireguard", "implementation": "go", "kernel_module": "no (x)"},
              "versions": {"wireguard-go": "wireguard-go 0.0.20250522"}}
    trials = [Trial(TrialSpec(r, 0, spec.name, name), {"mbit_s": (900.0 if name == "amd64" else 300.0) + r},
                    5.0, 0.5, 0.1, 1, 1, 0, "", 0.0) for r in range(1, 9) for name in ("amd64", "i386")]
    facts = RunFacts(machine={"cpu_flags": ["aes"], "virtualization": {"vm": "kvm"}},
                     sides={"amd64": {"workloads": {spec.name: tunnel}}, "i386": {"workloads": {spec.name: tunnel}}})
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config("amd64"), Config("i386")], [spec], {}, facts)
    said = "\n".join(EXPERIMENTS["rpi-network"].explain(analyze(run, trials)))
    assert "amd64: WireGuard in user space, wireguard-go 0.0.20250522" in said
    assert "i386: WireGuard in user space" in said
    assert "this CPU has AES instructions" in said and "virtual machine (kvm)" in said


def test_shootout_experiments_says_an_experiments_own_threshold() -> None:
    from shootout.experiments.limits import how_long

    named = EXPERIMENTS["rpi-network"]
    assert how_long(named, None)[-1] == f"threshold: ±{named.threshold * 100:g}% instead of 1% ({named.threshold_why})"  # type: ignore[operator]
    assert not any(line.startswith("threshold") for line in how_long(EXPERIMENTS["rpi64"], None))

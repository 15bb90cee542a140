"""The network part of a configuration (parsing and checking, no kernel), the tunnels' keys, and
the network workloads' declarations."""

from __future__ import annotations

import base64
import shutil

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.x509.oid import ExtendedKeyUsageOID

from shootout.base.errors import TargetError, ToolMissing, UsageError, WorkloadError
from shootout.base.model import Config
from shootout.base.units import UNITS
from shootout.configs import userspaces as userspace_configs
from shootout.configs.specs import load_file
from shootout.experiments import EXPERIMENTS
from shootout.experiments import writeup as experiments_base
from shootout.net import keys, offloads, rungs
from shootout.net.options import NetOptions, net_options
from shootout.net.topology import Topology
from shootout.parts import parse_parts
from shootout.parts.network import NetworkPart
from shootout.places.host import HostTarget
from shootout.storage.scratch import Scratches
from shootout.system.journal import Journal
from shootout.workloads.contract import Context
from shootout.workloads.net import DropRate, TcpVeth
from shootout.workloads.vpn import Vpn

PART = NetworkPart()


def test_defaults_are_the_articles_setting() -> None:
    options = NetOptions()
    assert (options.offloads, options.drop, options.vpn, options.cipher) == ("off", "tc", "wireguard", "AES-256-GCM")
    assert net_options(Config(name="plain")) == options
    assert parse_parts({"name": "plain"}, "f.toml") == {}


def test_tables_and_short_forms_from_a_config_table(tmp_path) -> None:
    parsed = PART.parse({"veth": {"offloads": "on"}, "drop": "xdp-native",
                         "vpn": {"kind": "openvpn", "cipher": "CHACHA20-POLY1305"}}, "f.toml")
    assert NetOptions(**parsed) == NetOptions(offloads="on", drop="xdp-native", vpn="openvpn",
                                              cipher="CHACHA20-POLY1305")
    assert PART.parse({"vpn": "openvpn"}, "f") == {"vpn": "openvpn"}
    assert PART.parse({"drop": {"rung": "nft"}, "net": {"pin": "mine"}}, "f") == {"drop": "nft", "pin": "mine"}
    f = tmp_path / "shootout.toml"
    f.write_text('[[config]]\nname = "wg"\nspec = "host"\nvpn = { kind = "wireguard", wireguard = "go" }\n')
    assert net_options(load_file(f).configs["wg"]) == NetOptions(vpn="wireguard", wireguard="go")


@pytest.mark.parametrize(("table", "message"), [
    ({"veth": {"offloads": "maybe"}}, r"f.toml: veth.offloads = 'maybe' is not a choice"),
    ({"drop": "iptables"}, r"drop.rung = 'iptables' is not a choice \(use one of: socket, nft, tc, xdp-generic"),
    ({"vpn": {"kind": "ipsec"}}, r"vpn.kind = 'ipsec'"),
    ({"vpn": {"kind": "openvpn", "cipher": "BF-CBC"}}, r"vpn.cipher = 'BF-CBC'"),
    ({"vpn": {"kind": "wireguard", "wireguard": "rust"}}, r"vpn.wireguard = 'rust'"),
    ({"vpn": {"kind": "openvpn", "wireguard": "go"}}, r"vpn.wireguard applies to kind = \"wireguard\" only"),
    ({"vpn": {"cipher": "AES-256-GCM"}}, r"vpn.cipher applies to kind = \"openvpn\" only"),
    ({"veth": {"offload": "off"}}, r"unknown key\(s\) in veth: offload \(allowed: offloads\)"),
    ({"veth": ["off"]}, r"veth must be a table or a string"),
    ({"net": {"pin": "Bad Name"}}, r"net.pin = 'Bad Name' is not a usable name"),
])
def test_bad_settings_are_one_line_errors(table: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        PART.parse(table, "f.toml")
    assert "\n" not in str(err.value)


def test_two_configurations_may_not_pin_the_same_name() -> None:
    configs = [Config(name=n, parts={"network": {"pin": "same"}}) for n in ("a", "b")]
    with pytest.raises(UsageError, match="two configurations of this run set the same net.pin"):
        PART.open(configs, Journal(), Scratches(configs, Journal()))


def test_a_workload_without_the_part_is_told_so() -> None:
    ctx = Context(HostTarget(Config(name="host")), "tcp-veth", {})
    with pytest.raises(WorkloadError, match="tcp-veth needs the run's network part, which is not open"):
        ctx.part("network")


def test_openvpn_certificates_chain_to_their_ca() -> None:
    pki = keys.openvpn_pki()
    ca = x509.load_pem_x509_certificate(pki["ca.crt"])
    for role, usage in (("server", ExtendedKeyUsageOID.SERVER_AUTH), ("client", ExtendedKeyUsageOID.CLIENT_AUTH)):
        cert = x509.load_pem_x509_certificate(pki[f"{role}.crt"])
        # the CA's key signed it (what verify_directly_issued_by checks, which Debian 12's cryptography 38 lacks)
        assert cert.issuer == ca.subject
        ca.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))
        assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [usage]
        assert b"PRIVATE KEY" in pki[f"{role}.key"]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_wireguard_public_key_belongs_to_the_private_one() -> None:
    key = keys.wireguard_key()
    private = x25519.X25519PrivateKey.from_private_bytes(base64.b64decode(key.private))
    assert base64.b64encode(private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)).decode() == key.public
    assert len(base64.b64decode(key.public)) == 32 and key != keys.wireguard_key()


@pytest.mark.parametrize("cls", [TcpVeth, DropRate, Vpn], ids=lambda c: c.spec.name)
def test_network_workloads_declare_themselves(cls: type) -> None:
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert spec.headline in names and len(set(names)) == len(names)
    assert all(m.unit in UNITS and m.description for m in spec.metrics)
    assert spec.category in {"net", "vpn"} and spec.reproduces.startswith("A:")
    assert set(cls.quick) == set(cls().default_params(None))
    assert not cls.preinstalled  # installed into a userspace on first use, never at creation


@pytest.mark.parametrize(("cls", "tool", "package"), [
    (TcpVeth, "iperf3", "iperf3"), (DropRate, "trafgen", "netsniff-ng"), (Vpn, "iperf3", "iperf3"),
    (TcpVeth, "nsenter", "util-linux"),
])
def test_missing_programs_name_their_package(cls: type, tool: str, package: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    present = HostTarget.which
    monkeypatch.setattr(HostTarget, "which", lambda self, name: None if name == tool else present(self, name))
    target = HostTarget(Config(name="bare"))
    try:
        assert package in cls().required_packages(target)  # what a userspace is given on first use
        with pytest.raises(ToolMissing) as err:
            cls().check_tools(target)  # what the runner checks before prepare() makes anything
        assert err.value.package == package and "\n" not in str(err.value)
    finally:
        target.close()


@pytest.mark.parametrize(("tool", "package", "action"), [
    ("nft", "nftables", lambda: rungs.RUNGS["nft"].install(None)),
    ("tc", "iproute2", lambda: rungs.RUNGS["tc"].install(None)),
    ("clang", "clang", rungs.drop_object),
    ("ip", "iproute2", lambda: Topology("t", Journal()).open()),
    ("ethtool", "ethtool", lambda: offloads.read(None, "veth0")),
])
def test_missing_host_tools_name_their_package_before_anything_is_made(
        tool: str, package: str, action, monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None if name == tool else real(name, path=path))
    with pytest.raises(ToolMissing) as err:
        action()
    assert err.value.package == package and f"apt-get install {package}" in str(err.value)


def on_a_pc(monkeypatch: pytest.MonkeyPatch) -> None:
    """rpi-network's sides are the machine's pair: amd64 and i386 here, wherever the tests run."""
    monkeypatch.setattr(experiments_base, "host_arch", lambda: "amd64")
    monkeypatch.setattr(experiments_base, "kernel_arch", lambda: "amd64")


def test_the_network_experiments_carry_the_part_on_each_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    on_a_pc(monkeypatch)
    rpi = EXPERIMENTS["rpi-network"].settings().configs
    assert {name: (c.userspace is not None, net_options(c).offloads, net_options(c).drop)
            for name, c in rpi.items()} == {"amd64": (True, "off", "tc"), "i386": (True, "off", "tc")}
    ladder = EXPERIMENTS["drop-ladder"].settings()
    assert [net_options(ladder.configs[n]).drop for n in ladder.run["configs"]] == list(rungs.RUNGS)
    offloads_ = EXPERIMENTS["veth-offloads"].settings().configs
    assert {n: net_options(c).offloads for n, c in offloads_.items()} == {"offloads-off": "off", "offloads-on": "on"}


def test_a_files_userspace_is_made_only_when_a_run_uses_it(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("SHOOTOUT_HOME", str(tmp_path))  # the journal of the creates
    made: list[tuple[str, str, str]] = []
    monkeypatch.setattr(userspace_configs, "create_userspace",
                        lambda name, arch, release, **kw: made.append((name, arch, release)))
    monkeypatch.setattr(userspace_configs, "_ready", lambda name: False)
    monkeypatch.setattr(userspace_configs, "preflight", lambda *args: None)
    monkeypatch.setattr(userspace_configs, "private_mounts", lambda: None)
    on_a_pc(monkeypatch)
    config = EXPERIMENTS["rpi-network"].settings().configs["i386"]
    assert made == []  # reading the experiment makes nothing
    assert userspace_configs.made_on_first_use([config]) == [config]
    assert made == [("debian-bookworm-i386", "i386", "bookworm")]


def test_a_remote_target_is_refused_in_one_line() -> None:
    ctx = Context(HostTarget(Config(name="vm", target="vm")), "tcp-veth", {})
    with pytest.raises(TargetError, match="tcp-veth runs on this machine's kernel, not on a vm target") as err:
        TcpVeth().prepare(ctx)
    assert "\n" not in str(err.value)

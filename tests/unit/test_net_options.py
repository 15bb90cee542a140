"""The network part of a configuration (parsing and checking, no kernel), the tunnels' keys, and
the network workloads' declarations."""

from __future__ import annotations

import base64
import shutil

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import x25519
from cryptography.x509.oid import ExtendedKeyUsageOID

from shootout.errors import ToolMissing, UsageError
from shootout.model import Config
from shootout.net import keys, namespace, offloads, rungs
from shootout.net.part import NetOptions, NetworkPart
from shootout.net.topology import Topology
from shootout.targets.host import HostTarget
from shootout.units import UNITS
from shootout.workloads.net import DropRate, TcpVeth
from shootout.workloads.vpn import Vpn


def test_defaults_are_the_articles_setting() -> None:
    options = NetOptions()
    assert (options.offloads, options.drop, options.vpn, options.cipher) == ("off", "tc", "wireguard", "AES-256-GCM")
    assert NetworkPart.parse({"name": "plain"}, "f.toml") is None


def test_tables_and_short_forms() -> None:
    parsed = NetworkPart.parse({"veth": {"offloads": "on"}, "drop": "xdp-native",
                                "vpn": {"kind": "openvpn", "cipher": "CHACHA20-POLY1305"}}, "f.toml")
    assert parsed == NetOptions(offloads="on", drop="xdp-native", vpn="openvpn", cipher="CHACHA20-POLY1305")
    assert NetworkPart.parse({"vpn": "openvpn"}, "f") == NetOptions(vpn="openvpn")
    assert NetworkPart.parse({"drop": {"rung": "nft"}, "net": {"pin": "mine"}}, "f") == NetOptions(drop="nft", pin="mine")


@pytest.mark.parametrize(("table", "message"), [
    ({"veth": {"offloads": "maybe"}}, r"f.toml: veth.offloads = 'maybe' is not a choice"),
    ({"drop": "iptables"}, r"drop = 'iptables' is not a choice \(use one of: socket, nft, tc, xdp-generic"),
    ({"vpn": {"kind": "ipsec"}}, r"vpn.kind = 'ipsec'"),
    ({"vpn": {"kind": "openvpn", "cipher": "BF-CBC"}}, r"vpn.cipher = 'BF-CBC'"),
    ({"vpn": {"kind": "wireguard", "wireguard": "rust"}}, r"vpn.wireguard = 'rust'"),
    ({"veth": {"offload": "off"}}, r"unknown key\(s\) in veth: offload \(allowed: offloads\)"),
    ({"veth": ["off"]}, r"veth must be a table or a string"),
])
def test_bad_settings_are_one_line_errors(table: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message) as err:
        NetworkPart.parse(table, "f.toml")
    assert "\n" not in str(err.value)


def test_options_travel_in_config_options_until_config_has_parts() -> None:
    options = NetOptions(offloads="on", drop="nft", vpn="openvpn", cipher="CHACHA20-POLY1305", pin="x")
    config = Config(name="c", options=options.flat())
    assert NetOptions.of(config) == options
    assert NetOptions().flat() == () and NetOptions.of(Config(name="plain")) == NetOptions()


def test_openvpn_certificates_chain_to_their_ca() -> None:
    pki = keys.openvpn_pki()
    ca = x509.load_pem_x509_certificate(pki["ca.crt"])
    for role, usage in (("server", ExtendedKeyUsageOID.SERVER_AUTH), ("client", ExtendedKeyUsageOID.CLIENT_AUTH)):
        cert = x509.load_pem_x509_certificate(pki[f"{role}.crt"])
        cert.verify_directly_issued_by(ca)
        assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [usage]
        assert b"PRIVATE KEY" in pki[f"{role}.key"]
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_wireguard_public_key_belongs_to_the_private_one() -> None:
    key = keys.wireguard_key()
    private = x25519.X25519PrivateKey.from_private_bytes(base64.b64decode(key.private))
    assert base64.b64encode(private.public_key().public_bytes_raw()).decode() == key.public
    assert len(base64.b64decode(key.public)) == 32 and key != keys.wireguard_key()


@pytest.mark.parametrize("cls", [TcpVeth, DropRate, Vpn], ids=lambda c: c.spec.name)
def test_network_workloads_declare_themselves(cls: type) -> None:
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert spec.headline in names and len(set(names)) == len(names)
    assert all(m.unit in UNITS and m.description for m in spec.metrics)
    assert spec.category in {"net", "vpn"} and spec.reproduces.startswith("A:")
    assert set(cls.quick_params()) == set(cls().default_params())
    assert cls.packages and all(t.package in cls.packages or t.package == "util-linux" for t in cls.tools)


@pytest.mark.parametrize(("cls", "tool", "package"), [
    (TcpVeth, "iperf3", "iperf3"), (DropRate, "trafgen", "netsniff-ng"), (Vpn, "iperf3", "iperf3"),
    (TcpVeth, "nsenter", "util-linux"),
])
def test_missing_programs_name_their_package_before_anything_is_made(
        cls: type, tool: str, package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    present = HostTarget.which
    monkeypatch.setattr(HostTarget, "which", lambda self, name: None if name == tool else present(self, name))
    target = HostTarget(Config(name="bare"))
    try:
        with pytest.raises(ToolMissing) as err:
            cls().prepare(target, cls.quick_params())  # no namespace is made: no root needed
        assert err.value.package == package and "\n" not in str(err.value)
    finally:
        target.close()


@pytest.mark.parametrize(("tool", "package", "action"), [
    ("nft", "nftables", lambda: rungs.RUNGS["nft"].install(None)),
    ("tc", "iproute2", lambda: rungs.RUNGS["tc"].install(None)),
    ("clang", "clang", rungs.drop_object),
    ("ip", "iproute2", lambda: Topology("t").open()),
    ("ethtool", "ethtool", lambda: offloads.read(None, "veth0")),
])
def test_missing_host_tools_name_their_package_before_anything_is_made(
        tool: str, package: str, action, monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(namespace.shutil, "which", lambda name, path=None: None if name == tool else real(name, path=path))
    with pytest.raises(ToolMissing) as err:
        action()
    assert err.value.package == package and f"apt-get install {package}" in str(err.value)

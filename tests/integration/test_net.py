"""Network workloads for real: namespaces, veth, the drop ladder, tunnels, and nothing left behind.

Needs root (CI runs as root) and the Debian packages of install.sh; fails, never skips. Every
check of what is left looks at this test's own namespaces (by inode), pins and device names,
never at the machine's global state: other runs share this machine.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from shootout.errors import TargetError, ToolMissing, UsageError
from shootout.model import Config
from shootout.net import rungs
from shootout.net.part import NetOptions, NetworkPart, close_sessions, session_for
from shootout.system.journal import journal
from shootout.targets.chroot import ChrootTarget
from shootout.targets.host import HostTarget
from shootout.userspace import userspace_config
from shootout.workloads.net import DropRate, TcpVeth
from shootout.workloads.vpn import Vpn

pytestmark = pytest.mark.root
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module", autouse=True)
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Root, and SHOOTOUT_HOME: the test userspaces' home (journals, BPF objects and userspaces)."""
    if os.geteuid() != 0:
        pytest.fail("network tests need root (CI runs as root)")
    mp = pytest.MonkeyPatch()
    mp.setenv("SHOOTOUT_HOME", os.environ.get("SHOOTOUT_TEST_HOME") or str(tmp_path_factory.mktemp("net-home")))
    yield
    mp.undo()


# -- what a test leaves behind ------------------------------------------------------------------

def in_namespaces(inodes: set[str]) -> list[int]:
    """PIDs of processes inside any of these namespaces (a namespace without any, unpinned, is freed)."""
    found = []
    for pid in psutil.pids():
        try:
            if os.readlink(f"/proc/{pid}/ns/net") in inodes:
                found.append(pid)
        except OSError:
            continue
    return found


def holders(parent: int) -> set[str]:
    """Namespaces held by the holder processes of a shootout process."""
    found = set()
    try:
        for child in psutil.Process(parent).children(recursive=True):
            if any(part.endswith("holder.py") for part in child.cmdline()):
                found.add(os.readlink(f"/proc/{child.pid}/ns/net"))
    except (psutil.Error, OSError):
        pass
    return found


def running_in(inodes: set[str], name: str) -> bool:
    for pid in in_namespaces(inodes):
        try:
            if psutil.Process(pid).name() == name:
                return True
        except psutil.Error:
            continue
    return False


def root_links() -> list[str]:
    return [link["ifname"] for link in json.loads(subprocess.check_output(["ip", "-j", "link", "show"]))]


def assert_nothing_left(inodes: set[str], pins: tuple[str, ...] = ()) -> None:
    deadline = time.monotonic() + 10  # holders sweep their namespace when their pipe closes
    while in_namespaces(inodes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert inodes and in_namespaces(inodes) == []
    assert [p for p in pins if Path("/run/netns", p).exists()] == []
    # devices are only ever made inside the namespaces; none of ours appears in the host's
    assert [name for name in root_links() if re.fullmatch(r"so[0-9a-f]{6}(a|b|ta|tb)", name)] == []
    tables = json.loads(subprocess.check_output(["nft", "-j", "list", "tables"]))["nftables"]
    assert rungs.NFT_TABLE not in [t["table"]["name"] for t in tables if "table" in t]


# -- targets ------------------------------------------------------------------------------------

def config(base: Config, name: str, **options: str) -> Config:
    return dataclasses.replace(base, name=name, options=NetOptions(**options).flat())


@pytest.fixture
def sessions() -> Iterator[None]:
    yield
    close_sessions()


@pytest.fixture(scope="module")
def userspace(install_declared_packages) -> Iterator[ChrootTarget]:
    """The amd64 test userspace with the network packages, as a chroot target."""
    base = userspace_config("bookworm", "amd64")
    install_declared_packages(base.userspace or "")
    with journal() as j:
        target = ChrootTarget(base, j)
        target.open()
        yield target
        target.close()


def trial(target, workload, params: dict) -> tuple[dict, dict]:
    """One trial as the runner runs it; returns (values, prepared facts)."""
    prepared = workload.prepare(target, params)
    result = target.run(workload.argv(prepared, params), timeout=300)
    assert result.exit_status == 0, (result.stdout[-1500:], result.stderr[-1500:])
    values = workload.parse(result, params)
    assert values and all(v > 0 for v in values.values()), values
    return values, prepared.facts


# -- the workloads ------------------------------------------------------------------------------

def test_tcp_veth_with_offloads_off_and_on_read_back(sessions: None) -> None:
    for state in ("off", "on"):
        target = HostTarget(config(Config(name="host"), f"host-{state}", offloads=state))
        try:
            values, facts = trial(target, TcpVeth(), {"seconds": 1, "parallel": 2})
            peers = facts["in_force"]["offloads"]
            assert len(peers) == 2
            assert all(v == state for features in peers.values() for v in features.values()), peers
            assert {"mbit_s", "mbit_s_parallel", "cpu_s_per_gib"} <= set(values)
        finally:
            target.close()


def test_the_userspaces_own_iperf3_wireguard_go_and_openvpn(userspace: ChrootTarget, sessions: None) -> None:
    base = userspace.config
    values, facts = trial(userspace, TcpVeth(), {"seconds": 1, "parallel": 0})
    assert facts["iperf3"].startswith("iperf 3.")
    for cfg in (config(base, "wg", vpn="wireguard"), config(base, "aes", vpn="openvpn", cipher="AES-256-GCM"),
                config(base, "chacha", vpn="openvpn", cipher="CHACHA20-POLY1305")):
        target = ChrootTarget(cfg, userspace.journal)
        try:
            values, facts = trial(target, Vpn(), {"seconds": 1})
            tunnel = facts["tunnel"]
            if cfg.name == "wg":
                assert tunnel["implementation"] == "go" and tunnel["version"].startswith("wireguard-go v")
                assert tunnel["kernel_module"].startswith("no")  # this kernel has none
            else:
                assert tunnel["cipher"] == NetOptions.of(cfg).cipher and "OpenVPN 2." in tunnel["version"]
                assert tunnel["data_channel_offload"].startswith("DCO version")
            assert values["cpu_s_per_gib"] > 0
        finally:
            target.close()


def test_the_drop_ladder(userspace: ChrootTarget, sessions: None) -> None:
    possible = {r: rungs.problem(r) for r in rungs.RUNGS}
    assert possible["socket"] is None and possible["nft"] is None, possible
    for rung, problem in possible.items():
        if problem is not None:
            continue
        target = HostTarget(config(Config(name="host"), f"host-{rung}", drop=rung))
        try:
            values, facts = trial(target, DropRate(), {"seconds": 0.5, "warmup_s": 0.2})
            drop = facts["in_force"]["drop"]
            assert drop["rung"] == rung
            if rung == "nft":
                assert drop["nft_rule"]["hook"] == "prerouting"
            if rung.startswith("xdp"):
                assert drop["xdp"]["mode"] == rung
        finally:
            target.close()
    # the socket rung from a userspace: its trafgen, and the sink built by its gcc
    target = ChrootTarget(config(userspace.config, "us-socket", drop="socket"), userspace.journal)
    try:
        values, facts = trial(target, DropRate(), {"seconds": 0.5, "warmup_s": 0.2})
        assert facts["binary"]["elf_class"] == 64 and facts["trafgen"].startswith("trafgen 0.6")
    finally:
        target.close()


# -- nothing left behind ------------------------------------------------------------------------

def _watch(child: subprocess.Popen, until) -> set[str]:
    seen: set[str] = set()
    deadline = time.monotonic() + 180
    while child.poll() is None and time.monotonic() < deadline and not until(seen):
        seen |= holders(child.pid)
        time.sleep(0.05)
    return seen


def test_a_run_through_the_cli_leaves_nothing(shootout) -> None:
    child = shootout.popen("run", "-c", "host", "-w", "drop-rate", "--budget", "6s", "--db", shootout.db)
    seen = _watch(child, lambda seen: False)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    with sqlite3.connect(shootout.home / "results.db") as db:
        trials = db.execute("select round, workload, error from trials").fetchall()
    assert (1, "drop-rate", None) in trials, trials  # a measured trial, not only the warm-up
    assert_nothing_left(seen)


DRIVER = """
import sys
from shootout.model import Config, RunSettings
from shootout.net.part import NetOptions
from shootout.runner import Runner, RunRequest
from shootout.store import Store
from shootout.system.journal import journal
from shootout.workloads.registry import workload

pin, db = sys.argv[1:]
configs = [Config(name="nft", options=NetOptions(drop="nft", pin=pin + "n").flat()),
           Config(name="ovpn", options=NetOptions(vpn="openvpn", pin=pin + "o").flat())]
params = {"drop-rate": {"seconds": 60.0, "warmup_s": 0.2}, "vpn": {"seconds": 60}}
with journal() as j:
    Runner(Store(db), j).start(RunRequest(configs, [workload("drop-rate"), workload("vpn")], RunSettings(), params=params))
"""


def test_sigkill_then_doctor_leaves_nothing(shootout) -> None:
    pin = f"sotest{os.getpid()}"
    pins = tuple(f"{pin}{c}-{w}-{s}" for c in "no" for w in ("drop-rate", "vpn") for s in "ab")
    child = subprocess.Popen([sys.executable, "-c", DRIVER, pin, shootout.db], env=shootout.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # kill mid-trial: once all four topologies exist and the generator runs inside one of them
    seen = _watch(child, lambda seen: len(seen) == 8 and running_in(seen, "trafgen"))
    assert child.poll() is None, child.communicate()[1][-2000:]
    child.send_signal(signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 10
    while in_namespaces(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert in_namespaces(seen) == []  # the holders emptied their namespaces by themselves
    assert all(Path("/run/netns", p).exists() for p in pins)  # but pins keep them: the journal's job
    done = shootout("doctor")
    assert done.returncode == 0, done.stderr
    assert "network namespace pinned as" in done.stdout
    assert_nothing_left(seen, pins)


# -- bad input ----------------------------------------------------------------------------------

def test_a_taken_namespace_name_is_refused_and_nothing_is_left(sessions: None) -> None:
    pin = f"sotaken{os.getpid()}"
    taken = f"{pin}-tcp-veth-a"
    subprocess.run(["ip", "netns", "add", taken], check=True)
    try:
        session = session_for(config(Config(name="host"), "pinned", pin=pin))
        with pytest.raises(UsageError, match=f"a network namespace named '{taken}' already exists") as err:
            session.topology("tcp-veth")
        assert "\n" not in str(err.value)
        assert holders(os.getpid()) == set()  # the namespace made before the refusal is gone
        assert Path("/run/netns", taken).exists()  # someone else's: untouched
    finally:
        subprocess.run(["ip", "netns", "delete", taken], check=True)


def test_kernel_wireguard_asked_for_but_absent(sessions: None) -> None:
    target = HostTarget(config(Config(name="host"), "wg-kernel", vpn="wireguard", wireguard="kernel"))
    try:
        with pytest.raises(TargetError, match="this kernel has no WireGuard: .*Unknown device type") as err:
            Vpn().prepare(target, {"seconds": 1})
        assert "wireguard-go" in err.value.hint
        assert NetworkPart.problem(NetOptions.of(target.config)).startswith("kernel WireGuard: ip link add type")
        seen = session_for(target.config).inodes
    finally:
        close_sessions()
        target.close()
    assert_nothing_left(seen)


def test_a_rung_the_kernel_refuses_says_why_and_leaves_nothing(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    bogus = tmp_path / "not-bpf.o"
    bogus.write_bytes(b"\x7fELF this is no BPF object")
    monkeypatch.setattr(rungs, "drop_object", lambda: bogus)
    rungs.problem.cache_clear()
    try:
        reason = rungs.problem("xdp-native")
        assert reason is not None and reason.startswith("attaching the XDP drop program (xdpdrv) failed")
        assert "\n" not in reason
        assert NetworkPart.problem(NetOptions(drop="xdp-native")) == f"drop rung xdp-native: {reason}"
    finally:
        rungs.problem.cache_clear()
    assert holders(os.getpid()) == set()


def test_missing_tools_name_their_package(userspace: ChrootTarget, sessions: None) -> None:
    class Without(ChrootTarget):
        def which(self, tool: str) -> str | None:
            return None if tool in ("openvpn", "trafgen") else super().which(tool)

    target = Without(config(userspace.config, "no-openvpn", vpn="openvpn"), userspace.journal)
    try:
        with pytest.raises(ToolMissing, match=r"openvpn is not installed .*apt-get install openvpn"):
            Vpn().prepare(target, {"seconds": 1})
        with pytest.raises(ToolMissing, match=r"trafgen is not installed .*apt-get install netsniff-ng"):
            DropRate().prepare(target, {"seconds": 1.0, "warmup_s": 0.2})
    finally:
        target.close()


def test_not_root_is_one_line(tmp_path: Path) -> None:
    code = ("from shootout.net.topology import Topology\n"
            "from shootout.errors import ShootoutError\n"
            "try:\n    Topology('t').open()\nexcept ShootoutError as exc:\n    print(exc)\n")
    tmp_path.chmod(0o777)
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC),
                                                                "SHOOTOUT_HOME": str(tmp_path)})
    assert done.stdout.strip() == "creating a network namespace needs root (run shootout as root " \
                                  "(network namespaces, veth, nft, tc, XDP))", (done.stdout, done.stderr)

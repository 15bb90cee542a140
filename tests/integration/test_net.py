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
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import kill_sweep
import psutil
import pytest
from shared_spaces import AMD64, I386, Spaces

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.base.model import Config
from shootout.net import rungs, wggo
from shootout.parts import RunParts
from shootout.parts.network import NetSession, NetworkPart
from shootout.places.chroot import ChrootTarget, named_userspace_config
from shootout.places.host import HostTarget
from shootout.places.target import Target
from shootout.system.journal import journal
from shootout.workloads.catalogue import user_workload
from shootout.workloads.contract import Context, Prepared, Workload
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
    """Namespaces held by the holder processes of a shootout process (not the namespace of this
    test, which a holder's `unshare` process is still in for a moment before it unshares)."""
    found = set()
    try:
        for child in psutil.Process(parent).children(recursive=True):
            if any(part.endswith("holder.py") for part in child.cmdline()):
                found.add(os.readlink(f"/proc/{child.pid}/ns/net"))
    except (psutil.Error, OSError):
        pass
    return found - {os.readlink("/proc/self/ns/net")}


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
    deadline = time.monotonic() + 60  # holders sweep their namespace when their pipe closes (slow when busy)
    while in_namespaces(inodes) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert inodes and in_namespaces(inodes) == []
    assert [p for p in pins if Path("/run/netns", p).exists()] == []
    # devices are only ever made inside the namespaces; none of ours appears in the host's
    assert [name for name in root_links() if re.fullmatch(r"so[0-9a-f]{6}(a|b|ta|tb)", name)] == []
    tables = json.loads(subprocess.check_output(["nft", "-j", "list", "tables"]))["nftables"]
    assert rungs.NFT_TABLE not in [t["table"]["name"] for t in tables if "table" in t]


# -- a run's network part, as the runner drives it ----------------------------------------------

def config(base: Config, name: str, **options: str) -> Config:
    return dataclasses.replace(base, name=name, label=name, parts={"network": options})


@contextmanager
def run_parts(*configs: Config) -> Iterator[RunParts]:
    """The run's parts over these configurations; on leaving, closed and checked: nothing of
    what they made is left (the normal exit)."""
    with journal() as j:
        parts = RunParts(list(configs), j)
        try:
            yield parts
        finally:
            seen = holders(os.getpid())
            assert parts.close() == []
    if seen:  # (a test of refusals may have made none)
        assert_nothing_left(seen)


def trial(parts: RunParts, target: Target, workload: Workload, params: dict) -> tuple[dict, dict, Prepared]:
    """One trial as the runner runs it (packages on first use, tools, prepare, apply and read back,
    run, parse); returns (values, what the network part read back, prepared)."""
    target.provide(workload.required_packages(target), workload.components)
    workload.check_tools(target)
    ctx = Context(target, workload.spec.name, {**workload.default_params(target.probe()), **params},
                  parts.sessions["network"].journal, parts)
    prepared = workload.prepare(ctx)
    in_force = parts.before_trial(target.config)["network"]
    result = target.run(workload.argv(prepared, ctx.params), timeout=300)
    assert result.exit_status == 0, (result.stdout[-1500:], result.stderr[-1500:])
    values = workload.parse(result, ctx.params)
    # metrics are rates and costs, never 0; recorded amounts (retransmits) may be
    recorded = {m.name for m in workload.spec.recorded}
    assert values and all(v > 0 or (k in recorded and v == 0) for k, v in values.items()), values
    workload.cleanup(ctx, prepared)
    return values, in_force, prepared


@pytest.fixture(scope="module")
def userspace(spaces: Spaces) -> Iterator[ChrootTarget]:
    """The amd64 test userspace as a chroot target; the workloads' packages come on first use."""
    spaces.need(AMD64)
    with journal() as j:
        target = ChrootTarget(named_userspace_config(AMD64), j)
        yield target
        target.close()


def chroot(base: ChrootTarget, name: str, **options: str) -> ChrootTarget:
    return ChrootTarget(config(base.config, name, **options), base.journal)


# -- the workloads ------------------------------------------------------------------------------

def test_tcp_veth_with_offloads_off_and_on_read_back() -> None:
    configs = [config(Config(name="host"), f"host-{state}", offloads=state) for state in ("off", "on")]
    with run_parts(*configs) as parts:
        for cfg in configs:
            target = HostTarget(cfg)
            try:
                values, in_force, _ = trial(parts, target, TcpVeth(), {"seconds": 1, "parallel": 2})
                assert in_force["offloads"] == {"a": cfg.name[5:], "b": cfg.name[5:]}, in_force
                assert in_force["tcp_congestion_control"]
                assert {"mbit_s", "mbit_s_parallel", "cpu_s_per_gib"} <= set(values)
            finally:
                target.close()


def test_the_userspaces_own_iperf3_a_current_wireguard_go_and_openvpn(userspace: ChrootTarget) -> None:
    cfgs = {"wg": {"vpn": "wireguard"}, "wgdeb": {"vpn": "wireguard", "wireguard": "debian"},
            "aes": {"vpn": "openvpn", "cipher": "AES-256-GCM"},
            "chacha": {"vpn": "openvpn", "cipher": "CHACHA20-POLY1305"}}
    targets = [chroot(userspace, name, **options) for name, options in cfgs.items()]
    try:
        with run_parts(*(t.config for t in targets)) as parts:
            values, _, prepared = trial(parts, targets[0], TcpVeth(), {"seconds": 1, "parallel": 0,
                                                                       "affinity": "auto"})
            assert prepared.versions["iperf3"].startswith("iperf 3.")
            assert values["cpu_s_per_gib"] >= values["process_cpu_s_per_gib"] > 0
            for target in targets:
                values, in_force, prepared = trial(parts, target, Vpn(), {"seconds": 1})
                tunnel = prepared.facts["tunnel"]
                if target.config.name == "wg":  # no kernel module here: a current wireguard-go, built for amd64
                    assert in_force["vpn"] == {"kind": "wireguard", "implementation": "go", "release": wggo.RELEASE}
                    assert prepared.versions["wireguard-go"] == wggo.describe("amd64")
                    assert tunnel["kernel_module"].startswith("no")
                elif target.config.name == "wgdeb":  # bookworm's own, on request
                    assert in_force["vpn"] == {"kind": "wireguard", "implementation": "debian"}
                    assert prepared.versions["wireguard-go"] == "wireguard-go v0.0.20220316"
                else:
                    assert in_force["vpn"] == {"kind": "openvpn", "cipher": cfgs[target.config.name]["cipher"]}
                    assert prepared.versions["openvpn"].startswith("OpenVPN 2.")
                    assert tunnel["data_channel_offload"]  # "N/A" here: the kernel has no ovpn-dco
                assert values["cpu_s_per_gib"] >= values["process_cpu_s_per_gib"] > 0
            # OpenVPN from the workload's tunnel parameter, under the configuration that sets WireGuard,
            # each end pinned to a CPU (taskset from the userspace), as rpi-network runs it
            ovpn = user_workload({"name": "vpn-openvpn", "builtin": "vpn"}, "test")
            values, in_force, prepared = trial(parts, targets[0], ovpn, {"seconds": 1, "tunnel": "openvpn",
                                                                         "affinity": "auto"})
            assert prepared.facts["tunnel"]["kind"] == "openvpn" and values["mbit_s"] > 0
            assert in_force["vpn"] == {"wireguard": {"implementation": "go", "release": wggo.RELEASE},
                                       "openvpn": {"cipher": "AES-256-GCM"}}
    finally:
        for target in targets:
            target.close()


def test_wireguard_go_is_built_for_i386_and_runs_there(spaces: Spaces) -> None:
    """Cross-compiled from the Go module proxy: the 32-bit side runs a 32-bit binary of the same release."""
    spaces.need(I386)
    with journal() as j:
        base = ChrootTarget(named_userspace_config(I386), j)
        target = chroot(base, "wg32", vpn="wireguard", wireguard="go")
        try:
            with run_parts(target.config) as parts:
                values, _, prepared = trial(parts, target, Vpn(), {"seconds": 1})
                assert prepared.versions["wireguard-go"] == wggo.describe("i386") and values["mbit_s"] > 0
            assert wggo.build("i386").read_bytes()[4] == 1  # ELFCLASS32
        finally:
            target.close()
            base.close()


def test_the_drop_ladder(userspace: ChrootTarget) -> None:
    possible = {r: rungs.problem(r) for r in rungs.RUNGS}
    assert possible["socket"] is None and possible["nft"] is None, possible
    configs = [config(Config(name="host"), f"host-{rung}", drop=rung) for rung, why in possible.items() if why is None]
    socket = chroot(userspace, "us-socket", drop="socket")
    try:
        with run_parts(*configs, socket.config) as parts:
            for cfg in configs:
                target = HostTarget(cfg)
                try:
                    values, in_force, _ = trial(parts, target, DropRate(), {"seconds": 0.5, "warmup_s": 0.2})
                    rung = cfg.name[5:]
                    assert in_force["drop"]["rung"] == rung and values["kpps"] > 0
                    if rung == "nft":
                        assert in_force["drop"]["attached"].startswith("nft prerouting priority -300")
                    if rung.startswith("xdp"):
                        assert in_force["drop"]["attached"].startswith(rungs.XdpRung.MODES[rung][0])
                finally:
                    target.close()
            # the socket rung from a userspace: its trafgen, and the sink built by its gcc
            values, _, prepared = trial(parts, socket, DropRate(), {"seconds": 0.5, "warmup_s": 0.2})
            assert prepared.facts["binary"]["elf_class"] == 64 and prepared.versions["trafgen"].startswith("trafgen 0.6")
    finally:
        socket.close()


# -- nothing left behind after SIGKILL + doctor --------------------------------------------------

def _watch(child: subprocess.Popen, until) -> set[str]:
    seen: set[str] = set()
    deadline = time.monotonic() + 180
    while child.poll() is None and time.monotonic() < deadline and not until(seen):
        seen |= holders(child.pid)
        time.sleep(0.05)
    return seen


RUN = """
[run]
configs = ["nft", "ovpn"]
workloads = ["drop-rate", "vpn"]
[[config]]
name = "nft"
spec = "host"
drop = "nft"
net = {{ pin = "{pin}n" }}
[[config]]
name = "ovpn"
spec = "host"
vpn = "openvpn"
net = {{ pin = "{pin}o" }}
[params.drop-rate]
seconds = 60.0
warmup_s = 0.2
[params.vpn]
seconds = 1
"""


def test_sigkill_then_doctor_leaves_nothing(shootout, tmp_path: Path) -> None:
    pin = f"sotest{os.getpid()}"
    pins = tuple(f"{pin}{c}-{w}-{s}" for c in "no" for w in ("drop-rate", "vpn") for s in "ab")
    (tmp_path / "net.toml").write_text(RUN.format(pin=pin))
    # a budget the busy-machine check never refuses: the kill must land in a trial
    watched = kill_sweep.start(shootout, "run", "--file", str(tmp_path / "net.toml"), "--budget", "60m",
                               "--db", shootout.db)
    child = watched.child
    # kill mid-trial: once all four topologies exist and the generator runs inside one of them
    seen = _watch(child, lambda seen: len(seen) == 8 and running_in(seen, "trafgen"))
    assert child.poll() is None, child.communicate()[1][-2000:]
    assert running_in(seen, "trafgen"), "no drop-rate trial was running when the watch gave up"
    watched.kill()
    deadline = time.monotonic() + 60
    while in_namespaces(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert in_namespaces(seen) == []  # the holders emptied their namespaces by themselves
    assert all(Path("/run/netns", p).exists() for p in pins)  # but pins keep them: the journal's job
    kept = subprocess.run(["ip", "netns", "exec", f"{pin}n-drop-rate-b", "nft", "list", "table", "ip", rungs.NFT_TABLE],
                          capture_output=True, text=True)
    assert "drop" in kept.stdout, kept.stderr  # a pinned namespace keeps its nft rule until doctor
    done = shootout("doctor")
    assert done.returncode == 0, done.stderr
    for made in ("network namespace pinned as", "creating the veth pair", "adding the nft drop rule"):
        assert made in done.stdout
    assert_nothing_left(seen, pins)
    assert watched.workdirs and watched.workdirs_left() == [] and kill_sweep.journals(shootout) == []


TUNNELS = """
[run]
configs = ["wg", "ovpn"]
workloads = ["vpn", "tcp-veth"]
[[config]]
name = "wg"
spec = "host"
vpn = "wireguard"
net = {{ pin = "{pin}w" }}
[[config]]
name = "ovpn"
spec = "host"
vpn = "openvpn"
net = {{ pin = "{pin}o" }}
[params.vpn]
seconds = 1
[params.tcp-veth]
seconds = 1
parallel = 2
"""


KILLS = ("setup", "wireguard", "openvpn", "tcp-veth")


def _reached(moment: str, seen: set[str], results: Path) -> bool:
    """setup: the topologies are being made, before any trial; wireguard/openvpn: inside a vpn
    trial with that tunnel up; tcp-veth: inside a tcp-veth trial, no tunnel up."""
    if moment == "setup":
        return len(seen) >= 2 and not kill_sweep.trial_keys(results)
    if moment == "tcp-veth":
        return running_in(seen, "iperf3") and not any(running_in(seen, t) for t in ("wireguard-go", "openvpn"))
    return running_in(seen, {"wireguard": "wireguard-go", "openvpn": "openvpn"}[moment]) and running_in(seen, "iperf3")


def test_sigkill_of_tunnels_and_tcp_veth_leaves_nothing_and_resumes(shootout, tmp_path: Path) -> None:
    """One run killed four times and resumed after each: while the topologies are made, before
    any trial (then the next run cleans up), inside a vpn trial with its WireGuard tunnel up, with
    its OpenVPN tunnel up, and inside a tcp-veth trial (after each of these three, doctor). The
    last resume completes the run, measuring each trial once, and leaves nothing either. One
    chain rather than a run per moment: each kill is the same, and resumed runs are killed too."""
    pin = f"sokill{os.getpid() % 10000}"
    pins = tuple(f"{pin}{c}-{w}-{s}" for c in "wo" for w in ("vpn", "tcp-veth") for s in "ab")
    (tmp_path / "net.toml").write_text(TUNNELS.format(pin=pin))
    every: set[str] = set()
    with kill_sweep.cleaning_up(shootout):
        watched = kill_sweep.start(shootout, "run", "--file", str(tmp_path / "net.toml"), "--min-rounds", "6",
                                   "--max-rounds", "7", "--budget", "60m", "--db", shootout.db)
        runs = [watched]
        for moment in KILLS:
            seen: set[str] = set()

            def moment_reached() -> bool:
                seen.update(holders(watched.child.pid))
                return _reached(moment, seen, tmp_path / "results.db")

            watched.until(moment_reached, f"the moment '{moment}'")
            watched.kill()
            every |= seen
            assert watched.workdirs, f"{moment}: the run's work directory was never seen"
            deadline = time.monotonic() + 60
            while in_namespaces(seen) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert any(Path("/run/netns", p).exists() for p in pins)  # pins keep the namespaces: the journal's job
            if moment == "wireguard":  # the run after the kill at set-up undid what that one left
                for undone in ("network namespace pinned as", "create the work directory"):
                    assert f"undid a change left by a killed run: {undone}" in watched.said, watched.said
            if moment != "setup":
                done = shootout("doctor")
                assert done.returncode == 0, done.stderr
                for made in ("network namespace pinned as", "creating the veth pair", "create the work directory"):
                    assert made in done.stdout, (moment, done.stdout)
                assert_nothing_left(seen, pins)
                assert [r.workdirs_left() for r in runs] == [[]] * len(runs), moment
                assert kill_sweep.journals(shootout) == [], moment
            if moment != KILLS[-1]:
                watched = kill_sweep.resumed(shootout)
                runs.append(watched)
        kill_sweep.resume(shootout)
        assert_nothing_left(every, pins)


# -- bad input ----------------------------------------------------------------------------------

def test_a_taken_namespace_name_is_refused_and_nothing_is_left() -> None:
    pin = f"sotaken{os.getpid()}"
    taken = f"{pin}-tcp-veth-a"
    subprocess.run(["ip", "netns", "add", taken], check=True)
    try:
        cfg = config(Config(name="host"), "pinned", pin=pin)
        assert NetworkPart().problem(cfg.parts["network"]) == \
            f"a network namespace named {taken!r} already exists (choose another net.pin)"
        with run_parts(cfg) as parts:  # taken after the check: the topology refuses too
            session = parts.sessions["network"]
            assert isinstance(session, NetSession)
            with pytest.raises(UsageError, match=f"a network namespace named '{taken}' already exists") as err:
                session.topology(cfg, "tcp-veth")
            assert "\n" not in str(err.value)
            assert holders(os.getpid()) == set()  # the namespace made before the refusal is gone
        assert Path("/run/netns", taken).exists()  # someone else's: untouched
    finally:
        subprocess.run(["ip", "netns", "delete", taken], check=True)


def test_kernel_wireguard_asked_for_but_absent() -> None:
    cfg = config(Config(name="host"), "wg-kernel", vpn="wireguard", wireguard="kernel")
    assert NetworkPart().problem(cfg.parts["network"]).startswith("kernel WireGuard: ip link add type wireguard")
    target = HostTarget(cfg)
    try:
        with run_parts(cfg) as parts:
            ctx = Context(target, "vpn", {"seconds": 1}, parts.sessions["network"].journal, parts)
            with pytest.raises(TargetError, match="this kernel has no WireGuard: .*Unknown device type") as err:
                Vpn().prepare(ctx)
            assert "wireguard-go" in (err.value.hint or "")
    finally:
        target.close()


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
        assert NetworkPart().problem({"drop": "xdp-native"}) == f"drop rung xdp-native: {reason}"
    finally:
        rungs.problem.cache_clear()
    assert holders(os.getpid()) == set()


def test_a_host_without_the_tools_is_told_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    present = HostTarget.which
    monkeypatch.setattr(HostTarget, "which", lambda self, tool: None if tool in ("openvpn", "trafgen")
                        else present(self, tool))
    target = HostTarget(Config(name="host"))
    try:
        assert target.provide(Vpn().required_packages(target)) == []  # the host is never changed
        with pytest.raises(ToolMissing, match=r"openvpn is not installed .*apt-get install openvpn"):
            Vpn().check_tools(target)
        with pytest.raises(ToolMissing, match=r"trafgen is not installed .*apt-get install netsniff-ng"):
            DropRate().check_tools(target)
    finally:
        target.close()


def test_not_root_is_one_line() -> None:
    code = ("from shootout.net.topology import Topology\n"
            "from shootout.base.errors import ShootoutError\n"
            "from shootout.system.journal import Journal\n"
            "try:\n    Topology('t', Journal()).open()\nexcept ShootoutError as exc:\n    print(exc)\n")
    with tempfile.TemporaryDirectory(prefix="shootout-nobody-") as home:  # under /tmp: nobody can enter it
        os.chmod(home, 0o777)
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                               code], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(SRC), "SHOOTOUT_HOME": home})
    assert done.stdout.strip() == "creating a network namespace needs root (run shootout as root " \
                                  "(network namespaces, veth, nft, tc, XDP))", (done.stdout, done.stderr)

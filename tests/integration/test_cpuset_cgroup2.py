"""Reserved CPUs through a cgroup2 cpuset, for real. This CI machine's cpuset controller is bound
to a cgroup v1 hierarchy whose mount its init holds busy, so it cannot move to cgroup2 here; the test
boots Debian 12's own kernel under TCG instead, whose cgroup2 holds every controller as on a
Debian 12 or Raspberry Pi OS machine, and runs shootout's reservation inside it (its source
copied in, Debian's python3 and psutil):

- once the rounds begin, the trials' partition takes the reserved CPU from every other group:
  a sleeping process in the root group and one in a top-level slice (where systemd starts
  services) run on the rest, whose cpuset.cpus is never written;
- a trial started through the reservation's prefix runs on the reserved CPU, one that needs
  every CPU on both (the partition dissolved for it, made again by the next sweep);
- the journal puts everything back; after a SIGKILL, the recovery `shootout doctor` runs does.

The image is built once per SHOOTOUT_TEST_HOME (about 3 minutes here) and a boot to SSH takes
about a minute under TCG. Needs root and Debian's mirror; fails, never skips.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from shared_spaces import RELEASE, Spaces

from shootout.system.journal import journal
from shootout.userspace import registry
from shootout.userspace.create import create_userspace
from shootout.vm import qemu
from shootout.vm.image import VmImage, build_image
from shootout.vm.kvm import choose_accel

SRC = Path(__file__).resolve().parents[2] / "src"
USERSPACE = f"test-cgroup2-{RELEASE}-amd64"
PACKAGES = ("python3", "python3-psutil", "python3-platformdirs")  # what shootout.system imports

# In the guest, as root: cgroup2 mounted where systemd mounts it, a slice with a sleeper in it
# and a sleeper in the root group, then shootout's reservation (argv[1]: "undo" or "kill").
GUEST = r"""
import json, os, subprocess, sys, time
from pathlib import Path
from shootout.system.affinity import allowed, format_cpulist
from shootout.system.cpureserve import Reservation, reserve
from shootout.system.journal import Journal

cg = Path("/sys/fs/cgroup")
slice_ = cg / "bystander.slice"
slice_.mkdir(exist_ok=True)
quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}  # ssh ends
in_root = subprocess.Popen(["sleep", "600"], **quiet)
in_slice = subprocess.Popen(["sh", "-c", f"echo $$ > {slice_}/cgroup.procs; exec sleep 600"], **quiet)
time.sleep(0.5)

def effective(group):
    path = group / "cpuset.cpus.effective"
    return path.read_text().strip() if path.exists() else None

def seen():
    return {"root_sleeper": format_cpulist(allowed(in_root.pid)), "slice_sleeper": format_cpulist(allowed(in_slice.pid)),
            "slice_cpus": (slice_ / "cpuset.cpus").read_text().strip() if (slice_ / "cpuset.cpus").exists() else None,
            "slice_effective": effective(slice_),
            "groups": sorted(p.name for p in cg.glob("shootout-*")),
            "subtree_control": (cg / "cgroup.subtree_control").read_text().split()}

def cpus_of(prefix):
    done = subprocess.run([*prefix, "grep", "Cpus_allowed_list", "/proc/self/status"], capture_output=True, text=True)
    return done.stdout.split()[-1] if done.returncode == 0 else done.stderr

out = {"before": seen()}
j = Journal()
made = reserve(j, isolate=True, here=True)
assert isinstance(made, Reservation), made
out["prepared"] = seen()  # before the rounds: no partition yet
made.include_self()  # the rounds begin
out["describe"] = made.describe()
out["during"] = seen()
out["partition"] = (made.cpuset.group / "cpuset.cpus.partition").read_text().strip()
out["trial"] = cpus_of(made.pin(1))
out["trial_every_cpu"] = cpus_of(made.pin(2))
out["after_every_cpu"] = (made.cpuset.group / "cpuset.cpus.partition").read_text().strip()
made.sweep()
out["partition_again"] = (made.cpuset.group / "cpuset.cpus.partition").read_text().strip()
out["trial_again"] = cpus_of(made.pin(1))
out["reserved"], out["rest"] = format_cpulist(made.split.reserved), format_cpulist(made.split.rest)
out["pids"] = [in_root.pid, in_slice.pid]
if sys.argv[1] == "kill":
    print(json.dumps(out), flush=True)
    time.sleep(600)  # killed here, with everything reserved
out["undo_errors"] = j.undo()
out["after"] = seen()
print(json.dumps(out), flush=True)
"""

# After the SIGKILL: what `shootout doctor` runs, then what is left.
RECOVER = r"""
import json
from shootout.system.journal import recover
undone, errors = recover()
print(json.dumps({"undone": undone, "errors": errors}))
"""


@pytest.fixture(scope="module")
def image(spaces: Spaces) -> VmImage:
    with journal() as j:
        ready = [u for u in registry.find(USERSPACE) if u.state == "ready"]
        if ready and not set(PACKAGES) <= set(ready[0].packages):  # made by an older version of this test
            registry.remove_userspace(USERSPACE)
            ready = []
        if not ready:
            create_userspace(USERSPACE, "amd64", RELEASE, packages=PACKAGES, journal=j)
        return build_image(registry.get_ready(USERSPACE), "amd64", j)


class Guest:
    def __init__(self, vm: qemu.RunningVm) -> None:
        self.vm = vm

    def ssh(self, command: str, stdin: bytes | None = None, timeout: float = 120,
            check: bool = True) -> subprocess.CompletedProcess[bytes]:
        argv = ["ssh", "-p", str(self.vm.port), "-i", str(self.vm.image.client_key), "-o", "BatchMode=yes",
                "-o", f"UserKnownHostsFile={self.vm.known_hosts}", "-o", "ConnectTimeout=5", "root@127.0.0.1", command]
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout)
        if check:
            assert done.returncode == 0, done.stderr.decode()[-2000:]
        return done

    def python(self, script: str, *args: str, timeout: float = 120) -> dict:
        done = self.ssh(f"cd /root/src && PYTHONPATH=/root/src SHOOTOUT_HOME=/root/home python3 - {' '.join(args)}",
                        stdin=script.encode(), timeout=timeout)
        return json.loads(done.stdout.decode().splitlines()[-1])


@pytest.fixture(scope="module")
def guest(image: VmImage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guest]:
    """One boot for the module's tests."""
    with journal() as j:
        vm = qemu.boot(image, qemu.VmShape(), choose_accel(emulate=True, guest="amd64"), j,
                       tmp_path_factory.mktemp("vm"))
        try:
            found = Guest(vm)
            deadline = time.monotonic() + 300
            while found.ssh("true", check=False, timeout=30).returncode != 0:
                qemu.check_alive(vm)
                assert time.monotonic() < deadline, f"no SSH: {vm.console_reason()}"
                time.sleep(2)
            source = subprocess.run(["tar", "-C", str(SRC), "--exclude=__pycache__", "-cf", "-", "shootout"],
                                    capture_output=True, check=True).stdout
            found.ssh("mkdir -p /root/src && tar -C /root/src -xf - && mount -t cgroup2 cgroup2 /sys/fs/cgroup",
                      stdin=source)
            yield found
        finally:
            assert qemu.stop(vm, j) == []


def test_the_trials_get_a_cgroup2_partition_and_the_journal_puts_all_back(guest: Guest) -> None:
    out = guest.python(GUEST, "undo")
    everything = out["before"]["root_sleeper"]
    assert everything == "0-1" and out["before"]["slice_cpus"] is None  # cpuset not enabled yet
    assert out["prepared"]["groups"] == [] and out["prepared"]["slice_effective"] is None  # preparing: no cpuset yet
    assert "(cgroup2 cpuset partition, sched_setaffinity, IRQ smp_affinity)" in out["describe"], out["describe"]
    during = out["during"]
    assert out["partition"] == "root" and len(during["groups"]) == 1 and "cpuset" in during["subtree_control"]
    assert during["slice_effective"] == out["rest"] == "0" and during["slice_cpus"] == ""  # the slice not written
    assert during["root_sleeper"] == during["slice_sleeper"] == "0"
    assert out["trial"] == out["reserved"] == "1" and out["trial_again"] == "1"
    assert out["trial_every_cpu"] == everything and out["after_every_cpu"] == "member"
    assert out["partition_again"] == "root"
    assert out["undo_errors"] == []
    after = out["after"]
    assert after["subtree_control"] == out["before"]["subtree_control"] and after["groups"] == []
    assert after["root_sleeper"] == after["slice_sleeper"] == everything


def test_after_a_sigkill_doctor_s_recovery_puts_the_cgroup2_cpuset_back(guest: Guest) -> None:
    guest.ssh("cat > /root/guest.py", stdin=GUEST.encode())
    guest.ssh("cd /root/src; PYTHONPATH=/root/src SHOOTOUT_HOME=/root/home setsid python3 /root/guest.py kill "
              "> /root/out 2>&1 < /dev/null &")  # only python in the background, its stdio off the channel
    deadline = time.monotonic() + 120
    while not (text := guest.ssh("cat /root/out").stdout.decode()).strip():
        assert time.monotonic() < deadline, "the reservation did not start"
        time.sleep(1)
    out = json.loads(text.splitlines()[-1])
    assert out["partition"] == "root" and out["trial"] == "1", out
    guest.ssh("pkill -KILL -f 'guest.py kill'")
    time.sleep(1)
    left = guest.python("from pathlib import Path\nimport json\n"
                        "print(json.dumps({'slice': Path('/sys/fs/cgroup/bystander.slice/cpuset.cpus.effective').read_text().strip(),"
                        " 'groups': [p.name for p in Path('/sys/fs/cgroup').glob('shootout-*')]}))")
    assert left["slice"] == "0" and len(left["groups"]) == 1, left  # the kill left it all
    recovered = guest.python(RECOVER)
    assert recovered["errors"] == [] and recovered["undone"], recovered
    after = guest.python("from pathlib import Path\nimport json\nfrom shootout.system.affinity import allowed, format_cpulist\n"
                         "cg = Path('/sys/fs/cgroup')\n"
                         f"print(json.dumps({{'cpus': [format_cpulist(allowed(p)) for p in {out['pids']}],"
                         " 'groups': [p.name for p in cg.glob('shootout-*')],"
                         " 'subtree': (cg / 'cgroup.subtree_control').read_text().split()}))")
    # cpuset off again (as before the run: this guest has no systemd), so the slice has every CPU
    assert after == {"cpus": ["0-1", "0-1"], "groups": [], "subtree": out["before"]["subtree_control"]}, after

"""The VM target for real: an image from the i386 test userspace with Debian's 686-pae kernel,
booted under TCG (this machine's /dev/kvm is not hardware-backed), one native trial in it.

The image is built once per SHOOTOUT_TEST_HOME and cached (about 2-3 minutes here); a boot
to SSH takes about 40 s under TCG. Needs root and Debian's mirror; fails, never skips.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from reaper import subreaper
from shared_spaces import I386, Spaces

from shootout.base.errors import TargetError
from shootout.base.model import RunSettings
from shootout.judge.analysis import is_emulated
from shootout.measure.runner import Runner, RunRequest
from shootout.places.vm import VmTarget, emulated, vm_config
from shootout.store import Store
from shootout.system.journal import Journal, journal, recover
from shootout.userspace import registry
from shootout.vm.image import VmImage, build_image
from shootout.vm.kvm import kvm_problem
from shootout.workloads.catalogue import workload

SRC = Path(__file__).resolve().parents[2] / "src"
SPEC = "vm:debian:bookworm:i386:686-pae"


@pytest.fixture(scope="module")
def image(spaces: Spaces) -> VmImage:
    spaces.need(I386)
    t0 = time.monotonic()
    with journal() as j:
        built = build_image(registry.get_ready(I386), "686-pae", j)
    print(f"VM image ready after {time.monotonic() - t0:.0f} s (build steps: {built.meta['seconds']})")
    return built


def _debugfs_ls(disk: Path, directory: str) -> list[str]:
    done = subprocess.run(["debugfs", "-R", f"ls -l {directory}", str(disk)], capture_output=True, text=True, check=True)
    return [line.split()[-1] for line in done.stdout.splitlines() if line.split()]


def test_the_image_holds_the_kernel_sshd_and_init(image: VmImage) -> None:
    assert image.release.endswith("-686-pae") and image.meta["arch"] == "i386"
    assert image.kernel.stat().st_size > 1_000_000 and image.initrd.stat().st_size > 100_000
    boot = _debugfs_ls(image.disk, "/boot")  # read without mounting
    assert f"vmlinuz-{image.release}" in boot
    assert {"shootout-init", "sshd"} <= set(_debugfs_ls(image.disk, "/usr/sbin"))  # /sbin -> usr/sbin
    assert image.host_key.startswith("ssh-ed25519 ")
    assert not any(p.name.startswith(".incomplete-") for p in image.dir.parent.iterdir())
    assert list(image.dir.parent.glob(f"{I386}-686-pae-*")) == [image.dir]  # older images were removed


def test_a_performance_vm_is_refused_without_hardware_kvm(spaces: Spaces) -> None:
    problem = kvm_problem()
    if Path("/sys/module/kvm_pvm").exists():
        assert problem is not None and "PVM" in problem
    if problem is None:
        pytest.fail("this machine has hardware KVM: the refusal cannot be shown here (run the VM without --emulate)")
    with journal() as j, pytest.raises(TargetError, match="no hardware KVM here") as err:
        VmTarget(vm_config(SPEC), j).open()
    assert "\n" not in str(err.value) and "--emulate" in str(err.value)


def test_under_tcg_the_vm_boots_and_runs_a_native_trial(image: VmImage, tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    config = emulated(vm_config(SPEC))
    settings = RunSettings(seed=1, min_rounds=1, max_rounds=1, budget_s=900, counters=False)
    t0 = time.monotonic()
    run_id = Runner(store, Journal(tmp_path)).start(RunRequest([config], [workload("intmix")], settings))
    elapsed = time.monotonic() - t0
    run = store.get_run(run_id)
    trials = store.trials(run_id, include_warmup=True)
    assert run.status == "complete", [t.error for t in trials]
    assert len(trials) == 2 and all(t.ok and t.values["iterations"] > 0 and t.user_s > 0 for t in trials)
    facts = run.facts.target(config.name)
    assert facts["boot"]["release"] == image.release and facts["uname_m"] == "i686"
    assert facts["dpkg_arch"] == "i386" and facts["vm"]["accel"] == "tcg"
    assert "-accel" in facts["vm"]["qemu_argv"] and facts["vm"]["shape"] == {"vcpus": 2, "memory_mib": 3072}
    assert is_emulated(run.facts.side(config.name))  # so the analysis gives no verdicts
    assert run.facts.side(config.name)["monitor_samples"]  # sampled inside the guest
    binary = run.facts.side(config.name)["workloads"]["intmix"]["binary"]
    assert (binary["elf_class"], binary["machine"]) == (32, "x86")
    print(f"TCG: boot to SSH {facts['vm']['boot_s']:.0f} s; whole run {elapsed:.0f} s; "
          f"intmix {trials[-1].values['iterations']:.0f} iter/s, trial wall {trials[-1].wall_s:.2f} s")
    serial = next(a for a in facts["vm"]["qemu_argv"] if a.startswith("file:")).removeprefix("file:")
    assert not Path(serial).parent.exists()  # the VM's run directory went with it


def test_a_killed_run_leaves_no_qemu_after_doctor(image: VmImage, tmp_path: Path) -> None:
    home = Path(os.environ.get("SHOOTOUT_HOME", tmp_path))
    script = textwrap.dedent(f"""
        from shootout.system.journal import Journal
        from shootout.places.vm import VmTarget, emulated
        from shootout.places.vm import vm_config
        from shootout.vm import qemu
        boot = qemu.boot
        def announce(*args, **kwargs):
            vm = boot(*args, **kwargs)
            print(vm.proc.pid, vm.dir, flush=True)
            return vm
        qemu.boot = announce
        VmTarget(emulated(vm_config({SPEC!r})), Journal()).open()
    """)
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    pid_text, run_dir = child.stdout.readline().split()
    vm = psutil.Process(int(pid_text))
    assert any("qemu-system" in arg for arg in vm.cmdline())  # (under taskset where cores allow pinning)
    child.send_signal(signal.SIGKILL)  # while the guest boots
    child.wait()
    undone, errors = recover()
    assert errors == []
    assert any("qemu pid" in what for what in undone)
    vm.wait(timeout=30)  # gone: by the parent-death signal, or by doctor's kill
    assert not psutil.pid_exists(vm.pid) or vm.status() == psutil.STATUS_ZOMBIE
    assert not Path(run_dir).exists()


def test_sigkill_of_an_emulated_run_inside_a_trial_leaves_nothing_after_doctor(image: VmImage, tmp_path: Path) -> None:
    """The kill sweep for the VM family, in one boot: `shootout run -c vm:… --emulate` killed
    inside its warm-up trial; after `shootout doctor` nothing of the run is alive (this test is
    a child subreaper: qemu and whatever else the run left would be re-parented here), its
    VM run directory and journal are gone and nothing of it is mounted."""
    home = Path(os.environ["SHOOTOUT_HOME"])  # the cached image's (the spaces fixture's)
    env = {**os.environ, "SHOOTOUT_HOME": str(home), "PYTHONPATH": str(SRC), "SHOOTOUT_LOAD_WAIT": "0s",
           "SHOOTOUT_COUNTERS": "0"}
    shootout = [sys.executable, "-m", "shootout"]
    runs = home / "vm-runs"
    before = set(runs.iterdir()) if runs.exists() else set()
    with subreaper() as left:
        child = subprocess.Popen([*shootout, "run", "-c", SPEC, "--emulate", "-w", "intmix", "--max-rounds", "6",
                                  "--db", f"sqlite:///{tmp_path / 'r.db'}"],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert child.stdout is not None
        seen = []
        for line in child.stdout:  # progress (on stdout in a pipe): the VM has booted when the warm-up begins
            seen.append(line)
            if "warm-up" in line:
                break
        assert any("warm-up" in line for line in seen), "".join(seen)[-2000:]
        time.sleep(2)  # inside the trial
        mine = set(runs.iterdir()) - before
        assert len(mine) == 1
        qemu = [p for p in psutil.Process(child.pid).children() if "qemu-system" in " ".join(p.cmdline())]
        assert qemu
        child.send_signal(signal.SIGKILL)
        child.wait()
        doctor = subprocess.run([*shootout, "doctor"], env=env, capture_output=True, text=True, timeout=300)
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert left() == []
    assert not any(p.exists() for p in mine)
    assert list((home / "journal").glob(f"{child.pid}-*.jsonl")) == []
    assert [line for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if any(str(p) in line for p in mine)] == []


def test_a_kernel_package_that_does_not_exist_is_one_line(spaces: Spaces) -> None:
    spaces.need(I386)
    with journal() as j, pytest.raises(TargetError, match=r"there is no linux-image-no-such-flavour for bookworm/i386") as err:
        build_image(registry.get_ready(I386), "no-such-flavour", j)
    assert "\n" not in str(err.value)
    vm_cache = Path(os.environ["SHOOTOUT_HOME"]) / "cache" / "vm"
    assert not any("no-such-flavour" in p.name for p in vm_cache.iterdir())

"""Machine facts from fake trees (x86 VM, Raspberry Pi)."""

from __future__ import annotations

from pathlib import Path

from shootout.conditions import machinefacts as facts


def write(root: Path, path: str, text: str) -> None:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


X86_CPUINFO = "".join(
    f"processor\t: {n}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2445.406\n"
    "flags\t\t: fpu sse2 pclmulqdq sse4_2 aes avx hypervisor avx2 bmi2 sha_ni vaes\n\n"
    for n in range(4)
)

PI4_CPUINFO = "".join(
    f"processor\t: {n}\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\n\n"
    for n in range(4)
) + "Hardware\t: BCM2835\nRevision\t: c03114\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"


def x86_vm(root: Path) -> Path:
    write(root, "/proc/cpuinfo", X86_CPUINFO)
    write(root, "/sys/devices/system/cpu/online", "0-3\n")
    write(root, "/proc/meminfo", "MemTotal:       16384000 kB\nMemFree: 1 kB\n")
    write(root, "/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
    write(root, "/proc/sys/kernel/hostname", "bench1\n")
    write(root, "/etc/os-release", 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nID=debian\n')
    write(root, "/etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n")
    write(root, "/sys/devices/system/cpu/vulnerabilities/meltdown", "Not affected\n")
    write(root, "/sys/devices/system/cpu/vulnerabilities/spectre_v2", "Mitigation: Retpolines\n")
    write(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "schedutil\n")
    write(root, "/sys/devices/system/cpu/cpufreq/boost", "1\n")
    return root


def test_x86_vm(tmp_path: Path) -> None:
    f = facts.machine_facts(x86_vm(tmp_path))
    assert f["cpu_model"] == "AMD EPYC 7B13"
    assert f["cpu_flags"] == ["aes", "avx", "avx2", "bmi2", "pclmulqdq", "sha_ni", "sse4_2", "vaes"]
    assert f["cores"] == 4
    assert f["memory_bytes"] == 16384000 * 1024
    assert f["kernel"] == "6.1.0-18-amd64"
    assert f["distro"] == "Debian GNU/Linux 12 (bookworm)"
    assert f["virtualization"] == {"vm": "unknown hypervisor", "container": None}
    assert f["governor"] == "schedutil"
    assert f["boost"] == {"control": "cpufreq", "enabled": True}
    assert f["mitigations"] == {"meltdown": "Not affected", "spectre_v2": "Mitigation: Retpolines"}
    assert f["hostname"] == "bench1"
    assert f["board"] is None and f["arch"] is None  # a fake tree has no uname


def test_raspberry_pi(tmp_path: Path) -> None:
    write(tmp_path, "/proc/cpuinfo", PI4_CPUINFO)
    write(tmp_path, "/proc/device-tree/model", "Raspberry Pi 4 Model B Rev 1.4\x00")
    write(tmp_path, "/proc/sys/kernel/arch", "aarch64\n")
    f = facts.machine_facts(tmp_path)
    assert f["cpu_model"] == "Cortex-A72"
    assert f["board"] == "Raspberry Pi 4 Model B Rev 1.4"
    assert f["cpu_flags"] == ["asimd", "crc32"]
    assert f["cores"] == 4  # from the processor lines when /sys has no online list
    assert f["arch"] == "aarch64"
    assert f["virtualization"] == {"vm": None, "container": None}
    assert f["governor"] is None and f["boost"] is None and f["mitigations"] is None


def test_xen_and_container_markers(tmp_path: Path) -> None:
    write(tmp_path, "/proc/cpuinfo", "processor : 0\nflags : fpu\n")
    write(tmp_path, "/sys/hypervisor/type", "xen\n")
    write(tmp_path, "/.dockerenv", "")
    assert facts.virtualization(tmp_path) == {"vm": "xen", "container": "docker"}


def test_empty_root_gives_none_everywhere(tmp_path: Path) -> None:
    f = facts.machine_facts(tmp_path)
    assert set(f) >= {"cpu_model", "cpu_flags", "cores", "memory_bytes", "kernel", "distro", "virtualization",
                      "governor", "boost", "mitigations", "hostname", "machine_id"}
    assert all(v is None for v in f.values())


def test_machine_id_is_stable_hashed_and_falls_back_to_hostname(tmp_path: Path) -> None:
    root = x86_vm(tmp_path)
    first = facts.machine_id(root)
    assert first == facts.machine_id(root) and first is not None
    assert first.startswith("m") and "3d1219c7" not in first  # the raw id never leaves the machine
    (root / "etc/machine-id").unlink()
    by_host = facts.machine_id(root)
    assert by_host is not None and by_host.startswith("h") and by_host != first
    write(root, "/proc/sys/kernel/hostname", "bench2\n")
    assert facts.machine_id(root) != by_host


def test_cpu_list_parsing() -> None:
    assert facts._parse_cpu_list("0") == 1
    assert facts._parse_cpu_list("0-3,6,8-9") == 7
    assert facts._parse_cpu_list("garbage") is None

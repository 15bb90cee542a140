"""Why this machine's answer may differ from the write-up's: the facts the tool knows.

A named experiment's paragraph sets a measured result beside a write-up's. When the two
disagree, a reader must see why wherever shootout can tell: hardware AES or SHA where the
write-up's Pi 4 had none, WireGuard in user space where the write-up ran the kernel's, a
rate at the generator's own ceiling, a storage link emulated by a cgroup throttle, a virtual
machine, 32-bit binaries built for another instruction set than the write-up's (Debian's ARMv7
armhf where the write-up ran Raspberry Pi OS's ARMv6, or i386 on a PC). Each line below is said
only when its fact is in the run (the machine's facts, the configurations' parts and workload
facts, the binaries that ran, the comparisons' flags).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from shootout.base.runfacts import dig
from shootout.counters.baseline import baseline, side_binary

if TYPE_CHECKING:
    from shootout.judge.analysis import Analysis

# workloads whose figures depend on hardware AES / SHA (the write-ups' Pi 4 had neither)
AES_WORKLOADS = ("vpn", "openssl-speed")
AES_FLAGS = ("aes",)  # x86 /proc/cpuinfo flags and arm64 Features both say "aes"
SHA_FLAGS = ("sha_ni", "sha1", "sha2")
# workload -> metric -> the program whose hashing that metric times ("*": every metric)
SHA_PROGRAMS = {"sha1-sparse": {"openssl_mbps": "openssl", "sha1sum_mbps": "sha1sum"}, "openssl-speed": {"*": "openssl"}}
# Libraries with code paths for hardware SHA: a program reaches them only by linking one. glibc has
# none: coreutils' sha1sum, linked to libc alone, hashes in plain C on every CPU.
CRYPTO_LIBRARIES = ("libcrypto.so", "libgcrypt.so", "libnettle.so", "libgnutls.so", "libsodium.so",
                    "libmbedcrypto.so", "libwolfssl.so", "libkcapi.so")
OLD_WIREGUARD_GO = "0.0.20220316"
# Raspberry Pi OS 32-bit (Raspbian) builds for the Pi 1's ARM1176JZF-S, on every Pi: its binaries'
# .ARM.attributes say Tag_CPU_arch v6 and Tag_FP_arch VFPv2 (gcc --with-arch=armv6 --with-fpu=vfp)
RASPBIAN = {"cpu_arch": "v6", "fp_arch": "VFPv2"}


def _workloads(analysis: Analysis) -> set[str]:
    """The run's workloads by name, a VPN workload of another name (vpn-openvpn) also as "vpn"."""
    return {w.name for w in analysis.workloads} | {"vpn" for w in analysis.workloads if w.category == "vpn"}


def _workload_facts(analysis: Analysis, workload: str) -> dict[str, Mapping[str, Any]]:
    """Configuration name -> the facts its workload's prepare() recorded."""
    return {c.name: analysis.facts.workload(c.name, workload) for c in analysis.configs}


def _hardware_crypto(analysis: Analysis, used: set[str]) -> list[str]:
    if all(analysis.facts.target(c.name).get("remote") for c in analysis.configs):
        return []  # every side ran on another machine (ssh): this one's flags say nothing of theirs
    flags = set(analysis.facts.cpu_flags)
    lines = []
    if used & set(AES_WORKLOADS) and flags & set(AES_FLAGS):
        lines.append("this CPU has AES instructions: OpenVPN's AES-GCM and openssl's AES run in hardware here, "
                     "where the write-ups' Pi 4 (Cortex-A72 without the ARMv8 crypto extensions) ran them in "
                     "plain C; WireGuard's ChaCha20-Poly1305 gains nothing from them")
    if sha := sorted(flags & set(SHA_FLAGS)):
        lines += _sha_paths(analysis, used, sha)
    return lines


def reaches_crypto_library(elf: Mapping[str, Any]) -> bool | None:
    """Whether a program (its ELF facts) can take a crypto library's hardware code path: it links
    one. None where its facts do not tell: a run before they were recorded, a static binary."""
    needed = elf.get("needed")
    if needed is None or elf.get("interpreter") is None:
        return None
    return any(library.startswith(CRYPTO_LIBRARIES) for library in needed)


def _program_paths(analysis: Analysis, workload: str, program: str) -> tuple[bool, str]:
    """Whether `program` can take the hardware path on some side of the run (where its facts do
    not tell, it may), and what it links there."""
    elves = [dig(f, "elf", program, default={}) for f in _workload_facts(analysis, workload).values()]
    if any(reaches_crypto_library(elf) is None for elf in elves):
        static = any(elf.get("needed") == [] for elf in elves)
        return True, "statically linked" if static else "its libraries not recorded"
    linked = sorted({lib for elf in elves for lib in elf["needed"]})
    return any(reaches_crypto_library(elf) for elf in elves), f"linked to {', '.join(linked)}"


def _sha_paths(analysis: Analysis, used: set[str], sha: list[str]) -> list[str]:
    """The SHA line, said of the metrics whose program can use the instructions (a crypto library)
    and saying which cannot: sha1-sparse's headline sha1sum links libc alone."""
    can, cannot = [], []
    for workload in sorted(used & set(SHA_PROGRAMS)):
        spec = next(w for w in analysis.workloads if w.name == workload)
        for metric, program in SHA_PROGRAMS[workload].items():
            reach, linked = _program_paths(analysis, workload, program)
            what = workload if metric == "*" else f"{workload} {metric}"
            what += ", its headline" if metric == spec.headline else ""
            (can if reach else cannot).append(f"{what} ({program}, {linked})")
    if not can:
        return []
    line = (f"this CPU has SHA instructions ({', '.join(sha)}): SHA-1/SHA-256 through them are not the Pi 4's "
            f"code path; the programs that can take it: {'; '.join(can)}")
    return [line + (f"; not {'; '.join(cannot)}, which hash in plain C here as on the Pi" if cannot else "")]


def _wireguard(analysis: Analysis) -> list[str]:
    lines = []
    vpns = [w.name for w in analysis.workloads if w.category == "vpn"]  # the vpn workload, or it renamed
    for config, facts in ((c, f) for name in vpns for c, f in _workload_facts(analysis, name).items()):
        tunnel = facts.get("tunnel", {})
        if tunnel.get("kind") != "wireguard":
            continue
        version = dig(facts, "versions", "wireguard-go", default="")
        if tunnel.get("implementation") == "kernel":
            continue
        old = OLD_WIREGUARD_GO in version
        line = (f"{config}: WireGuard in user space, {version or 'wireguard-go'}, not the kernel's module "
                f"the write-up ran (this kernel's: {tunnel.get('kernel_module', 'none')}): each packet crosses "
                "a TUN device and a process" + ("; this release predates wireguard-go's 2023 vectorized I/O and "
                                           "GSO/GRO work, which made it several times faster" if old else ""))
        if line not in lines:
            lines.append(line)
    return lines


def _generator(analysis: Analysis) -> list[str]:
    bound = sorted({f.split()[1] for c in analysis.comparisons for f in c.flags if f.startswith("generator-bound: ")})
    lines = []
    if bound:
        lines.append(f"the rates of {', '.join(bound)} are at the generator's own ceiling (trafgen with nothing "
                     "receiving): they rank the generator, not the drop points; the receive-side cost per packet "
                     "ranks the rungs")
    paths = {f.get("receive_path") for f in _workload_facts(analysis, "drop-rate").values() if f.get("receive_path")}
    if paths:
        lines.append(f"the receive path here: {'; '.join(sorted(paths))}; the anchors' figures are per core of a "
                     "3.6 GHz Xeon receiving from a NIC, not a veth fed by a generator on the same machine")
    if any(c.parts.get("network", {}).get("drop", "").startswith("xdp") for c in analysis.configs):
        lines.append("XDP on a veth fed by a packet socket gets a socket buffer that already exists, its payload "
                     "in page fragments: XDP saves no allocation, and both its generic and veth's native path "
                     "copy such frames first, so it cannot undercut tc here as it does on a NIC")
    return lines


def _emulated_link(analysis: Analysis) -> list[str]:
    throttled = {c.name: c.parts["throttle"] for c in analysis.configs if "throttle" in c.parts}
    if not throttled:
        return []
    rates = ", ".join(f"{name} {t['bps'] / 1e6:g} MB/s" + "".join(f", {n:,} {d}s/s" for d, n in t.get("iops", {}).items())
                      for name, t in throttled.items())
    if any(t.get("iops") for t in throttled.values()):  # a per-request cost is emulated too
        return [f"the storage link is emulated by a cgroup I/O throttle ({rates}) on this machine's disk, not a USB2 "
                "bridge and an SD card: its requests-per-second limit stands in for the bridge's cost per request; "
                "below that limit, latency and the device's own caching are this disk's"]
    return [f"the storage link is emulated by a cgroup I/O throttle ({rates}) on this machine's disk, not a USB2 "
            "bridge and an SD card: latency per request and the device's own caching are this disk's"]


def _swap_memory(analysis: Analysis) -> list[str]:
    """zswap's pool is a share of the machine's RAM and zram's device is kernel memory: neither is
    held to a configuration's memory limit as the write-up's 1 GB Pi was to its RAM."""
    ram = analysis.facts.machine_value("memory_bytes")
    lines = []
    for c in analysis.configs:
        swap, limit = c.parts.get("swap", {}), c.parts.get("memory", {}).get("limit")
        if swap.get("kind") not in ("zswap", "zram") or not limit:
            continue
        share = swap.get("max_pool_percent")
        if swap["kind"] == "zswap":
            pool = f"zswap's pool may take {share}% of this machine's RAM" if share else "zswap's pool is sized by RAM"
            if share and ram:
                pool += f" ({share / 100 * ram / 2**30:.1f} GiB)"
            pool += f", not of its {limit / 2**30:g} GiB memory limit, and it is not charged to that limit"
        else:  # its mem_limit (max_pool_percent) bounds it to a share of the limit, still outside it
            pool = (f"the zram device is kernel memory, not charged to its {limit / 2**30:g} GiB memory limit"
                    + (f" (its mem_limit: at most {share}% of that limit besides it)" if share else ""))
        lines.append(f"{c.name}: {pool} the way a 1 GB Pi's RAM bounds everything: this setup had memory the setups "
                     "without zswap or zram did not")
    return lines


def _browser(analysis: Analysis) -> list[str]:
    """The write-up's Chromium ran on ARM (armhf vs arm64); the ELF machine of the Chromium that
    ran on each side here says which V8 ports were compared."""
    from shootout.workloads.browser.workload import CHROMIUM

    machines = {dig(f, "elf", CHROMIUM, "machine") for w in ("browser", "browser-tabs")
                for f in _workload_facts(analysis, w).values()}
    lines = []
    if "x86" in machines:
        lines.append("the 32-bit Chromium here is i386, V8's ia32 port, beside amd64's x64 port, not armhf beside "
                     "arm64: V8's compiled code has 5 general registers to allocate on ia32 (of its 8; stack, "
                     "frame and root take the others), 9-10 on 32-bit ARM and 11-12 on x64, so the x86 pair is "
                     "further apart in registers than the Pi's was; and V8 has no Maglev (its mid-tier "
                     "optimising compiler) on ia32, where x64 and both ARM ports have one (--trace-opt with Debian's "
                     "Chromium on x86, benchmarks/results/browser32-harness-audit.txt: Maglev and Turbofan on "
                     "amd64, Turbofan alone on i386)")
        json = next((c for c in analysis.comparisons if c.metric == "engine_json" and c.estimate), None)
        if json is not None:
            from shootout.report.text import fmt_estimate

            lines.append(f"the json kernel ({fmt_estimate(json.estimate)} here) is V8's own JSON.stringify and "
                         "JSON.parse, C++ compiled into the browser (for ia32 on the 32-bit side), over a document "
                         "made once outside the timing: a real 32-bit cost, not the harness's; timed alone in both "
                         "browsers (benchmarks/results/browser32-harness-audit.txt) both are slower on i386, doubles "
                         "the most, since their shortest-form formatting works in 64-bit integers")
    if machines & {"x86-64", "aarch64"}:
        lines.append("V8 compresses heap pointers to 32 bits on 64-bit builds (x64 and arm64 alike): the JavaScript "
                     "heap of the 64-bit side is not twice as big, and the pointer-heavy kernels (splay, json) do not "
                     "carry 64-bit pointers; the write-up's explanation (pointers twice the size) holds for the "
                     "browser's C++ objects, not for the page's JavaScript data")
    return lines


def _arm32_level(display: str, what: str, elf: Mapping[str, Any]) -> str | None:
    arm = elf.get("arm") or {}
    if not arm.get("cpu_arch") or all(arm.get(k, "No") == v for k, v in RASPBIAN.items()):
        return None  # not read (a run before they were), or Raspbian's own
    line = (f"{display}: its 32-bit ARM binaries ({what}) are built for {baseline(elf)}, where the write-ups' "
            "Raspberry Pi OS 32-bit is built for ARMv6 with VFPv2 (the Pi 1's ARM1176, on every Pi)")
    if arm.get("float_abi") == "soft":
        return line + ": floating point here goes through software routines, not VFP registers"
    if arm["cpu_arch"].startswith(("v7", "v8")):
        return line + (": the 32-bit code here may use what ARMv7 added (Thumb-2, movw/movt, bit-field "
                       "instructions, VFPv3) where Raspbian's may not: more of the instruction set than the "
                       "write-up's 32-bit side had")
    return line


def _baselines(analysis: Analysis) -> list[str]:
    """What the 32-bit side's binaries were built for, where it is not the write-ups' Raspbian:
    read from a binary that ran on each side (counters/baseline.py), never from a port's name."""
    names = [w.name for w in analysis.workloads]
    lines = []
    for config in analysis.configs:
        what, elf = side_binary(analysis.facts, config.name, names)
        if elf.get("elf_class") != 32:
            continue
        if elf.get("machine") == "arm" and (line := _arm32_level(config.display, what, elf)):
            lines.append(line)
        elif elf.get("machine") == "x86":
            lines.append(f"{config.display}: the 32-bit side is i386 on a PC ({what}: {baseline(elf)}): beside "
                         "x86-64 it does floating point on x87's register stack instead of SSE2 registers and has "
                         "8 general registers instead of 16, a wider gap than the write-ups' armhf beside arm64, "
                         "where both sides do floating point in VFP/NEON registers and 32-bit ARM keeps 16 general "
                         "registers against 31")
    return lines


def _vm(analysis: Analysis) -> list[str]:
    virt = analysis.facts.machine_value("virtualization", default={})
    if not virt.get("vm"):
        return []
    return [f"this machine is a virtual machine ({virt['vm']}): interrupts, inter-processor interrupts and timer "
            "ticks exit to the hypervisor (more so nested), a per-packet and per-request cost bare metal does not "
            "pay"]


def differences(analysis: Analysis) -> list[str]:
    """Lines "why it may differ: ..." for the facts of this run that the write-ups did not share."""
    used = _workloads(analysis)
    lines = _hardware_crypto(analysis, used) + _baselines(analysis)
    if "vpn" in used:
        lines += _wireguard(analysis)
    if "drop-rate" in used:
        lines += _generator(analysis)
    lines += _emulated_link(analysis)
    lines += _swap_memory(analysis)
    if used & {"browser", "browser-tabs"}:
        lines += _browser(analysis)
    if used & {"drop-rate", "vpn", "tcp-veth", "iozone", "fio", "dd-write"}:
        lines += _vm(analysis)
    return [f"why it may differ from the write-up: {line}" for line in lines]

"""An experiment's paragraph says why this machine's answer differs from the write-up's, from
the facts of the run: hardware AES, WireGuard in user space, a generator-bound rate, an
emulated link, a virtual machine; and says nothing of a fact the run does not have."""

from __future__ import annotations

from shootout.base.model import Config, Run, RunSettings, Trial, TrialSpec
from shootout.base.runfacts import RunFacts
from shootout.experiments import EXPERIMENTS
from shootout.judge.analysis import analyze
from shootout.workloads.net import DropRate
from shootout.workloads.swap import Tabs
from shootout.workloads.vpn import Vpn

MACHINE = {"cpu_flags": ["sse2", "aes", "sha_ni"], "virtualization": {"vm": "kvm", "container": None}}


def _run(workload, configs: dict[str, dict], values, machine: dict, parts: dict | None = None):
    trials = [Trial(TrialSpec(r, 0, workload.name, name), values(name, r), 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 9) for name in configs]
    facts = RunFacts(machine=machine, sides={name: {"workloads": {workload.name: f}} for name, f in configs.items()})
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), [Config(n, parts=(parts or {}).get(n, {})) for n in configs],
              [workload], {}, facts)
    return analyze(run, trials)


def test_vpn_says_aes_userspace_wireguard_and_the_vm() -> None:
    configs = {"wireguard": {"tunnel": {"kind": "wireguard", "implementation": "debian", "kernel_module": "no (x)"},
                             "versions": {"wireguard-go": "wireguard-go v0.0.20220316"}},
               "openvpn-aes": {"tunnel": {"kind": "openvpn", "cipher": "AES-256-GCM"}}}
    analysis = _run(Vpn.spec, configs, lambda name, r: {"mbit_s": 700.0 + r if name == "wireguard" else 900.0 - r},
                    MACHINE)
    said = "\n".join(EXPERIMENTS["vpn"].explain(analysis))
    assert "this CPU has AES instructions" in said
    assert "wireguard: WireGuard in user space, wireguard-go v0.0.20220316, not the kernel's" in said
    assert "predates" in said
    assert "virtual machine (kvm)" in said
    bare = "\n".join(EXPERIMENTS["vpn"].explain(_run(Vpn.spec, configs, lambda n, r: {"mbit_s": 800.0 + r},
                                                     {"cpu_flags": ["sse2"], "virtualization": {"vm": None}})))
    assert "AES" not in bare and "virtual machine" not in bare


def test_drop_ladder_says_which_rates_are_the_generators() -> None:
    configs = {"socket": {"receive_path": "softirq, inline"}, "tc": {"receive_path": "softirq, inline"}}
    assert not any("XDP on a veth" in line for line in EXPERIMENTS["drop-ladder"].explain(_run(
        DropRate.spec, configs, lambda name, r: {"rx_ns_per_packet": 700.0 + r}, MACHINE)))
    analysis = _run(DropRate.spec, configs, lambda name, r: {
        "rx_ns_per_packet": (4000.0 if name == "socket" else 700.0) + r,
        "kpps": (150.0 if name == "socket" else 950.0) + r, "gen_ceiling_kpps": 1000.0}, MACHINE)
    lines = EXPERIMENTS["drop-ladder"].explain(analysis)
    bound = next(line for line in lines if line.startswith("why it may differ") and "generator's own ceiling" in line)
    assert bound.startswith("why it may differ from the write-up: the rates of tc are at")
    assert any("the receive path here: softirq, inline" in line for line in lines)



def test_swap_setups_with_memory_outside_the_limit_are_named() -> None:
    spec = Tabs.spec
    head = spec.headline
    configs = {"disk": Config("disk", parts={"memory": {"limit": 2**30}, "swap": {"kind": "disk"}}),
               "zswap": Config("zswap", parts={"memory": {"limit": 2**30},
                                               "swap": {"kind": "zswap", "max_pool_percent": 15}}),
               "zram": Config("zram", parts={"memory": {"limit": 2**29},
                                             "swap": {"kind": "zram", "max_pool_percent": 15}})}
    trials = [Trial(TrialSpec(r, 0, spec.name, name), {head: 10.0 + r}, 5.0, 0.5, 0.1, 1, 1, 0, "", 0.0)
              for r in range(1, 9) for name in configs]
    run = Run(1, 0.0, "complete", RunSettings(max_rounds=8), list(configs.values()), [spec], {},
              RunFacts(machine={"memory_bytes": 24 * 2**30}))
    said = "\n".join(EXPERIMENTS["pi3desk-swap"].explain(analyze(run, trials)))
    assert "zswap: zswap's pool may take 15% of this machine's RAM (3.6 GiB), not of its 1 GiB memory limit" in said
    assert "zram: the zram device is kernel memory, not charged to its 0.5 GiB memory limit (its mem_limit: at most " \
           "15% of that limit besides it) the way a 1 GB Pi's RAM bounds everything: this setup had memory" in said
    assert "disk:" not in said


def test_an_xdp_rung_on_veth_says_why_it_cannot_undercut_tc() -> None:
    configs = {"tc": {}, "xdp-native": {}}
    parts = {name: {"network": {"drop": name}} for name in configs}
    lines = EXPERIMENTS["drop-ladder"].explain(_run(DropRate.spec, configs, lambda name, r: {
        "rx_ns_per_packet": 800.0 + r}, MACHINE, parts))
    assert any("XDP on a veth fed by a packet socket" in line for line in lines)


def test_browser_says_which_v8_ports_ran_and_that_64_bit_v8_compresses_its_pointers() -> None:
    from shootout.workloads.browser import Browser
    from shootout.workloads.browser.workload import CHROMIUM

    def sides(bits64: str, bits32: str) -> dict[str, dict]:
        return {"amd64": {"elf": {CHROMIUM: {"elf_class": 64, "machine": bits64}}},
                "i386": {"elf": {CHROMIUM: {"elf_class": 32, "machine": bits32}}}}

    def said(configs: dict[str, dict]) -> str:
        return "\n".join(EXPERIMENTS["browser32"].explain(_run(
            Browser.spec, configs, lambda name, r: {"todo_runs_per_min": 700.0 + r,
                                                    "engine_json": (150.0 if name == "amd64" else 93.0) + r},
            MACHINE)))

    x86 = said(sides("x86-64", "x86"))
    assert "the 32-bit Chromium here is i386, V8's ia32 port" in x86
    assert "5 general registers to allocate on ia32" in x86 and "no Maglev" in x86
    assert "the json kernel (36.9% slower" in x86 and "a real 32-bit cost, not the harness's" in x86
    assert "V8 compresses heap pointers to 32 bits on 64-bit builds" in x86
    arm = said(sides("aarch64", "arm"))  # the write-up's own pair: no word on ia32
    assert "ia32" not in arm and "json kernel" not in arm and "V8 compresses heap pointers" in arm


def _sha1_sparse(elves: dict[str, dict]):
    from shootout.workloads.crypto import Sha1Sparse

    configs = {name: {"elf": elves} for name in ("amd64", "i386")}
    return _run(Sha1Sparse.spec, configs, lambda name, r: {"sha1sum_mbps": 1000.0 + r, "openssl_mbps": 900.0 + r},
                MACHINE)


def _sha_lines(analysis) -> list[str]:
    return [line for line in EXPERIMENTS["rpi64"].explain(analysis) if "SHA instructions" in line]


LIBC = {"interpreter": "/lib64/ld-linux-x86-64.so.2", "needed": ["libc.so.6"]}
OPENSSL = {"interpreter": "/lib64/ld-linux-x86-64.so.2", "needed": ["libssl.so.3", "libcrypto.so.3", "libc.so.6"]}


def test_the_sha_caveat_names_the_metrics_whose_program_can_take_that_path() -> None:
    """sha1-sparse's headline is coreutils' sha1sum, linked to libc alone: SHA instructions cannot
    explain it; only the openssl sub-metric (libcrypto) can use them."""
    (line,) = _sha_lines(_sha1_sparse({"sha1sum": LIBC, "openssl": OPENSSL}))
    assert "this CPU has SHA instructions (sha_ni)" in line
    assert "the programs that can take it: sha1-sparse openssl_mbps (openssl, linked to libc.so.6, " \
           "libcrypto.so.3, libssl.so.3)" in line
    assert "not sha1-sparse sha1sum_mbps, its headline (sha1sum, linked to libc.so.6)" in line


def test_no_sha_caveat_where_no_program_can_take_that_path() -> None:
    assert _sha_lines(_sha1_sparse({"sha1sum": LIBC, "openssl": LIBC})) == []


def test_a_run_without_the_linked_libraries_keeps_the_caveat_on_every_program() -> None:
    (line,) = _sha_lines(_sha1_sparse({"sha1sum": {"interpreter": "/lib/ld.so"}, "openssl": {}}))
    assert "sha1-sparse sha1sum_mbps, its headline (sha1sum, its libraries not recorded)" in line
    assert "; not " not in line


def _baseline_lines(elves: dict[str, dict], shells: dict[str, dict] | None = None) -> list[str]:
    """The rpi64 paragraph's lines on what each side's binaries were built for, from intmix's
    native kernel (or, where a side recorded none, its userspace's shell)."""
    from shootout.workloads.cpu import IntMix

    configs = {name: ({"elf": {"native kernel": elf}} if elf else {}) for name, elf in elves.items()}
    analysis = _run(IntMix.spec, configs, lambda name, r: {IntMix.spec.headline: 100.0 + r}, MACHINE)
    for name, shell in (shells or {}).items():
        analysis.facts.side_for(name)["target"] = {"shell_elf": shell}
    return [line for line in EXPERIMENTS["rpi64"].explain(analysis) if "built for" in line or "i386 on a PC" in line]


ARMV7 = {"machine": "arm", "elf_class": 32, "arm": {"float_abi": "hard", "cpu_arch": "v7", "profile": "Application",
                                                     "fp_arch": "VFPv3-D16", "thumb": "Thumb-2"}}
RASPBIAN = {"machine": "arm", "elf_class": 32, "arm": {"float_abi": "hard", "cpu_arch": "v6", "fp_arch": "VFPv2",
                                                        "thumb": "Thumb-1"}}
ARM64 = {"machine": "aarch64", "elf_class": 64}


def test_a_debian_armhf_side_is_said_to_be_armv7_where_the_write_up_ran_raspbian_armv6() -> None:
    (line,) = _baseline_lines({"arm64": ARM64, "armhf": ARMV7})
    assert line.startswith("why it may differ from the write-up: armhf: its 32-bit ARM binaries (intmix's native "
                           "kernel) are built for ARMv7-A, VFPv3-D16, hard float, Thumb-2, NEON not assumed, where "
                           "the write-ups' Raspberry Pi OS 32-bit is built for ARMv6 with VFPv2")
    assert line.endswith("more of the instruction set than the write-up's 32-bit side had")
    # Raspbian's own binaries (an OS image) match the write-up: nothing to say; nor where none was read
    assert _baseline_lines({"arm64": ARM64, "raspbian": RASPBIAN}) == []
    assert _baseline_lines({"arm64": ARM64, "armhf": {"machine": "arm", "elf_class": 32}}) == []


def test_the_shell_says_it_where_no_workload_binary_was_recorded_and_armel_is_soft_float() -> None:
    armel = {"machine": "arm", "elf_class": 32, "arm": {"float_abi": "soft", "cpu_arch": "v5TE", "thumb": "Thumb-1"}}
    (line,) = _baseline_lines({"arm64": ARM64, "armel": {}}, shells={"armel": armel})
    assert "armel: its 32-bit ARM binaries (its shell) are built for ARMv5TE, soft float" in line
    assert line.endswith("floating point here goes through software routines, not VFP registers")


def test_an_i386_side_is_said_to_lack_sse2_and_half_the_registers_unlike_armhf_beside_arm64() -> None:
    (line,) = _baseline_lines({"amd64": {"machine": "x86-64", "elf_class": 64}, "i386": {"machine": "x86", "elf_class": 32}})
    assert "i386: the 32-bit side is i386 on a PC (intmix's native kernel: i686: x87 floating point" in line
    assert "8 general registers instead of 16, a wider gap than the write-ups' armhf beside arm64" in line

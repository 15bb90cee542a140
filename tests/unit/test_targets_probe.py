"""What a target is, asked through its run(): sizing facts and the userspace's identity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shootout.base.errors import ToolMissing
from shootout.base.model import Config
from shootout.execution import placefacts as probe
from shootout.execution.process import Background, ProcResult, Stdin
from shootout.places.target import Target


class ScriptedTarget(Target):
    """Answers commands from a table; a command not in it is not installed."""

    def __init__(self, answers: dict[str, tuple[int, str, str]]) -> None:
        super().__init__(Config("scripted"))
        self.answers = answers

    def workdir(self) -> str:
        return "/nonexistent"

    def run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
            cwd: str | None = None, timeout: float = 3600.0, stdin: Stdin = None,
            wrap: Sequence[str] = ()) -> ProcResult:
        key = " ".join(argv)
        if key not in self.answers:
            raise ToolMissing(argv[0], argv[0])
        status, out, err = self.answers[key]
        return ProcResult(tuple(argv), status, out, err, 0.01, 0.0, 0.0, 1000, 1, 0.0)

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> Background:
        raise NotImplementedError


def test_identity_of_a_glibc_userspace() -> None:
    target = ScriptedTarget({
        "getconf GNU_LIBC_VERSION": (0, "glibc 2.36\n", ""),
        "cc --version": (0, "cc (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022\n", ""),
        "openssl version": (0, "OpenSSL 3.0.11 19 Sep 2023\n", ""),
        "uname -m": (0, "x86_64\n", ""),
        "dpkg --print-architecture": (0, "i386\n", ""),
        "cat /etc/os-release": (0, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n', ""),
    })
    assert probe.identity(target) == target.facts() == {
        "libc": "glibc 2.36", "cc": "cc (Debian 12.2.0-14) 12.2.0", "openssl": "OpenSSL 3.0.11 19 Sep 2023",
        "uname_m": "x86_64", "dpkg_arch": "i386", "distro": "Debian GNU/Linux 12 (bookworm)",
    }


def test_identity_tolerates_absence_and_musl() -> None:
    target = ScriptedTarget({
        "getconf GNU_LIBC_VERSION": (1, "", "getconf: Unrecognized variable\n"),
        "ldd --version": (1, "", "musl libc (x86_64)\nVersion 1.2.4\n"),
        "openssl version": (127, "", "sh: openssl: not found\n"),
        "uname -m": (0, "x86_64\n", ""),
    })
    assert probe.identity(target) == {
        "libc": "musl libc (x86_64)", "cc": None, "openssl": None, "uname_m": "x86_64",
        "dpkg_arch": None, "distro": None,
    }


SIZING_OUTPUT = """section cores
4
section meminfo
MemTotal:        8000000 kB
MemFree:          100000 kB
MemAvailable:    6000000 kB
section caches
1 Data 48K
1 Instruction 32K
2 Unified 2048K
3 Unified 96M
"""


def test_sizing_reads_cores_memory_and_data_caches_from_the_target() -> None:
    target = ScriptedTarget({f"sh -c {probe._SIZING}": (0, SIZING_OUTPUT, "")})
    facts = target.probe()
    assert facts == probe.TargetFacts(cores=4, memory_bytes=8_000_000 * 1024, available_bytes=6_000_000 * 1024,
                                      caches_kib={"l1": 48, "l2": 2048, "l3": 96 * 1024})
    assert target.probe() is facts  # asked once per target


def test_sizing_of_a_target_that_cannot_tell_is_unknown_not_an_error() -> None:
    assert ScriptedTarget({}).probe() == probe.TargetFacts()
    bare = ScriptedTarget({f"sh -c {probe._SIZING}": (0, "section cores\nsection meminfo\nsection caches\n", "")})
    assert bare.probe() == probe.TargetFacts()


def test_cache_lines_skip_instruction_caches_tiny_sizes_and_garbage() -> None:
    text = "1 Instruction 64K\n1 Data 32K\n2 Unified 512\n4 Unified 64M\nbad line\n3 Unified 8M\n"
    assert probe.parse_caches(text) == {"l1": 32, "l3": 8 * 1024}

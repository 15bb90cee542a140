"""Compile the native C kernels with each configuration's own compiler and ABI flags.

Binaries are cached in the target's cache directory, keyed by the sources (the kernel and
the header the kernels share), the compiler's identity, the flags and the target, so every
configuration builds its own once.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from shootout.elf import elf_identity
from shootout.errors import TargetError, ToolMissing
from shootout.model import Config
from shootout.targets.base import Target

ABI_FLAGS: dict[str | None, tuple[str, ...]] = {None: (), "m32": ("-m32",), "mx32": ("-mx32",)}
BASE_FLAGS = ("-O2", "-std=gnu11")
# Which Debian package makes `cc -<abi>` work on x86-64
ABI_PACKAGES = {"m32": "gcc-multilib", "mx32": "gcc-multilib (and libc6-dev-x32)"}
# Helpers every kernel #includes; it is copied next to the .c so the quoted include finds it
KERNEL_HEADER = "kernel.h"


@dataclass(frozen=True)
class Binary:
    path: str  # as seen inside the target
    host_path: Path
    facts: dict[str, Any]


def kernel_sources(kernel: str) -> dict[str, bytes]:
    """File name -> content of everything compiling this kernel reads: its .c and the shared header."""
    package = resources.files("shootout.workloads.native")
    return {name: (package / name).read_bytes() for name in (f"{kernel}.c", KERNEL_HEADER)}


def compile_flags(config: Config) -> list[str]:
    if config.abi not in ABI_FLAGS:
        raise TargetError(f"unknown ABI {config.abi!r} in configuration {config.name}", "use m32 or mx32")
    return [*BASE_FLAGS, *ABI_FLAGS[config.abi], *config.cflags]


def compiler_version(target: Target, cc: str) -> str:
    if target.which(cc) is None:
        raise ToolMissing(cc, "gcc", where=target.config.display)
    result = target.run([cc, "--version"], timeout=60)
    return (result.stdout.splitlines() or ["?"])[0].strip()


def build_native(target: Target, kernel: str, config: Config) -> Binary:
    """Compile kernel.c for this configuration (cached) and return where it is and what it is."""
    sources = kernel_sources(kernel)
    flags = compile_flags(config)
    cc_version = compiler_version(target, config.cc)
    key = hashlib.sha256(
        b"\0".join([*sources.values(), config.cc.encode(), cc_version.encode(), " ".join(flags).encode(),
                    f"{config.target}:{config.userspace}".encode()])
    ).hexdigest()[:16]
    build_dir = target.cachedir / "native" / f"{kernel}-{key}"
    binary = build_dir / kernel
    if not binary.exists():
        shutil.rmtree(build_dir, ignore_errors=True)  # a directory left without its binary
        build_dir.parent.mkdir(parents=True, exist_ok=True)
        # A private directory per build: two shootout processes sharing the cache never
        # delete each other's binary; the first rename wins and both use its result.
        tmp = Path(tempfile.mkdtemp(prefix=f".{build_dir.name}-", dir=build_dir.parent))
        for name, content in sources.items():
            (tmp / name).write_bytes(content)
        argv = [config.cc, *flags, "-o", target.inside(tmp / kernel), target.inside(tmp / f"{kernel}.c"), "-lm"]
        result = target.run(argv, timeout=300)
        if result.exit_status != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            hint = f"install {ABI_PACKAGES[config.abi]}" if config.abi else "check the compiler and CFLAGS"
            raise TargetError(
                f"{config.cc} {' '.join(flags)} cannot build {kernel} for {config.display}: "
                f"{result.stderr_tail(1) or 'exit ' + str(result.exit_status)}",
                hint,
            )
        try:
            tmp.rename(build_dir)  # atomic: a half-built binary is never picked up
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # built meanwhile by another process
    facts = {"compiler": cc_version, "cc": config.cc, "flags": " ".join(flags), **elf_identity(binary)}
    return Binary(path=target.inside(binary), host_path=binary, facts=facts)

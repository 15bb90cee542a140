"""Compile C programs inside the target they run on, with its own compiler.

The one compile path of shootout: the native kernels (each configuration's compiler, ABI
flags and CFLAGS), the clock loop (the host's compiler) and the probe that checks whether a
compiler ABI works here. The sources are put into the target and built there; the binary
is kept in the target's cache directory, keyed by the sources, the compiler's identity and
the flags, so every target builds each program once.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.model import Config
from shootout.execution.elf import HEAD_BYTES, place_identity
from shootout.execution.place import Place

# The compiler ABIs of the host kind (host+m32, host+mx32): the flags, and the package that makes them work
ABI_FLAGS: dict[str | None, tuple[str, ...]] = {None: (), "m32": ("-m32",), "mx32": ("-mx32",)}
ABI_PACKAGES = {"m32": "gcc-multilib", "mx32": "gcc-multilib (and libc6-dev-x32)"}


BASE_FLAGS = ("-O2", "-std=gnu11")
# Helpers every kernel #includes; it is put next to the .c so the quoted include finds it
KERNEL_HEADER = "kernel.h"
# Rename the finished build into place unless another process got there first.
_COMMIT = '[ -e "$2/$3" ] || rm -rf -- "$2"; mv -T -- "$1" "$2" 2>/dev/null || rm -rf -- "$1"'


@dataclass(frozen=True)
class Binary:
    path: str  # as seen inside the target
    facts: dict[str, Any]  # compiler, cc, flags and the binary's ELF identity


def kernel_sources(kernel: str) -> dict[str, bytes]:
    """File name -> content of everything compiling this kernel reads: its .c and the shared header."""
    package = resources.files("shootout.workloads.native")
    return {name: (package / name).read_bytes() for name in (f"{kernel}.c", KERNEL_HEADER)}


def compile_flags(config: Config) -> list[str]:
    if config.abi not in ABI_FLAGS:
        raise TargetError(f"unknown ABI {config.abi!r} in configuration {config.name}", "use m32 or mx32")
    return [*BASE_FLAGS, *ABI_FLAGS[config.abi], *config.cflags]


def require_compiler(target: Place, cc: str | None = None) -> str:
    """The C compiler (default: the configuration's); ToolMissing naming gcc when it is absent."""
    cc = cc or target.config.cc
    if target.which(cc) is None:
        raise ToolMissing(cc, "gcc", where=target.config.display)
    return cc


def compiler_version(target: Place, cc: str) -> str:
    result = target.run([require_compiler(target, cc), "--version"], timeout=60)
    return (result.stdout.splitlines() or ["?"])[0].strip()


def compile_c(target: Place, name: str, sources: dict[str, bytes], flags: Sequence[str], *, cc: str = "cc",
              into: str | None = None, hint: str = "check the compiler and CFLAGS") -> Binary:
    """Build `name` from sources (`name`.c and what it includes) in the target; cached under
    `into` (default: the target's cache directory)."""
    cc_version = compiler_version(target, cc)
    key = hashlib.sha256(b"\0".join([*sources.values(), cc.encode(), cc_version.encode(),
                                     " ".join(flags).encode()])).hexdigest()[:16]
    build_dir = f"{into or target.cache_dir() + '/native'}/{name}-{key}"
    binary = f"{build_dir}/{name}"
    if not target.exists(binary):
        # A private directory per build: two shootout processes sharing the cache never
        # delete each other's binary; the first rename wins and both use its result.
        tmp = f"{build_dir}.{secrets.token_hex(4)}.tmp"
        for file, content in sources.items():
            target.put(content, f"{tmp}/{file}")
        result = target.run([cc, *flags, "-o", f"{tmp}/{name}", f"{tmp}/{name}.c", "-lm"], timeout=300)
        if result.exit_status != 0:
            target.remove(tmp)
            raise TargetError(f"{cc} {' '.join(flags)} cannot build {name} for {target.config.display}: "
                              f"{result.stderr_tail(1) or 'exit ' + str(result.exit_status)}", hint)
        target.run(["sh", "-c", _COMMIT, "commit", tmp, build_dir, name], timeout=60)
    identity = place_identity(target, binary, target.read(binary, HEAD_BYTES))
    return Binary(binary, {"compiler": cc_version, "cc": cc, "flags": " ".join(flags), **identity})


def build_native(target: Place, kernel: str) -> Binary:
    """Compile a native kernel for the target's configuration (cached)."""
    config = target.config
    hint = f"install {ABI_PACKAGES[config.abi]}" if config.abi in ABI_PACKAGES else "check the compiler and CFLAGS"
    return compile_c(target, kernel, kernel_sources(kernel), compile_flags(config), cc=config.cc, hint=hint)

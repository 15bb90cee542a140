"""A current wireguard-go, built from the Go module proxy for the side's architecture.

Debian bookworm packages wireguard-go 0.0.20220316, older than the project's 2023 work on
vectorized I/O and UDP GSO/GRO that made it several times faster; measuring that one answers
"how fast was wireguard-go in 2022", not "how fast is WireGuard as users run it". Where the
kernel has no WireGuard module, shootout therefore builds the pinned module version below with
the host's Go toolchain (go >= 1.21 fetches the toolchain the module asks for through the same
proxy), statically (CGO_ENABLED=0), for the target's Debian architecture, and puts the binary
into the trial's directory. The distribution's package stays available on request
(vpn = { wireguard = "debian" }).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing
from shootout.base.paths import cache_dir
from shootout.execution.tools import find_tool

MODULE = "golang.zx2c4.com/wireguard"
VERSION = "v0.0.0-20260522210424-ecfc5a8d5446"  # the proxy's latest on 2026-11-26
RELEASE = "0.0.20250522"  # what that version's `wireguard-go --version` says
# Debian architecture -> (GOARCH, extra environment)
GOARCH: dict[str, tuple[str, dict[str, str]]] = {
    "amd64": ("amd64", {}),
    "i386": ("386", {}),
    "arm64": ("arm64", {}),
    "armhf": ("arm", {"GOARM": "7"}),
    "armel": ("arm", {"GOARM": "5"}),
}
BUILD_TIMEOUT_S = 900
TOOLCHAIN = "go1.23.1"  # what the module's go.mod asks for
SWITCHING = (1, 21)  # the first go that fetches the toolchain a module asks for by itself


def go_tool() -> str:
    """The host's go (Debian: golang-go; also /usr/local/go/bin)."""
    found = find_tool("go", also=("/usr/local/go/bin",))
    if found is None:
        raise ToolMissing("go", "golang-go")
    return found


def _go(go: str, args: list[str], env: dict[str, str], what: str) -> str:
    try:
        done = subprocess.run([go, *args], env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise TargetError(f"{what} took over {BUILD_TIMEOUT_S} s",
                          "check that the Go module proxy is reachable (GOPROXY)") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
        raise TargetError(f"{what} failed: {said}",
                          "check GOPROXY and the go version, or use vpn = { wireguard = \"debian\" }")
    return done.stdout.strip()


def toolchain(go: str, env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A go that can build the module, and its environment: the host's from 1.21 on (it switches
    toolchains itself), else TOOLCHAIN downloaded as the module golang.org/toolchain."""
    version = _go(go, ["env", "GOVERSION"], env, "go env GOVERSION")
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers >= SWITCHING:
        return go, env
    host = _go(go, ["env", "GOHOSTARCH"], env, "go env GOHOSTARCH")
    module = f"golang.org/toolchain@v0.0.1-{TOOLCHAIN}.linux-{host}"
    root = Path(json.loads(_go(go, ["mod", "download", "-json", module], env, f"downloading {module}"))["Dir"])
    for tool in [*(root / "bin").iterdir(), *(root / "pkg" / "tool" / f"linux_{host}").iterdir()]:
        tool.chmod(0o755)  # module zips keep no modes (the go command does the same when it switches)
    return str(root / "bin" / "go"), {**env, "GOROOT": str(root), "GOTOOLCHAIN": "local"}


def describe(arch: str) -> str:
    return f"wireguard-go {RELEASE} ({MODULE}@{VERSION}, built for {arch} from the Go module proxy)"


def build(arch: str) -> Path:
    """The binary for a Debian architecture (cached by module version and architecture)."""
    if arch not in GOARCH:
        raise TargetError(f"no Go port for the Debian architecture {arch!r}",
                          'use the userspace\'s own package: vpn = { wireguard = "debian" }')
    out = cache_dir() / "wireguard-go" / f"{VERSION}-{arch}" / "wireguard-go"
    if out.exists():
        return out
    goarch, extra = GOARCH[arch]
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        env = {**os.environ, "GOPATH": tmp, "GOFLAGS": "-trimpath -modcacherw", "CGO_ENABLED": "0",
               "GOOS": "linux", "GOARCH": goarch, **extra}
        env.setdefault("GOMODCACHE", str(cache_dir() / "gomod"))
        go, env = toolchain(go_tool(), env)
        _go(go, ["install", f"{MODULE}@{VERSION}"], env, f"building wireguard-go for {arch}")
        bindir = Path(tmp) / "bin"
        built = next((p for p in bindir.rglob("wireguard") if p.is_file()), None)
        if built is None:
            raise TargetError("go install made no wireguard binary", f"look under {bindir}")
        os.replace(built, out)  # atomic: two runs building at once both end with a whole binary
    return out

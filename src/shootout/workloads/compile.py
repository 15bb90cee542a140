"""`build`: a timed `make -jN` of a real C code base with the userspace's own compiler.

By default the code base is Lua 5.4.4 as Debian bookworm ships it (source package lua5.4,
version pinned, the upstream tarball checked against the sha256 in Debian's .dsc): plain
Makefiles, no configure step, no dependencies beyond a C compiler and make. The tarball is
fetched once into the cache, with `apt-get source` where deb-src lines are configured and
otherwise from the Debian archive's pool over HTTP. A directory the user names (param
`source_dir`) is built instead when given; its ./configure, if any, runs during prepare.

The sources are put into the target and unpacked there. Each trial copies the prepared tree
to a fresh directory on tmpfs (untimed) and times only make, so every trial compiles everything.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shootout.base.errors import UsageError, WorkloadError
from shootout.base.model import Metric, WorkloadSpec
from shootout.base.paths import cache_dir
from shootout.execution.build import ABI_FLAGS, require_compiler
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.execution.tools import find_tool
from shootout.execution.versions import tool_version
from shootout.places.target import Target
from shootout.workloads.contract import Context, Prepared, Tool, Workload
from shootout.workloads.shell import Step, q, run_checked, step_seconds, timed_argv


@dataclass(frozen=True)
class Source:
    """A Debian source package's upstream tarball, pinned by the sha256 its .dsc gives."""

    package: str
    version: str  # the Debian version `apt-get source` asks for
    tarball: str
    sha256: str
    pool: str = "debian/pool/main"  # where the archive keeps it (the pool URL, without deb-src lines)

    @property
    def pool_url(self) -> str:
        return f"http://deb.debian.org/{self.pool}/{self.package[0]}/{self.package}/{self.tarball}"


LUA = Source("lua5.4", "5.4.4-3+deb12u1", "lua5.4_5.4.4.orig.tar.gz",
             "164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61")
PACKAGE, VERSION, TARBALL, TARBALL_SHA256, POOL_URL = LUA.package, LUA.version, LUA.tarball, LUA.sha256, LUA.pool_url


def unpack(target: Target, tarball: str, tree: str, what: str) -> None:
    """A source tarball unpacked into `tree` on the target, its top directory stripped."""
    run_checked(target, ["sh", "-c", 'mkdir -p "$2" && tar -xf "$1" -C "$2" --strip-components=1',
                         "unpack", tarball, tree], what)


def build_versions(target: Target) -> dict[str, str]:
    """The versions a build's time depends on: make and the side's compiler."""
    return {"make": tool_version(target, ["make", "--version"]),
            "compiler": tool_version(target, [target.config.cc, "--version"])}


def make_step(prepared: Prepared, params: dict[str, Any]) -> Step:
    """The timed make in a fresh copy of the tree; its log's tail is the error when it fails."""
    work = q(prepared.files["work"])
    args = " ".join(q(a) for a in prepared.facts["make_args"])
    return Step("make", f"make -j{int(params['jobs'])} -C {work} {args} > {work}.log 2>&1 "
                        f"|| {{ tail -5 {work}.log >&2; exit 1; }}")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _apt_source(dest: Path, source: Source) -> bool:
    """`apt-get source --download-only` into dest; False when no deb-src line knows the package."""
    if find_tool("apt-get") is None:
        return False
    proc = subprocess.run(["apt-get", "source", "--download-only", "-qq", f"{source.package}={source.version}"],
                          cwd=dest, capture_output=True, text=True, timeout=600)
    return proc.returncode == 0 and (dest / source.tarball).exists()


def pinned_tarball(source: Source = LUA, who: str = "build") -> Path:
    """The pinned source tarball in the cache, fetched and verified once."""
    path = cache_dir() / "sources" / source.tarball
    if path.exists() and _sha256(path) == source.sha256:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        got = Path(tmp) / source.tarball
        if not _apt_source(Path(tmp), source):
            try:
                with urllib.request.urlopen(source.pool_url, timeout=120) as resp, open(got, "wb") as out:
                    shutil.copyfileobj(resp, out)
            except OSError as exc:
                raise WorkloadError(f"{who}: cannot fetch {source.tarball} (Debian source package {source.package} "
                                    f"{source.version}): {exc}",
                                    f"put the file in {path.parent}" + (", or set source_dir to a C project"
                                                                        if source == LUA else "")) from None
        if _sha256(got) != source.sha256:
            raise WorkloadError(f"{who}: {source.tarball} does not match its pinned sha256", "delete it and retry")
        got.rename(path)
    return path


class Build(Workload):
    spec = WorkloadSpec(
        name="build",
        category="build",
        description="make -jN of a real C code base (Debian's lua5.4 5.4.4 by default), tmpfs, from clean",
        metrics=(Metric("make_s", "s", "wall time of make -jN from a clean tree"),),
        headline="make_s",
        reproduces="D: time to build a C program (iozone3), 32-bit vs 64-bit",
    )
    tools = (Tool("make", "make"), Tool("cp", "coreutils"), Tool("date", "coreutils"), Tool("bash", "bash"), Tool("tar", "tar"),
             Tool("gzip", "gzip"))
    packages = ("gcc", "libc6-dev")

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"source_dir": None, "jobs": facts.cores or 1, "make_args": [], "configure_args": []}

    def check_tools(self, target: Target) -> None:
        super().check_tools(target)
        require_compiler(target)

    def _cc(self, target: Target) -> str:
        config = target.config
        return " ".join([config.cc, *ABI_FLAGS.get(config.abi, ()), *config.cflags])

    def prepare(self, ctx: Context) -> Prepared:
        target, params = ctx.target, ctx.params
        tree = f"{ctx.workdir()}/src"
        cc = self._cc(target)
        if params.get("source_dir"):
            source = Path(params["source_dir"]).expanduser()
            if not source.is_dir():
                raise UsageError(f"build: source_dir {source} is not a directory", "name a C project directory")
            target.put_tree(source, tree)
            facts: dict[str, Any] = {"source": str(source)}
            make_args = list(params.get("make_args", []))
            if target.exists(f"{tree}/configure") and not target.exists(f"{tree}/Makefile"):
                run_checked(target, ["sh", "-c", f"cd {q(tree)} && CC={q(cc)} ./configure "
                                     + " ".join(q(a) for a in params.get("configure_args", []))],
                            "build: ./configure", timeout=1800)
        else:
            tarball = ctx.put(TARBALL, pinned_tarball())
            unpack(target, tarball, tree, "build: unpacking the Lua sources")
            facts = {"source": f"{PACKAGE} {VERSION}", "input_sha256": TARBALL_SHA256}
            # Lua's own Makefile: CC carries the ABI flag so the objects and the link agree
            make_args = ["-C", "src", "linux", f"CC={cc} -std=gnu99", *params.get("make_args", [])]
        facts.update(cc=cc, make_args=make_args)
        return Prepared(files={"tree": tree, "work": f"{ctx.workdir()}/tree"}, facts=facts,
                        versions=build_versions(target))

    def cpus(self, params: dict[str, Any]) -> int:
        return max(1, int(params.get("jobs") or 1))  # make -jN

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        tree, work = q(prepared.files["tree"]), q(prepared.files["work"])
        setup = f"rm -rf {work}; cp -a {tree} {work}"
        after = f"rm -rf {work} {work}.log"
        if prepared.facts.get("input_sha256") == TARBALL_SHA256:
            after = f"{work}/src/lua -e 'print(\"built \" .. _VERSION)'\n" + after
        return timed_argv([make_step(prepared, params)], setup=setup, after=after)

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        seconds = step_seconds(result, ["make"])
        if not params.get("source_dir") and "built Lua 5.4" not in result.stdout:
            raise WorkloadError("build: the Lua interpreter was not built", "run make in the Lua tree by hand")
        return {"make_s": seconds["make"]}


WORKLOADS = (Build,)

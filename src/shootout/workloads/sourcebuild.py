"""The builds write-up D timed, from Debian's own source packages: iozone3, and 7-Zip's lzma.

Each side compiles the same pinned upstream tarball of a Debian source package with its own
compiler, inside its userspace (or with the configuration's -m32/-mx32 on the host). The tarball
is fetched once into the cache like `build`'s Lua (compile.pinned_tarball: `apt-get source` where
deb-src lines are configured, else the Debian archive's pool over HTTP), unpacked in prepare;
each trial copies the tree to a fresh directory on tmpfs (untimed), times `make -jN` with the
makefile the package builds with, and checks that the program it built runs.

- iozone-build: iozone3 489-1 (non-free, bookworm's), `make -C src/current TARGET` with the
  makefile's target for the side's CPU (linux-AMD64, linux-arm, else linux), CC set and the
  makefile's own flags (-O3), not dpkg-buildflags' CFLAGS/LDFLAGS: Debian's rules for 489-1 could
  not be read here (benchmarks/results/iozone-build-amd64-i386.txt builds the tree with those flags
  once). Upstream's makefile under -j compiles libbif.c and libasync.c twice (make's implicit
  rule beside the iozone_TARGET.o recipe), on both sides alike.
- 7zip-build: 7-Zip 26.01 as bookworm's package 7zip ships it, built with the makefile Debian's
  rules use (CPP/7zip/cmpl_gcc.mak), but its lzma program (Bundles/LzmaCon: the LZMA codec, its
  match finders and the console, 51 C and C++ objects) instead of Debian's 7zz (Alone2, every
  format): 7zz takes minutes a side on 2 cores, and 7zr (Alone7z, 171 objects) took 56 s on this
  2-core machine while it was busy (lzma: 15 s then, 4 s when quiet); the experiment's rounds must
  stay well under a minute to reach verdicts within its 12 minutes on a busy machine.
"""

from __future__ import annotations

from typing import Any, ClassVar

from shootout.base.errors import WorkloadError
from shootout.base.model import Config, Metric, WorkloadSpec
from shootout.execution.build import ABI_FLAGS, require_compiler
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.places.target import Target
from shootout.workloads.compile import (
    Source,
    build_versions,
    make_step,
    pinned_tarball,
    unpack,
)
from shootout.workloads.contract import Context, Prepared, Tool, Workload
from shootout.workloads.shell import q, run_checked, step_seconds, timed_argv

IOZONE = Source("iozone3", "489-1", "iozone3_489.orig.tar.gz",
                "48f56ab4ef3e2883d98faa1f1203f55d7569f6f06beaa61803e113bd9de0ad2e", pool="debian/pool/non-free")
SEVENZIP = Source("7zip", "22.01+really26.01+dfsg-0+deb12u1", "7zip_22.01+really26.01+dfsg.orig.tar.xz",
                  "ae0caa31cd8b95b25ede66e048781a268748f8342fbdf273ba9d91f7b4468022")
# iozone's makefile has one target per platform; by the multiarch tuple of the side's compiler
IOZONE_TARGETS = {"x86_64-linux-gnu": "linux-AMD64", "aarch64-linux-gnu": "linux-arm",
                  "arm-linux-gnueabihf": "linux-arm"}


def abi_flags(config: Config) -> list[str]:
    return [*ABI_FLAGS.get(config.abi, ()), *config.cflags]


class SourceBuild(Workload):
    """make -jN of a pinned Debian source tarball's program, from a clean copy of the tree."""

    source: ClassVar[Source]
    program: ClassVar[str]  # the built program, relative to the tree
    tools = (Tool("make", "make"), Tool("cp", "coreutils"), Tool("date", "coreutils"), Tool("bash", "bash"), Tool("tar", "tar"),
             Tool("gzip", "gzip"), Tool("xz", "xz-utils"))
    packages = ("gcc", "libc6-dev")

    def default_params(self, facts: TargetFacts) -> dict[str, Any]:
        return {"jobs": facts.cores or 1}

    def check_tools(self, target: Target) -> None:
        super().check_tools(target)
        require_compiler(target)

    def make_args(self, target: Target) -> list[str]:
        """make's arguments after -C TREE, for this side's compiler."""
        raise NotImplementedError

    def prepare(self, ctx: Context) -> Prepared:
        target = ctx.target
        tree = f"{ctx.workdir()}/src"
        tarball = ctx.put(self.source.tarball, pinned_tarball(self.source, self.spec.name))
        unpack(target, tarball, tree, f"{self.spec.name}: unpacking {self.source.tarball}")
        make_args = self.make_args(target)
        facts = {"source": f"{self.source.package} {self.source.version}", "input_sha256": self.source.sha256,
                 "make_args": make_args, "program": self.program}
        return Prepared(files={"tree": tree, "work": f"{ctx.workdir()}/tree"}, facts=facts,
                        versions=build_versions(target))

    def cpus(self, params: dict[str, Any]) -> int:
        return max(1, int(params.get("jobs") or 1))  # make -jN

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        tree, work = q(prepared.files["tree"]), q(prepared.files["work"])
        program = f"{work}/{q(prepared.facts['program'])}"
        # the program must run: its banner's first line, after the timed step
        after = f"echo \"built $({program} {self.banner_args} 2>&1 | grep -m1 -i '{self.banner}')\"\nrm -rf {work} {work}.log"
        return timed_argv([make_step(prepared, params)], setup=f"rm -rf {work}; cp -a {tree} {work}", after=after)

    banner_args: ClassVar[str] = ""
    banner: ClassVar[str]  # a word of the first line the built program prints

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        seconds = step_seconds(result, ["make"])
        built = [ln for ln in result.stdout.splitlines() if ln.startswith("built ")]
        if not built or self.banner.lower() not in built[0].lower():
            raise WorkloadError(f"{self.spec.name}: the built {self.program} did not run",
                                f"run make in the {self.source.package} tree by hand")
        return {"make_s": seconds["make"]}


class IozoneBuild(SourceBuild):
    spec = WorkloadSpec(
        name="iozone-build",
        category="build",
        description="make -jN of iozone3 489 (Debian's non-free source package), tmpfs, from clean",
        metrics=(Metric("make_s", "s", "wall time of make -jN from a clean tree"),),
        headline="make_s",
        reproduces="D: time to build iozone3, 32-bit vs 64-bit",
    )
    source = IOZONE
    program = "src/current/iozone"
    banner_args = "-v"
    banner = "iozone"

    def make_args(self, target: Target) -> list[str]:
        cc = " ".join([target.config.cc, *abi_flags(target.config)])
        tuple_ = run_checked(target, [target.config.cc, *abi_flags(target.config), "-print-multiarch"],
                             "iozone-build: asking the compiler for its target").stdout.strip()
        return ["-C", "src/current", IOZONE_TARGETS.get(tuple_, "linux"), f"CC={cc}", f"GCC={cc}"]


class SevenZipBuild(SourceBuild):
    spec = WorkloadSpec(
        name="7zip-build",
        category="build",
        description="make -jN of 7-Zip 26.01's lzma program (Debian's source package 7zip, its makefile), tmpfs, "
                    "from clean",
        metrics=(Metric("make_s", "s", "wall time of make -jN from a clean tree"),),
        headline="make_s",
        reproduces="D: building 7-Zip beside iozone3's build, 32-bit vs 64-bit",
    )
    packages = ("gcc", "g++", "libc6-dev")
    source = SEVENZIP
    program = "CPP/7zip/Bundles/LzmaCon/b/g/lzma"
    banner = "LZMA"

    def make_args(self, target: Target) -> list[str]:
        flags = abi_flags(target.config)
        return ["-C", "CPP/7zip/Bundles/LzmaCon", "-f", "../../cmpl_gcc.mak",
                f"CC={' '.join([target.config.cc, *flags])}", f"CXX={' '.join(['c++', *flags])}"]


WORKLOADS = (IozoneBuild, SevenZipBuild)

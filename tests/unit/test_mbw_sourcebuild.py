"""Write-up D's mbw and build workloads: mbw's output parsed, the builds' make lines and their check."""

from __future__ import annotations

import pytest

from shootout.base.errors import WorkloadError
from shootout.base.model import Config
from shootout.execution.process import ProcResult
from shootout.workloads.mbw import Mbw, parse_mbw
from shootout.workloads.sourcebuild import IozoneBuild, SevenZipBuild

# mbw 1.2.2 -q -n 2 64, as Debian's mbw prints it
MBW = """0\tMethod: MEMCPY\tElapsed: 0.00394\tMiB: 64.00000\tCopy: 16243.655 MiB/s
1\tMethod: MEMCPY\tElapsed: 0.00380\tMiB: 64.00000\tCopy: 16842.105 MiB/s
AVG\tMethod: MEMCPY\tElapsed: 0.00387\tMiB: 64.00000\tCopy: 16537.468 MiB/s
0\tMethod: DUMB\tElapsed: 0.00431\tMiB: 64.00000\tCopy: 14849.188 MiB/s
1\tMethod: DUMB\tElapsed: 0.00435\tMiB: 64.00000\tCopy: 14712.644 MiB/s
AVG\tMethod: DUMB\tElapsed: 0.00433\tMiB: 64.00000\tCopy: 14780.600 MiB/s
0\tMethod: MCBLOCK\tElapsed: 0.00258\tMiB: 64.00000\tCopy: 24806.202 MiB/s
1\tMethod: MCBLOCK\tElapsed: 0.00257\tMiB: 64.00000\tCopy: 24902.724 MiB/s
AVG\tMethod: MCBLOCK\tElapsed: 0.00258\tMiB: 64.00000\tCopy: 24854.369 MiB/s
"""


def result(stdout: str) -> ProcResult:
    return ProcResult(("sh",), 0, stdout, "", 1.0, 1.0, 0.0, 1000, 1, 0.0)


def test_mbw_takes_each_methods_average_and_their_geometric_mean() -> None:
    assert parse_mbw(MBW) == {"memcpy_mibs": 16537.468, "dumb_mibs": 14780.6, "mcblock_mibs": 24854.369}
    values = Mbw().parse(result(MBW), {})
    assert values["geomean_mibs"] == pytest.approx((16537.468 * 14780.6 * 24854.369) ** (1 / 3))
    assert set(values) == {m.name for m in Mbw.spec.metrics}


def test_mbw_without_every_average_is_an_error() -> None:
    with pytest.raises(WorkloadError):
        Mbw().parse(result("\n".join(ln for ln in MBW.splitlines() if "DUMB" not in ln)), {})


class Asked:
    """A target that answers the compiler's -print-multiarch."""

    def __init__(self, config: Config, multiarch: str) -> None:
        self.config, self.multiarch, self.argv = config, multiarch, []

    def run(self, argv, timeout=600.0):
        self.argv.append(list(argv))
        return ProcResult(tuple(argv), 0, self.multiarch + "\n", "", 0.1, 0.0, 0.0, 1000, 1, 0.0)


def test_iozone_builds_the_makefiles_target_for_the_sides_cpu() -> None:
    for multiarch, target in (("x86_64-linux-gnu", "linux-AMD64"), ("i386-linux-gnu", "linux"),
                              ("aarch64-linux-gnu", "linux-arm"), ("arm-linux-gnueabihf", "linux-arm")):
        asked = Asked(Config("s"), multiarch)
        assert IozoneBuild().make_args(asked) == ["-C", "src/current", target, "CC=cc", "GCC=cc"]
    m32 = Asked(Config("host+m32", abi="m32"), "i386-linux-gnu")
    assert IozoneBuild().make_args(m32)[-1] == "GCC=cc -m32" and m32.argv == [["cc", "-m32", "-print-multiarch"]]


def test_7zip_builds_lzma_with_debians_makefile_and_the_sides_compilers() -> None:
    args = SevenZipBuild().make_args(Asked(Config("host+m32", abi="m32"), ""))
    assert args == ["-C", "CPP/7zip/Bundles/LzmaCon", "-f", "../../cmpl_gcc.mak", "CC=cc -m32", "CXX=c++ -m32"]


def test_a_build_whose_program_does_not_run_is_an_error() -> None:
    timed = "step make 100.000000000 112.500000000\n"
    assert SevenZipBuild().parse(result(timed + "built LZMA 26.01 (x86) : Igor Pavlov\n"), {}) == {"make_s": 12.5}
    with pytest.raises(WorkloadError, match="did not run"):
        SevenZipBuild().parse(result(timed + "built \n"), {})


def test_each_trial_builds_a_fresh_copy_and_runs_what_it_built() -> None:
    from shootout.workloads.contract import Prepared

    prepared = Prepared(files={"tree": "/w/src", "work": "/w/tree"},
                        facts={"make_args": ["-C", "src/current", "linux"], "program": "src/current/iozone"})
    argv = IozoneBuild().argv(prepared, {"jobs": 2})
    assert argv[:2] == ["bash", "-c"]
    text = argv[2]
    assert "rm -rf /w/tree; cp -a /w/src /w/tree" in text and "make -j2 -C /w/tree -C src/current linux" in text
    assert "/w/tree/src/current/iozone -v" in text and text.index("step make") < text.index("built ")


def test_mbw_records_the_debian_build_each_side_runs() -> None:
    from shootout.workloads.contract import Context

    asked = Asked(Config("s"), "mbw 1.2.2-1.1")
    assert Mbw().prepare(Context(asked, "mbw", {})).versions == {"mbw": "mbw 1.2.2-1.1"}
    assert asked.argv == [["dpkg-query", "-W", "-f=mbw ${Version}\\n", "mbw"]]

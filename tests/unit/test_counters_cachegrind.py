"""cachegrind as a cache model: the command put before a side's argv, and the counts read back
from the out files it wrote, one per process."""

from __future__ import annotations

from pathlib import Path

from shootout.counters.cachegrind import MODELS, CacheModel, parse, prefix

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "counters"


def texts(folder: str) -> list[str]:
    return [path.read_text() for path in sorted((FIXTURES / folder).glob("cachegrind.out.*"))]


def test_a_model_names_its_three_caches_and_host_leaves_them_to_valgrind() -> None:
    assert prefix(MODELS["pi4"], "/w") == [
        "valgrind", "--tool=cachegrind", "--cache-sim=yes", "--trace-children=yes",
        "--cachegrind-out-file=/w/cachegrind.out.%p", "--I1=49152,3,64", "--D1=32768,2,64", "--LL=1048576,16,64"]
    assert prefix(MODELS["host"], "/w")[-1] == "--cachegrind-out-file=/w/cachegrind.out.%p"
    assert "--LL=2097152,16,64" in prefix(MODELS["pi5"], "/w")


def test_every_models_geometry_has_a_power_of_two_sets_as_cachegrind_wants() -> None:
    for model in MODELS.values():
        for geometry in (model.i1, model.d1, model.ll):
            if geometry is not None:
                sets = geometry[0] // (geometry[1] * geometry[2])
                assert sets * geometry[1] * geometry[2] == geometry[0] and sets & (sets - 1) == 0, model.name


def test_a_pipelines_processes_are_summed() -> None:
    counts = parse(texts("cachegrind-pi4-pipeline"))
    # sh, ls and wc: the summary lines' Ir, summed by hand
    assert counts.processes == 3
    assert counts.instructions == 230066 + 551621 + 326302
    assert counts.data_refs == (57001 + 21222) + (139367 + 56565) + (77719 + 32822)
    assert counts.d1_misses == (2088 + 536) + (4226 + 1013) + (2130 + 714)
    assert counts.ll_misses == (1495 + 1519 + 469) + (2004 + 2291 + 835) + (1845 + 1338 + 596)
    assert counts.i1_misses == 1516 + 2280 + 1978
    assert counts.caches == "I1 48 KiB 3-way, D1 32 KiB 2-way, LL 1 MiB 16-way"
    assert counts.as_dict()["instructions"] == counts.instructions


def test_the_hosts_caches_are_what_valgrind_simulated_not_what_the_cpu_said() -> None:
    counts = parse(texts("cachegrind-host-true"))
    assert counts.processes == 1 and counts.instructions == 127853
    assert counts.caches == "I1 32 KiB 8-way, D1 48 KiB 12-way, LL 264 MiB 33-way"


def test_a_file_cut_before_its_summary_is_not_a_process() -> None:
    whole = texts("cachegrind-host-true")[0]
    cut = whole.split("summary:")[0]
    counts = parse([whole, cut])
    assert counts.processes == 1 and counts.instructions == 127853
    assert parse([]).instructions == 0 and parse([]).caches == ""


def test_a_model_is_frozen() -> None:
    model = CacheModel("x", None, (32768, 2, 64), None)
    assert prefix(model, "/o")[-1] == "--D1=32768,2,64"
    try:
        model.name = "y"  # type: ignore[misc]
    except AttributeError:
        return
    raise AssertionError("a CacheModel can be changed")

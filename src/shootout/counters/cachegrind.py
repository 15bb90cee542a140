"""valgrind's cachegrind as a model of a CPU's caches, said to be one: where the machine has no
PMU (a VM, qemu), a side's instructions and cache misses come from a simulation of the caches
named here, never from the hardware.

cachegrind simulates two levels: I1 and D1, and one last level (LL). Its counts are exact for
the simulated caches (no prefetcher, no other cores, LRU replacement), so they compare two sides
run under one model; they are not what a real core of that name would count.

valgrind writes its out file when the program exits and also when it is ended by SIGTERM
(checked with valgrind 3.19: `sh -c "yes | head"` killed by SIGTERM after 4 s left one file per
process, each with its summary line), so a pass whose time is capped still counts; SIGKILL
leaves nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

# (size bytes, associativity, line bytes): cachegrind wants sets = size / (assoc * line) to be a
# power of two, and refuses the geometry ("Bad option: --D1=...") otherwise.
Geometry = tuple[int, int, int]


@dataclass(frozen=True)
class CacheModel:
    """The caches cachegrind simulates; a level left None is valgrind's own detection of this
    CPU (which adjusts a geometry it cannot simulate, e.g. a 260 MiB 20-way L3, and warns)."""

    name: str
    i1: Geometry | None
    d1: Geometry | None
    ll: Geometry | None


KIB, MIB = 1024, 1024 * 1024
MODELS: dict[str, CacheModel] = {
    "host": CacheModel("host", None, None, None),
    # Raspberry Pi 4, Cortex-A72: the shared 1 MiB L2 is its last level
    "pi4": CacheModel("pi4", (48 * KIB, 3, 64), (32 * KIB, 2, 64), (1 * MIB, 16, 64)),
    # Raspberry Pi 5, Cortex-A76: LL is the shared 2 MiB L3. The per-core 512 KiB L2 between
    # them is not modelled: cachegrind has two levels only.
    "pi5": CacheModel("pi5", (64 * KIB, 4, 64), (64 * KIB, 4, 64), (2 * MIB, 16, 64)),
}


def _option(level: str, geometry: Geometry | None) -> list[str]:
    return [] if geometry is None else [f"--{level}={geometry[0]},{geometry[1]},{geometry[2]}"]


def prefix(model: CacheModel, out_dir: str) -> list[str]:
    """What to put before a command's argv to run it under `model`: every process it starts is
    counted too (a shell's pipeline), each into OUT_DIR/cachegrind.out.<pid>."""
    return ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--trace-children=yes",
            f"--cachegrind-out-file={out_dir}/cachegrind.out.%p",
            *_option("I1", model.i1), *_option("D1", model.d1), *_option("LL", model.ll)]


@dataclass(frozen=True)
class ModelCounts:
    """What the model counted, summed over every process of the run."""

    instructions: int
    data_refs: int  # reads and writes
    d1_misses: int
    ll_misses: int  # data and instruction misses in the last level
    i1_misses: int
    caches: str  # the modelled caches, e.g. "I1 48 KiB 3-way, D1 32 KiB 2-way, LL 1 MiB 16-way"
    processes: int

    def as_dict(self) -> dict[str, int | str]:
        return asdict(self)


_DESC = re.compile(r"desc:\s+(I1|D1|LL) cache:\s+(\d+) B, (\d+) B, (\d+)-way associative")


def _size(size: int) -> str:
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _caches(text: str) -> str:
    """The modelled caches from the desc: lines, as users read them."""
    return ", ".join(f"{m[1]} {_size(int(m[2]))} {m[4]}-way" for m in _DESC.finditer(text))


def _summary(text: str) -> dict[str, int]:
    """The summary line's counts by the events: header's names; {} if the file has none."""
    events = re.search(r"^events:(.*)$", text, re.MULTILINE)
    summary = re.search(r"^summary:(.*)$", text, re.MULTILINE)
    if events is None or summary is None:
        return {}
    return dict(zip(events[1].split(), (int(v) for v in summary[1].split())))


def parse(files: Sequence[str]) -> ModelCounts:
    """ModelCounts from the texts of a run's out files, one per process. A file without a
    summary (valgrind ended by SIGKILL while writing it) is not counted as a process."""
    totals: dict[str, int] = {}
    processes, caches = 0, ""
    for text in files:
        counts = _summary(text)
        if not counts:
            continue
        processes += 1
        caches = caches or _caches(text)
        for event, value in counts.items():
            totals[event] = totals.get(event, 0) + value
    get = totals.get
    return ModelCounts(instructions=get("Ir", 0), data_refs=get("Dr", 0) + get("Dw", 0),
                       d1_misses=get("D1mr", 0) + get("D1mw", 0),
                       ll_misses=get("ILmr", 0) + get("DLmr", 0) + get("DLmw", 0),
                       i1_misses=get("I1mr", 0), caches=caches, processes=processes)

"""Identity of a binary from its ELF header: the ABI that actually ran, not the label's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

# e_machine names from pyelftools -> the short names users know
_MACHINES = {"EM_386": "x86", "EM_X86_64": "x86-64", "EM_ARM": "arm", "EM_AARCH64": "aarch64"}


def elf_identity(path: Path) -> dict[str, Any]:
    """{'elf_class': 32|64, 'machine': ..., 'interpreter': ...}; {} if path is not ELF (a script)."""
    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            interp = None
            for seg in elf.iter_segments():
                if seg["p_type"] == "PT_INTERP":
                    interp = seg.get_interp_name()
            machine = elf["e_machine"]
            return {
                "elf_class": elf.elfclass,
                "machine": _MACHINES.get(machine, machine),
                # x32 is ELFCLASS32 on x86-64: the machine tells it apart from i386
                "interpreter": interp,
            }
    except (ELFError, OSError):
        return {}

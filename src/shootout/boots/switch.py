"""Opt-in help between blocks: boot the scheduled kernel next, and resume the run after boot.

Both change the machine across a reboot, so they cannot live in the run's journal (undone
when shootout exits, before the reboot): they go to a journal of their own (journal/next-boot)
that only `shootout doctor` undoes — and the resumed run, once the boot has consumed them.
Each is one-shot by design, said in one line with its undo, never done silently. Which
switch applies is detected: a whole install on another root, the Pi's tryboot with its own
command line (boots/wholeroot.py); a Raspberry Pi's firmware (tryboot, boots/tryboot.py), else
GRUB (`grub-reboot`: next_entry is consumed by the next boot); the resume unit removes
itself when it has run (ExecStartPost).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from shootout.base.errors import TargetError, ToolMissing, UsageError
from shootout.boots.identity import KernelWant
from shootout.boots.images import is_pattern
from shootout.boots.tryboot import write_tryboot
from shootout.boots.wholeroot import write_root_tryboot
from shootout.conditions.machinefacts import board
from shootout.execution.fsread import read_text, under
from shootout.execution.tools import find_tool
from shootout.system.journal import Journal, journal_dir, recover

UNIT = "shootout-resume.service"
_ENTRY = re.compile(r"^\s*(menuentry|submenu)\s+(['\"])(.*?)\2.*\{\s*$")
_ID = re.compile(r"\$menuentry_id_option\s+(['\"])(.*?)\1")


def grub_entry(grub_cfg: str, release: str) -> str | None:
    """grub-reboot's "submenu>entry" id path of the normal (not recovery) entry booting `release`."""
    stack: list[str] = []  # ids of the submenus we are inside
    depth_of: list[int] = []  # brace depth at which each submenu opened
    depth = 0
    for line in grub_cfg.splitlines():
        m = _ENTRY.match(line)
        if m:
            found_id = _ID.search(line)
            kind, title, ident = m.group(1), m.group(3), found_id.group(2) if found_id else m.group(3)
            if kind == "submenu":
                stack.append(ident)
                depth_of.append(depth)
            elif f"Linux {release}" in title and "recovery" not in title:
                return ">".join([*stack, ident])
            depth += 1
            continue
        depth += line.count("{") - line.count("}")
        while depth_of and depth <= depth_of[-1]:
            depth_of.pop()
            stack.pop()
    return None


def next_boot_journal() -> Journal:
    """The journal of changes meant to outlive this process, until the boot they are for."""
    directory = journal_dir() / "next-boot"
    directory.mkdir(exist_ok=True)
    return Journal(directory)


def undo_next_boot() -> tuple[list[str], list[str]]:
    """Undo every next-boot change shootout made (doctor; a resumed run, whose boot used them)."""
    return recover(journal_dir() / "next-boot", alive_too=True)


def switch_next_boot(want: KernelWant, config: str, journal: Journal, root: Path = Path("/")) -> str:
    """Make the next boot run `want`'s kernel, with the switch this machine has; the line to say."""
    if want.root is not None:  # a whole install: the Pi's tryboot with its own command line
        return write_root_tryboot(want, root, journal)
    model = board(root) or ""
    if model.startswith("Raspberry Pi"):
        return write_tryboot(want, model, root, journal)
    if under(root, "/boot/grub/grub.cfg").is_file():
        return _grub_reboot(want, config, journal, root)
    raise TargetError("--next-kernel: this machine boots neither through GRUB nor a Raspberry Pi's firmware",
                      "boot the kernel the run names by hand")


def _grub_reboot(want: KernelWant, config: str, journal: Journal, root: Path) -> str:
    """Make GRUB boot the release once, next time."""
    if is_pattern(want.release):
        raise UsageError(f"--next-kernel needs the exact release of {config}, not the pattern {want.release}",
                         "name the kernel exactly: kernel:RELEASE (see uname -r under it)")
    if "GRUB_DEFAULT=saved" not in (read_text(root, "/etc/default/grub") or "").replace('"', ""):
        raise TargetError("grub-reboot needs GRUB_DEFAULT=saved in /etc/default/grub",
                          "set it and run update-grub, or boot the kernel by hand from GRUB's menu")
    entry = grub_entry(read_text(root, "/boot/grub/grub.cfg") or "", want.release)
    if entry is None:
        raise TargetError(f"GRUB's menu has no entry for kernel {want.release}", "install that kernel and run update-grub")
    tool = find_tool("grub-reboot")
    if tool is None:
        raise ToolMissing("grub-reboot", "grub2-common")
    undo = [find_tool("grub-editenv") or "grub-editenv", "-", "unset", "next_entry"]
    try:
        journal.run(f"GRUB boots {want.release} next, once", [tool, entry], {"argv": undo})
    except subprocess.CalledProcessError as exc:
        raise TargetError(f"grub-reboot {entry} failed: {(exc.stderr or '').strip() or exc.returncode}",
                          "run it by hand to see why") from None
    return f"GRUB boots {want.release} next, once (undo: grub-editenv - unset next_entry, or shootout doctor)"


def resume_unit(command: Sequence[str], environment: Mapping[str, str] | None = None) -> str:
    """A one-shot unit that runs the next block after boot, then removes itself."""
    quoted = " ".join(shlex.quote(a) for a in command)
    env = "".join(f"Environment={shlex.quote(f'{k}={v}')}\n" for k, v in (environment or {}).items())
    return (f"[Unit]\nDescription=shootout: measure the next block of a run across boots\n"
            f"After=multi-user.target\nConditionPathExists=/etc/systemd/system/{UNIT}\n\n"
            f"[Service]\nType=oneshot\n{env}ExecStart={quoted}\n"
            f"ExecStartPost=/bin/rm -f /etc/systemd/system/{UNIT} /etc/systemd/system/multi-user.target.wants/{UNIT}\n\n"
            f"[Install]\nWantedBy=multi-user.target\n")


def install_resume_unit(command: Sequence[str], environment: Mapping[str, str] | None = None,
                        root: Path = Path("/"), journal: Journal | None = None) -> str:
    """Enable the unit for the next boot (the symlink `systemctl enable` would make); returns the undo."""
    unit = under(root, f"/etc/systemd/system/{UNIT}")
    wants = unit.parent / "multi-user.target.wants"
    link = wants / UNIT

    def install() -> None:
        unit.parent.mkdir(parents=True, exist_ok=True)
        unit.write_text(resume_unit(command, environment))
        wants.mkdir(exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(f"/etc/systemd/system/{UNIT}")

    (journal or next_boot_journal()).change(f"{UNIT} resumes the run at the next boot",
                                            [{"remove": str(link)}, {"remove": str(unit)}], install)
    return f"rm -f /etc/systemd/system/{UNIT} /etc/systemd/system/multi-user.target.wants/{UNIT}"

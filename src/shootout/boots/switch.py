"""Opt-in help between blocks: boot the scheduled kernel next, and resume the run after boot.

Both change the machine across a reboot, so they cannot live in the run's journal (which is
undone when shootout exits, before the reboot). Each is one-shot by design and prints its
one-line undo: GRUB's next_entry is consumed by the next boot (`grub-reboot`); the resume
unit removes itself when it has run (ExecStartPost) and is never installed silently.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from shootout.conditions.fsread import read_text, under
from shootout.boots.campaign import BlockOutcome
from shootout.errors import TargetError, ToolMissing, UsageError

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


def switch_next_boot(release: str, root: Path = Path("/")) -> str:
    """Make GRUB boot `release` once, next time; returns the one-line undo."""
    if "GRUB_DEFAULT=saved" not in (read_text(root, "/etc/default/grub") or "").replace('"', ""):
        raise TargetError("grub-reboot needs GRUB_DEFAULT=saved in /etc/default/grub",
                          "set it and run update-grub, or boot the kernel by hand from GRUB's menu")
    entry = grub_entry(read_text(root, "/boot/grub/grub.cfg") or "", release)
    if entry is None:
        raise TargetError(f"GRUB's menu has no entry for kernel {release}", "install that kernel and run update-grub")
    tool = shutil.which("grub-reboot")
    if tool is None:
        raise ToolMissing("grub-reboot", "grub2-common")
    subprocess.run([tool, entry], check=True, capture_output=True)
    return "grub-editenv - unset next_entry"


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
                        root: Path = Path("/")) -> str:
    """Enable the unit for the next boot (the symlink `systemctl enable` would make); returns the undo."""
    unit = under(root, f"/etc/systemd/system/{UNIT}")
    unit.parent.mkdir(parents=True, exist_ok=True)
    unit.write_text(resume_unit(command, environment))
    wants = unit.parent / "multi-user.target.wants"
    wants.mkdir(exist_ok=True)
    link = wants / UNIT
    link.unlink(missing_ok=True)
    link.symlink_to(f"/etc/systemd/system/{UNIT}")
    return f"rm -f /etc/systemd/system/{UNIT} /etc/systemd/system/multi-user.target.wants/{UNIT}"


def after_block(outcome: BlockOutcome, *, next_kernel: bool, resume_at_boot: bool, command: Sequence[str],
                environment: Mapping[str, str] | None = None, root: Path = Path("/")) -> list[str]:
    """The opt-in steps for the next boot, each reported in one line with its undo."""
    if outcome.next_index is None:
        return []
    config = outcome.campaign.schedule[outcome.next_index]
    want = outcome.campaign.wants[config]
    lines = []
    if next_kernel:
        if any(c in want.release for c in "*?["):
            raise UsageError(f"--next-kernel needs the exact release of {config}, not the pattern {want.release}",
                             "name the kernel exactly: kernel:RELEASE (see uname -r under it)")
        undo = switch_next_boot(want.release, root)
        lines.append(f"GRUB boots {want.release} next, once (undo: {undo})")
    if resume_at_boot:
        undo = install_resume_unit(command, environment, root)
        lines.append(f"installed {UNIT}: the next boot measures block {outcome.next_index + 1} by itself "
                     f"(undo: {undo})")
    return lines

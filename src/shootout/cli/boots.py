"""A run across boots, as the run command drives it: plan or resume the campaign, run its
block, and say (or arrange) which kernel boots next."""

from __future__ import annotations

import sys

from rich.markup import escape

from shootout.cli.consoles import console, err_console


def across_boots(store, stored, request, boots: int, wanted: bool = True):
    """A run across boots, planned and checked before the load gate: the first block's
    campaign, or the resumption after a reboot; None for any other run. Without --across-boots
    (wanted), a request whose configurations want two or more kernels is one all the same
    (kernel-modes on a Raspberry Pi): no boot runs two kernels."""
    from shootout.boots.switch import undo_next_boot
    from shootout.measure import bootcampaign as campaign

    if stored is not None:
        if not campaign.campaign_of(stored):
            return None
        step = campaign.prepare_resume(store, stored)
        undone, errors = undo_next_boot()  # the kernel switch and resume unit were for this boot
        for what in undone:
            err_console.print(f"this boot used it, now undone: {escape(what)}")
        for problem in errors:
            err_console.print(f"[red]could not undo[/]: {escape(problem)}")
        return step
    if request is None or not (wanted or campaign.kernels(request.configs) > 1):
        return None
    if not wanted:
        err_console.print(f"the configurations want {campaign.kernels(request.configs)} different boots: a run across "
                          f"boots, one block of rounds per boot (--boots {boots})")
    return campaign.plan(request.configs, boots)


def run_block(runner, step, request, machine: dict):
    from shootout.measure import bootcampaign as campaign
    from shootout.request.request import workloads_of

    if isinstance(step, campaign.Resumption):
        return campaign.resume(runner, step, lambda r: workloads_of([w.name for w in r.workloads], r.user_workloads),
                               machine)
    return campaign.start(runner, request, step, machine)


def prepare_next_boot(block, next_kernel: bool, resume_at_boot: bool, db: str | None) -> None:
    """--next-kernel and --resume-at-boot: opt-in, said in one line each with their undo."""
    import os

    from shootout.measure.bootcampaign import after_block

    command = [sys.executable, "-m", "shootout", "run", "--resume", "last", *(["--db", db] if db else []),
               *(["--next-kernel"] if next_kernel else []), *(["--resume-at-boot"] if resume_at_boot else [])]
    home = {"SHOOTOUT_HOME": os.environ["SHOOTOUT_HOME"]} if "SHOOTOUT_HOME" in os.environ else {}
    for line in after_block(block, next_kernel=next_kernel, resume_at_boot=resume_at_boot, command=command,
                            environment=home):
        console.print(escape(line))

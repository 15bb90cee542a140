"""This machine's trials start from a small parent: shootout's helper (remote/helper.c `run`),
compiled here once, as it runs every trial on a remote machine.

A child forked from the runner inherits the runner's memory until it execs, and the kernel
keeps that as the child's peak RSS (exec records the old address space's high-water mark): a
trial forked from Python would report ~100 MB of shootout's own for any program smaller than
that. Forked from the helper, a trial's max RSS, page faults, context switches and its wait
for a CPU are its own; the helper reports them with its exit status on its last stderr line.
"""

from __future__ import annotations

import dataclasses
import secrets

from shootout.base.errors import ShootoutError, TargetError
from shootout.base.model import Config
from shootout.execution.build import compile_c
from shootout.execution.process import ProcResult
from shootout.places.host import HostTarget
from shootout.remote import helper

MARGIN_S = 5.0  # the runner's own timeout ends a trial first; the helper's is the backstop


@dataclasses.dataclass(frozen=True)
class SmallParent:
    binary: str

    @staticmethod
    def here() -> SmallParent | str:
        """The helper compiled with this machine's cc (cached), or one line saying why not."""
        host = HostTarget(Config(name="host"))
        try:
            return SmallParent(compile_c(host, "helper", {"helper.c": helper.source()}, ["-O2"]).path)
        except ShootoutError as exc:
            return f"trials start from shootout's own process, so their max RSS reads at least its own: {exc}"
        finally:
            host.close()

    def wrap(self, timeout: float) -> tuple[list[str], str]:
        """The command prefix that runs a trial as the helper's child, and the token of its report."""
        token = f"shootout-usage-{secrets.token_hex(8)}"
        return [self.binary, "run", f"{timeout + MARGIN_S:.3f}", token, ".", "--"], token

    @staticmethod
    def result(found: ProcResult, token: str) -> ProcResult:
        """The trial's result with the helper's figures of the command itself; a trial the runner
        ended at its timeout (the helper with it) keeps what the runner measured."""
        try:
            usage, stderr = helper.parse_usage(found.stderr, token)
        except TargetError:
            if found.timed_out:
                return found
            raise TargetError(f"shootout's helper did not report the trial's resource usage "
                              f"(exit {found.exit_status}: {found.stderr_tail(1)[:120] or 'no message'})",
                              "run `shootout doctor`, then try again") from None
        return dataclasses.replace(
            found, exit_status=usage.exit_status, stderr=stderr, wall_s=usage.wall_s, user_s=usage.user_s,
            sys_s=usage.sys_s, max_rss_kb=usage.max_rss_kb, ctx_switches=usage.ctx_switches,
            timed_out=found.timed_out or usage.timed_out, **usage.rest())

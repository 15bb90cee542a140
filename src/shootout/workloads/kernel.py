"""Workloads backed by a native C kernel compiled per configuration inside its target (build.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from shootout.base.errors import WorkloadError
from shootout.execution.build import build_native, require_compiler
from shootout.execution.process import ProcResult
from shootout.places.target import Target
from shootout.workloads.contract import (
    MIN_TRIAL_S,
    Context,
    Prepared,
    Workload,
    parse_key_values,
    repeats_for,
    require,
)


class CompiledWorkload(Workload):
    """A workload whose program is one of the native kernels, built with the configuration's cc."""

    kernel: ClassVar[str]
    packages = ("gcc", "libc6-dev")  # the configuration's cc, checked by check_tools

    def check_tools(self, target: Target) -> None:
        require_compiler(target)

    def prepare(self, ctx: Context) -> Prepared:
        binary = build_native(ctx.target, self.kernel)
        return Prepared(files={"binary": binary.path}, facts={"binary": binary.facts},
                        versions={"compiler": binary.facts["compiler"]})


# WorkloadSpec.timing of the kernels whose timed loops run on one thread (native/kernel.h says why)
THREAD_CPU_TIMING = ("the kernel's own thread CPU time (CLOCK_THREAD_CPUTIME_ID) around its timed loop: one thread "
                     "that never sleeps or does I/O; time slices other programs take while it waits do not count")


class NativeKernel(CompiledWorkload):
    """One kernel run per trial, its arguments from the parameters, its `name value` output parsed."""

    outputs: ClassVar[dict[str, str]]  # kernel output name -> metric name
    # The parameter scaled until the kernel's own measured 'seconds' reaches MIN_TRIAL_S.
    calibrate_param: ClassVar[str | None] = None

    def args(self, params: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return [prepared.files["binary"], *self.args(params)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        return require(parse_key_values(result.stdout), self.outputs, result)

    def calibrate(self, ctx: Context, prepared: Prepared) -> dict[str, Any]:
        name = self.calibrate_param
        if name is None:
            return ctx.params
        params = dict(ctx.params)
        for _ in range(30):
            result = ctx.target.run(self.argv(prepared, params), timeout=600)
            if result.exit_status != 0:
                raise WorkloadError(f"{self.kernel} failed while calibrating: {result.stderr_tail(1)}",
                                    f"run {' '.join(self.argv(prepared, params))} by hand")
            seconds = parse_key_values(result.stdout).get("seconds", 0.0)
            if seconds >= MIN_TRIAL_S:
                return params
            # One iteration is the unit of work; at most 10x per step, since a run far under
            # the timer's resolution says little.
            grown = 10 * params[name]
            params[name] = grown if seconds <= 0 else min(grown, repeats_for(seconds / params[name]))
        raise WorkloadError(f"could not calibrate {self.spec.name}", "the kernel reports no usable time")

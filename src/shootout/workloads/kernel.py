"""Workloads backed by a native C kernel compiled per configuration (see build.py)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from shootout.build import build_native
from shootout.errors import WorkloadError
from shootout.targets.base import Target
from shootout.targets.process import ProcResult
from shootout.workloads.base import MIN_TRIAL_S, Prepared, Workload, parse_key_values, require


class NativeKernel(Workload):
    kernel: ClassVar[str]
    outputs: ClassVar[dict[str, str]]  # kernel output name -> metric name
    # The parameter scaled until the kernel's own measured 'seconds' reaches MIN_TRIAL_S.
    calibrate_param: ClassVar[str | None] = None

    def args(self, params: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def prepare(self, target: Target, params: dict[str, Any]) -> Prepared:
        self.check_tools(target)
        binary = build_native(target, self.kernel, target.config)
        return Prepared(files={"binary": binary.path}, facts={"binary": binary.facts})

    def argv(self, prepared: Prepared, params: dict[str, Any]) -> list[str]:
        return [prepared.files["binary"], *self.args(params)]

    def parse(self, result: ProcResult, params: dict[str, Any]) -> dict[str, float]:
        return require(parse_key_values(result.stdout), self.outputs, result.stdout)

    def calibrate(self, target: Target, prepared: Prepared, params: dict[str, Any]) -> dict[str, Any]:
        name = self.calibrate_param
        if name is None:
            return params
        params = dict(params)
        for _ in range(30):
            result = target.run(self.argv(prepared, params), timeout=600)
            if result.exit_status != 0:
                raise WorkloadError(f"{self.kernel} failed while calibrating: {result.stderr_tail(1)}",
                                    f"run {' '.join(self.argv(prepared, params))} by hand")
            seconds = parse_key_values(result.stdout).get("seconds", 0.0)
            if seconds >= MIN_TRIAL_S:
                return params
            # Aim 30% above the target so run-to-run jitter does not fall under it.
            factor = 10.0 if seconds <= 0 else min(10.0, 1.3 * MIN_TRIAL_S / seconds)
            params[name] = int(math.ceil(params[name] * max(factor, 1.5)))
        raise WorkloadError(f"could not calibrate {self.spec.name}", "the kernel reports no usable time")

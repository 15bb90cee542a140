"""Where the browser workload's time goes: the page's work or the measuring harness's.

Runs browser_harness.mjs inside each named userspace of SHOOTOUT_HOME (Chromium installed in
it, as a browser32 run leaves it), through the same chroot target and prepared files as the
`browser` workload, and prints its `name value` lines:

  todo    per app: the renderer main thread's CPU ms around one DevTools call per iteration
          (the old way), the in-page sum of the steps, the CPU of an empty call (the harness),
          three empty steps in-page, and the CPU per iteration of one call running them all
  kernels each kernel's CPU ms beside its in-page wall ms
  json    the json kernel's parts timed alone in-page (stringify, parse, walk) on its document
          with doubles and with integers, and number <-> string conversions of 30,000 values
  timer   performance.now()'s resolution in these pages, and whether they are cross-origin isolated

    SHOOTOUT_HOME=/tmp/browser-home PYTHONPATH=src .venv/bin/python benchmarks/browser_harness.py \\
        debian-bookworm-amd64,debian-bookworm-i386
    ... benchmarks/browser_harness.py debian-bookworm-amd64,debian-bookworm-i386 '{"trace_opt": true}'

The second form prints V8's --trace-opt while the kernels warm up (which tiers compile them).
Needs root; run it under the bench lock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from shootout.places.chroot import ChrootTarget, named_userspace_config
from shootout.system.journal import journal
from shootout.workloads.browser import Browser
from shootout.workloads.browser.pages import FRAMEWORKS
from shootout.workloads.contract import Context

KERNELS = {"splay": [3, 20000], "raytrace": [10, 200], "regexp": [10, 4000], "json": [10, 4000], "physics": [10, 3000]}


def main(sides: list[str], extra: dict) -> None:
    w = Browser()
    script = (Path(__file__).parent / "browser_harness.mjs").read_bytes()
    with journal() as j:
        for name in sides:
            target = ChrootTarget(named_userspace_config(name), j)
            target.open()
            try:
                ctx = Context(target, "browser", w.default_params(target.probe()))
                prepared = w.prepare(ctx)
                path = f"{prepared.files['scratch']}/driver/browser_harness.mjs"
                target.put(script, path)
                plan = {**w.plan(prepared, {**ctx.params, "iterations": 1}), "frameworks": list(FRAMEWORKS),
                        "kernels": KERNELS, **extra}
                result = target.run(["node", path, json.dumps(plan)], timeout=900)
                print(f"== {name} exit {result.exit_status}")
                print(result.stdout)
                if result.exit_status:
                    print(result.stderr[-2000:])
                w.cleanup(ctx, prepared)
            finally:
                target.close()


if __name__ == "__main__":
    main(sys.argv[1].split(","), json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})

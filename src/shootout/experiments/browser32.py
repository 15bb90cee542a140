"""docs/writeups.md, D, the browser part, and E's many tabs: Chromium 32-bit vs 64-bit.

The write-up ran Octane, SunSpider, Speedometer 2.0 and JetStream 2 in Chromium on a Pi 4 and a
Pi 3B+; here each side's own Debian Chromium (the native userspace and its 32-bit companion)
runs shootout's pages: to-do apps (Speedometer's idea), engine kernels (Octane's), start-up
and the renderer's memory, and many tabs (the Pi3Desk goal).
"""

from shootout.experiments.base import Experiment
from shootout.experiments.sizing import Sizing

EXPERIMENT = Experiment(
    name="browser32",
    description="the native userspace's Chromium vs its 32-bit companion's: page work, JavaScript "
                "kernels, start-up and renderer memory, tab switching",
    reproduces="D, browser benchmarks in Chromium 32-bit vs 64-bit (Pi 4 and Pi 3B+); E, a dozen tabs",
    toml="""
[run]
workloads = ["browser", "browser-tabs"]
""",
    sizing=Sizing(round_s=40, prepare_s=120, measured="a guess: not yet measured as a whole here"),
    found={
        "browser": "64-bit about 40% ahead on Speedometer 2.0 and clearly on JetStream on a Pi 4; "
                   "on a Pi 3B+ 32-bit won most of the suite (the browser tests not named)",
        "browser-tabs": "no 32/64-bit figure; the goal was a dozen tabs that no longer lock the machine",
    },
)

"""docs/writeups.md, D, the browser part, and E's many tabs: Chromium 32-bit vs 64-bit.

The write-up ran Octane, SunSpider, Speedometer 2.0 and JetStream 2 in Chromium on a Pi 4 and a
Pi 3B+; here each side's own Debian Chromium (the native userspace and its 32-bit companion)
runs shootout's pages: to-do apps (Speedometer's idea), engine kernels (Octane's), start-up
and the renderer's memory, and many tabs (the Pi3Desk goal).
"""

from shootout.experiments.sizing import Sizing
from shootout.experiments.writeup import Experiment

EXPERIMENT = Experiment(
    name="browser32",
    title="64-bit vs 32-bit Chromium: pages, JS, tabs",
    description="the native userspace's Chromium vs its 32-bit companion's: page work, JavaScript "
                "kernels, start-up and renderer memory, tab switching",
    reproduces="D, browser benchmarks in Chromium 32-bit vs 64-bit (Pi 4 and Pi 3B+); E, a dozen tabs",
    toml="""
[run]
workloads = ["browser", "browser-tabs"]

[params.browser]
samples = 3

[params.browser-tabs]
switches = 24
heavy_sections = 150
""",
    sizing=Sizing(round_s=42, prepare_s=120,
                  measured="2-core x86-64 VM, 2026-11-26, at the workloads' defaults: a round of 51 s (the "
                           "warm-up), trials of 7-9 s (browser) and 15-18 s (browser-tabs), and 85 s a round "
                           "where 16 trials were measured again at load 2-4: 7 rounds in the 10-minute budget, "
                           "no verdict",
                  note="a dozen tabs of 150 sections each instead of the workload's 300, 24 switches instead "
                       "of 48, and 3 samples per engine kernel instead of 5: at the defaults a round took "
                       "51 s, and the 10 rounds a first verdict on 2 comparisons needs did not fit 12 "
                       "minutes; a tab switch's time is still taken over a dozen live tabs"),
    writeup_params={"browser": {"samples": 5}, "browser-tabs": {"switches": 48, "heavy_sections": 300}},
    writeup_sizing=Sizing(round_s=60, prepare_s=120, limit_s=20 * 60,
                          measured="2-core x86-64 VM, 2026-11-26, at the workloads' defaults: a round of 51 s (the "
                                   "warm-up), 85 s where trials were measured again at load 2-4"),
    writeup_note="a dozen tabs of 300 sections each, 48 switches, 5 samples per engine kernel (the workloads' own)",
    found={
        "browser": "64-bit about 40% ahead on Speedometer 2.0 and clearly on JetStream on a Pi 4; "
                   "on a Pi 3B+ 32-bit won most of the suite (the browser tests not named)",
        "browser-tabs": "no 32/64-bit figure; the goal was a dozen tabs that no longer lock the machine",
    },
)

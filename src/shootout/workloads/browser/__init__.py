"""The browser workloads: Chromium from each userspace, on pages shootout generates.

workload.py   the two workloads (browser, browser-tabs): files, facts, plan, calibration
metrics.py    the driver's output turned into metrics
assets.py     the driver, the app bundles, the site and the heavy page, and putting them in a target
pages.py      the generated heavy page and the small pages around the apps
driver/       driver.mjs and its pinned puppeteer-core (runs inside the target)
apps/         the to-do apps (src/), the pinned frameworks and build.mjs that bundles them (host)
pages/        the to-do harness, its stylesheet and the JavaScript engine kernels
"""

from shootout.workloads.browser.workload import Browser, BrowserTabs

WORKLOADS = (Browser, BrowserTabs)

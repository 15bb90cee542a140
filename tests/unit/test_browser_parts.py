"""The browser workloads without a browser: pages, metrics from driver output, specs."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from shootout.base.errors import ToolMissing, WorkloadError
from shootout.base.model import Config
from shootout.base.units import UNITS, Direction
from shootout.execution.placefacts import TargetFacts
from shootout.execution.process import ProcResult
from shootout.places.host import HostTarget
from shootout.workloads.browser import Browser, BrowserTabs
from shootout.workloads.browser.metrics import (
    engine_metrics,
    startup_metrics,
    tabs_metrics,
    todo_metrics,
)
from shootout.workloads.browser.pages import FRAMEWORKS, heavy_page, todo_page
from shootout.workloads.browser.workload import CHROMIUM
from shootout.workloads.catalogue import REGISTRY


def result(stdout: str = "", stderr: str = "", status: int = 0) -> ProcResult:
    return ProcResult(("x",), status, stdout, stderr, 1.0, 0.5, 0.1, 1000, 3, 0.0)


# -- pages ---------------------------------------------------------------------------------------


def test_heavy_page_is_byte_identical_to_the_pinned_hash():
    page = heavy_page(3)
    assert hashlib.sha256(page.encode()).hexdigest() == "e4e223d6bd223bbe87e64e1f354707e8cf6a2fe65879e97871c71a14dfc4b045"
    assert page == heavy_page(3)


def test_heavy_page_grows_with_its_sections_and_sets_its_ready_promise():
    small, large = heavy_page(4), heavy_page(40)
    assert 6 < len(large) / len(small) < 11  # a fixed part (styles, script) plus the sections
    assert large.count("<section") == 40 and large.count("<svg") == 40
    assert "window.heavyReady = new Promise" in small
    assert "</script" not in small.split('id="comments">')[1].split("</script>")[0]  # the JSON island stays closed


def test_todo_page_loads_the_bundle_then_the_harness():
    page = todo_page("vue")
    assert page.index("app-vue.js") < page.index("todo-harness.js") and 'id="app"' in page


# -- metrics from driver output ------------------------------------------------------------------


def _todo_lines(ms: dict[str, float], harness: float = 0.0) -> str:
    """Each of the six step parts takes ms[f] of wall clock; the app's CPU time is 4 ms[f] an
    iteration over 10 iterations in one call, plus `harness` ms for the call itself."""
    return "".join(f"todo_{f}_{s}_{p}_ms {ms[f]}\n" for f in ms for s in ("add", "complete", "delete")
                   for p in ("sync", "async")) + "".join(
        f"todo_{f}_cpu_ms {4 * ms[f] + harness / 10}\ntodo_{f}_iterations 10\ntodo_{f}_harness_cpu_ms {harness}\n"
        for f in ms)


def test_todo_runs_per_minute_from_cpu_and_step_times():
    out = _todo_lines({"react": 10.0, "vanilla": 5.0})
    got = todo_metrics(todo_values(out), ["react", "vanilla"], result(out))
    assert got["todo_react"] == pytest.approx(60_000 / 40) and got["todo_vanilla"] == pytest.approx(60_000 / 20)
    assert got["todo_runs_per_min"] == pytest.approx(60_000 / 60)
    assert got["todo_wall_runs_per_min"] == pytest.approx(60_000 / 90)
    assert got["todo_add_ms"] == pytest.approx(30) and got["todo_sync_ms"] == pytest.approx(45)


def test_the_measuring_paths_cpu_time_is_not_the_pages():
    """The driver's call and clock readings (measured alone: the harness) are subtracted once per call."""
    out = _todo_lines({"react": 10.0, "vanilla": 5.0}, harness=3.0)
    got = todo_metrics(todo_values(out), ["react", "vanilla"], result(out))
    assert got["todo_react"] == pytest.approx(60_000 / 40) and got["todo_runs_per_min"] == pytest.approx(60_000 / 60)
    out = "engine_json_ms 90\nengine_json_cpu_ms 101\nengine_json_runs 10\nengine_json_check 9\nengine_json_harness_cpu_ms 1\n"
    assert engine_metrics(todo_values(out), ["json"], {}, result(out))["engine_json"] == pytest.approx(100)


def test_work_no_bigger_than_its_measuring_is_a_one_line_error():
    out = _todo_lines({"react": 0.1}, harness=4.0)
    with pytest.raises(WorkloadError, match="the react app took .* the measuring path alone") as err:
        todo_metrics(todo_values(out), ["react"], result(out))
    assert "\n" not in str(err.value)


def todo_values(out: str) -> dict[str, float]:
    from shootout.workloads.contract import parse_key_values

    return parse_key_values(out)


def test_a_missing_step_is_a_one_line_error():
    out = _todo_lines({"react": 10.0}).replace("todo_react_delete_async_ms 10.0\n", "")
    with pytest.raises(WorkloadError, match="todo_react_delete_async_ms") as err:
        todo_metrics(todo_values(out), ["react"], result(out))
    assert "\n" not in str(err.value)


def test_engine_rates_geomean_and_checks():
    out = ("engine_splay_ms 900\nengine_splay_cpu_ms 500\nengine_splay_runs 10\nengine_splay_check 7\n"
           "engine_json_ms 2100\nengine_json_cpu_ms 2000\nengine_json_runs 10\nengine_json_check 9\n"
           "engine_splay_harness_cpu_ms 0\nengine_json_harness_cpu_ms 0\n")
    got = engine_metrics(todo_values(out), ["splay", "json"], {"splay": 7, "json": 9}, result(out))
    assert got["engine_splay"] == pytest.approx(20) and got["engine_json"] == pytest.approx(5)
    assert got["engine_geomean"] == pytest.approx(10)
    with pytest.raises(WorkloadError, match="the json kernel computed 9.0 here, 8 on the first"):
        engine_metrics(todo_values(out), ["splay", "json"], {"json": 8}, result(out))


def test_startup_and_tabs_metrics():
    got = startup_metrics({"launch_ms": 900, "first_paint_ms": 120, "renderer_peak_kb": 204800}, result())
    assert got == {"launch_ms": 900, "first_paint_ms": 120, "renderer_peak_rss": 200}
    values = {f"switch_{i}_ms": float(v) for i, v in enumerate([5, 1, 4, 2, 3, 100, 6, 7, 8, 9])}
    got = tabs_metrics({**values, "tab_open_ms": 50, "renderers_peak_kb_sum": 1024 * 512}, 10, result())
    assert got["switch_ms"] == 5.5 and got["switch_p90_ms"] == pytest.approx(18.1)
    assert got["renderers_rss"] == 512 and got["tab_open_ms"] == 50


# -- the workloads' declarations -------------------------------------------------------------------


@pytest.mark.parametrize("cls", [Browser, BrowserTabs], ids=lambda c: c.spec.name)
def test_spec_and_params(cls):
    spec = cls.spec
    names = [m.name for m in spec.metrics]
    assert REGISTRY[spec.name] is cls and spec.category == "browser" and spec.headline in names
    assert len(names) == len(set(names)) and all(re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", n) for n in names)
    assert all(m.unit in UNITS and m.description for m in spec.metrics)
    assert "chromium" in cls.debian_packages() and not cls.preinstalled
    default = cls().default_params(TargetFacts())
    assert set(cls.quick) <= set(default) and cls.quick["heavy_sections"] < default["heavy_sections"]
    json.dumps(default)


def test_browser_names_every_framework_and_kernel_as_a_metric():
    names = {m.name for m in Browser.spec.metrics}
    assert {f"todo_{f}" for f in FRAMEWORKS} <= names
    assert {f"engine_{k}" for k in Browser().default_params(TargetFacts())["kernels"]} <= names


def test_units_say_which_way_is_better():
    assert UNITS["runs/min"].direction is Direction.HIGHER and UNITS["runs/min"].scale == pytest.approx(1 / 60)
    assert UNITS["MiB used"].direction is Direction.LOWER


class NoChromium(HostTarget):
    def which(self, tool: str) -> str | None:
        return None if tool == CHROMIUM else super().which(tool)


def test_missing_chromium_names_its_package():
    target = NoChromium(Config(name="bare"))
    try:
        with pytest.raises(ToolMissing) as err:
            Browser().check_tools(target)
        assert err.value.package == "chromium" and "bare" in str(err.value) and "\n" not in str(err.value)
    finally:
        target.close()


@pytest.mark.parametrize(("change", "message"), [
    ({"frameworks": ["angular"]}, "frameworks angular"), ({"sets": []}, "sets is empty"),
    ({"kernels": {"richards": 10}}, "kernels richards"), ({"heavy_sections": 0}, "heavy_sections"),
])
def test_bad_params_are_one_line_errors(change, message):
    with pytest.raises(WorkloadError, match=message) as err:
        Browser().check_params({**Browser().default_params(TargetFacts()), **change})
    assert "\n" not in str(err.value)


def test_tabs_need_two_tabs():
    with pytest.raises(WorkloadError, match="at least 2 tabs"):
        BrowserTabs().check_params({**BrowserTabs().default_params(TargetFacts()), "tabs": 1})

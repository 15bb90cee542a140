"""js: the pinned npm tools installed into the cache and run under the host's node."""

from __future__ import annotations

from shootout.workloads.js import PACKAGES, TASKS, JavaScript


def test_js_tools_run_and_agree_with_calibration(host, context):
    w = JavaScript()
    ctx = context(host, w, {"units": 10})
    prepared = w.prepare(ctx)
    assert prepared.facts["packages"] == PACKAGES and prepared.versions["node"].startswith("v")
    params = w.calibrate(ctx, prepared)
    assert set(params["runs"]) == set(TASKS) and all(n >= 1 for n in params["runs"].values())
    result = host.run(w.argv(prepared, params), timeout=600)
    assert result.exit_status == 0, result.stderr[-2000:]
    values = w.parse(result, params)
    assert set(values) == set(TASKS) | {"geomean"}
    assert all(v > 0 for v in values.values())
    # acorn only parses; minifying and type checking the same module cost more
    assert values["acorn_parse"] > values["terser_minify"] and values["acorn_parse"] > values["tsc_check_emit"]

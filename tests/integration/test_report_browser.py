"""The HTML report in real headless Chromium (Debian's package), driven over the DevTools protocol.

Checks: no console errors or exceptions, no request leaves the file, every chart is there
and drawn, the results table re-sorts on a real mouse click on a heading; a full-page
screenshot goes to $SHOOTOUT_ARTIFACTS (or the test's tmp dir).
Needs: apt-get install chromium; pip install websocket-client.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import math
import os
import random
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from shootout.report.html import render_html

FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--remote-debugging-port=0",
    "--window-size=1280,900",
]


def _load_fixture():
    spec = importlib.util.spec_from_file_location("shootout_report_fixture", FIXTURES / "fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Page:
    """A minimal CDP client: numbered commands, events buffered while waiting for replies."""

    def __init__(self, ws_url: str) -> None:
        import websocket  # websocket-client

        # Chromium refuses DevTools websockets carrying a foreign Origin header.
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ev in self.events:
                if ev.get("method") == method:
                    return ev
            self.events.append(json.loads(self.ws.recv()))
        raise AssertionError(f"no {method} within {timeout}s")

    def eval(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"JS error in test expression: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x: float, y: float) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self) -> None:
        self.ws.close()


@pytest.fixture
def browser(tmp_path):
    exe = shutil.which("chromium")
    if exe is None:
        pytest.fail("chromium is not installed: apt-get install chromium (Debian package chromium)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.fail("the Python package websocket-client is not installed: pip install websocket-client")
    profile = tmp_path / "chromium-profile"
    proc = subprocess.Popen(
        [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # its temporary files go with the test's
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if proc.poll() is not None:
                pytest.fail(f"chromium exited with status {proc.returncode} before opening DevTools")
            if time.monotonic() > deadline:
                pytest.fail("chromium did not open its DevTools port within 60 s")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        page = Page(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"))
        yield page
        page.close()
    finally:
        # Only the browser this test started: its own process group.
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _column(page: Page, index: int) -> list[str]:
    return page.eval(
        f"Array.from(document.querySelectorAll('#results-table tbody tr'))"
        f".map(r => r.cells[{index}].getAttribute('data-sort') ?? r.cells[{index}].textContent.trim())"
    )


def test_report_in_headless_chromium(browser, tmp_path):
    analysis = _load_fixture().build()
    base, other = (c.name for c in analysis.configs)
    report = tmp_path / "report.html"
    report.write_text(render_html(analysis, prices={base: 0.768, other: 0.408}, price_unit="$/h"), encoding="utf-8")

    page = browser
    for domain in ("Page", "Runtime", "Log", "Network"):
        page.send(f"{domain}.enable")
    page.send("Page.navigate", url=report.as_uri())
    page.wait_event("Page.loadEventFired")
    page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    errors = [e for e in page.events if e.get("method") == "Runtime.exceptionThrown"]
    errors += [e for e in page.events if e.get("method") == "Runtime.consoleAPICalled"
               and e["params"]["type"] in ("error", "assert")]
    errors += [e for e in page.events if e.get("method") == "Log.entryAdded"
               and e["params"]["entry"]["level"] == "error"]
    assert not errors, f"console errors: {errors}"
    urls = [e["params"]["request"]["url"] for e in page.events if e.get("method") == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(("file:", "data:")) for u in urls), f"external requests: {urls}"

    assert page.eval("document.title").startswith("shootout: amd64 userspace vs i386 userspace")
    charts = page.eval(
        "Array.from(document.querySelectorAll('figure.chart')).map(f => {"
        " const s = f.querySelector('svg'); if (!s) return null;"
        " const b = s.getBoundingClientRect();"
        " return {w: b.width, h: b.height, shapes: s.querySelectorAll('path, rect, use').length,"
        "         text: s.querySelectorAll('text').length}; })"
    )
    assert len(charts) == 1 + len(analysis.workloads)
    for chart in charts:
        assert chart is not None, "a chart figure has no svg"
        assert chart["w"] > 200 and chart["h"] > 150 and chart["shapes"] > 10 and chart["text"] > 5, chart

    # Sort by Speed-up with a real click on the heading: ascending, then descending.
    headers = page.eval("Array.from(document.querySelectorAll('#results-table thead th')).map(t => t.textContent.trim())")
    col = headers.index("Speed-up")
    before = [float(v) for v in _column(page, col)]
    assert before != sorted(before), "fixture rows should not start sorted by speed-up"
    box = page.eval(
        f"(() => {{ const t = document.querySelectorAll('#results-table thead th')[{col}];"
        " t.scrollIntoView({block: 'center'}); const b = t.getBoundingClientRect();"
        " return {x: b.x + b.width / 2, y: b.y + b.height / 2}; })()"
    )
    page.click(box["x"], box["y"])
    ascending = [float(v) for v in _column(page, col)]
    assert ascending == sorted(before)
    assert page.eval(f"document.querySelectorAll('#results-table thead th')[{col}].getAttribute('aria-sort')") == "ascending"
    page.click(box["x"], box["y"])
    assert [float(v) for v in _column(page, col)] == sorted(before, reverse=True)
    # Text column: workload names sort alphabetically.
    wcol = headers.index("Workload")
    box = page.eval(
        f"(() => {{ const b = document.querySelectorAll('#results-table thead th')[{wcol}].getBoundingClientRect();"
        " return {x: b.x + b.width / 2, y: b.y + b.height / 2}; })()"
    )
    page.click(box["x"], box["y"])
    names = _column(page, wcol)
    assert names == sorted(names, key=str.lower)

    assert page.eval("document.querySelectorAll('#facts-configs tr.differs').length") >= 1
    assert page.eval("document.querySelectorAll('#results-table .confounder').length") >= 1
    # at 800 px the per-price table too stays in the page or scrolls in its own wrapper
    page.send("Emulation.setDeviceMetricsOverride", width=800, height=900, deviceScaleFactor=1, mobile=False)
    tables = page.eval(TABLES_JS)
    assert tables["scroll"] <= tables["page"] and any(t["id"] == "per-dollar-table" for t in tables["tables"]), tables
    assert not [t for t in tables["tables"] if t["right"] > tables["page"] and not t["wrapped"]], tables
    page.send("Emulation.clearDeviceMetricsOverride")

    page.eval("window.scrollTo(0, 0)")
    shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    artifacts = Path(os.environ.get("SHOOTOUT_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    png = base64.b64decode(shot["data"])
    assert png.startswith(b"\x89PNG") and len(png) > 50_000
    (artifacts / "report-chromium.png").write_bytes(png)
    (artifacts / "report.html").write_bytes(report.read_bytes())


# Every text of the inline charts (its box on the page and its font size on screen), and every
# image's box; at the page's 800 px the charts must read as drawn, without one text over another.
LAYOUT_JS = """(() => {
  const texts = [], images = [];
  for (const el of document.querySelectorAll('svg, img')) {
    if (el.parentElement.closest('svg')) continue;
    const b = el.getBoundingClientRect();
    const figure = images.length;
    images.push({figure, left: b.left, right: b.right, width: b.width});
    for (const t of el.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const m = t.getScreenCTM();  // its scale on screen, whatever its rotation
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      texts.push({figure, text: t.textContent, px, left: r.left, right: r.right,
                  top: r.top + scrollY, bottom: r.bottom + scrollY});
    }
  }
  return {texts, images, page: document.documentElement.clientWidth};
})()"""
TOUCH_PX = 0.5  # boxes of two lines of one label may share their edge


def _overlapping(texts: list[dict]) -> list[tuple[str, str]]:
    hits = []
    for i, a in enumerate(texts):
        for b in texts[i + 1:]:
            if (min(a["right"], b["right"]) - max(a["left"], b["left"]) > TOUCH_PX
                    and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > TOUCH_PX):
                hits.append((a["text"], b["text"]))
    return hits


def three_configurations(db: str) -> None:
    """A real run of three configurations with names as long as people give them (the fake
    target's commands, a few percent apart), stored as `shootout run` stores it."""
    from shootout.base.model import Config, RunSettings
    from shootout.measure.runner import Runner, RunRequest
    from shootout.places.fake import SCRIPTS
    from shootout.store import Store
    from shootout.system.journal import Journal
    from shootout.workloads.user import CommandWorkload

    names = ("debian-bookworm-amd64-plain", "debian-bookworm-i386-plain", "debian-bookworm-amd64-lto")

    def script(argv, config, n):
        noise = random.Random(f"{config}:{n}:{argv}").gauss(0, 0.01)
        return f"rate: {1000 * (1 + 0.03 * names.index(config)) * math.exp(noise):.3f}\n"

    SCRIPTS["three"] = script
    configs = [Config(name=n, target="fake", options=(("script", "three"),)) for n in names]
    work = [CommandWorkload({"name": name, "command": [name], "regex": r"rate: ([0-9.]+)", "unit": "ops/s"})
            for name in ("compile-the-kernel-tree", "sqlite-insert-rows")]
    home = Path(db.removeprefix("sqlite:///")).parent
    Runner(Store(db), Journal(home)).start(RunRequest(configs, work, RunSettings(seed=5, max_rounds=12, repeats=0, counters=False)))


@pytest.mark.parametrize("report", ["stored run", "stored run, every metric", "three configurations"])
def test_the_report_reads_at_800_px_without_overlaps(browser, shootout, tmp_path, report):
    """A real run (membw's 17 metrics, flags) imported and reported as a user would, with every
    metric's panel too, and a run of three configurations; each laid out by Chromium in a page
    800 px wide: no two chart texts overlap, none is under 10 px, no image is wider than the page,
    the page never scrolls sideways, and the results table shows its answer (speed-up, interval,
    verdict) inside the page, any wider table scrolling in a wrapper of its own."""
    if report == "three configurations":
        three_configurations(shootout.db)
    else:
        imported = shootout("import", str(FIXTURES / "stored-run.json"), "--db", shootout.db)
        assert imported.returncode == 0, imported.stderr
    every = ["--all"] if report == "stored run, every metric" else []
    done = shootout("report", "last", *every, "--out", str(tmp_path / "report"), "--db", shootout.db)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr  # matplotlib's, e.g. a layout that collapsed

    page = browser
    page.send("Emulation.setDeviceMetricsOverride", width=800, height=900, deviceScaleFactor=1, mobile=False)
    page.send("Page.enable")
    page.send("Page.navigate", url=(tmp_path / "report" / "report.html").as_uri())
    page.wait_event("Page.loadEventFired")
    found = page.eval(LAYOUT_JS)

    assert len(found["images"]) >= 3 and len(found["texts"]) > 50, found["images"]
    wide = [i for i in found["images"] if i["left"] < 0 or i["right"] > found["page"]]
    small = sorted({(round(t["px"], 1), t["text"]) for t in found["texts"] if t["px"] < 9.5})
    hits = _overlapping(found["texts"])
    assert not (wide or small or hits), (
        f"images wider than the {found['page']} px page: {wide}; {len(small)} chart texts under 10 px, "
        f"e.g. {small[:6]}; {len(hits)} pairs of chart texts overlap, e.g. {hits[:8]}")
    tables = page.eval(TABLES_JS)
    assert tables["scroll"] <= tables["page"], f"the page scrolls sideways: {tables['scroll']} px"
    assert not [t for t in tables["tables"] if t["right"] > tables["page"] and not t["wrapped"]], tables
    answer = [h for h in tables["heads"] if h["text"] in ("Speed-up", "Interval", "Verdict")]
    assert len(answer) == 3 and all(h["right"] <= tables["page"] for h in answer), answer

    shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    artifacts = Path(os.environ.get("SHOOTOUT_ARTIFACTS") or tmp_path)
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / f"report-800px-{report.replace(' ', '-').replace(',', '')}.png").write_bytes(
        base64.b64decode(shot["data"]))


# Every table's box, whether a scrolling wrapper holds it, and the results table's headings.
TABLES_JS = """(() => {
  const tables = Array.from(document.querySelectorAll('table')).map(t => ({
    id: t.id, right: t.getBoundingClientRect().right, wrapped: !!t.closest('.table-wrap')}));
  const heads = Array.from(document.querySelectorAll('#results-table thead th')).map(h => ({
    text: h.textContent.replace(/[\u2195\u25B2\u25BC]/g, '').trim(), right: h.getBoundingClientRect().right}));
  return {tables, heads, page: document.documentElement.clientWidth,
          scroll: document.documentElement.scrollWidth};
})()"""

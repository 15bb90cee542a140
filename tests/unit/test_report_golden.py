"""Golden-file tests: Markdown, `show --json` rows and HTML structure from the report fixture.

Regenerate after an intended change with SHOOTOUT_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import json
import math
import os
from html.parser import HTMLParser
from pathlib import Path

from shootout.report.charts import SUMMARY_KEY, chart_names
from shootout.report.html import render_html
from shootout.report.jsondata import show_rows
from shootout.report.markdown import render_markdown

FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"
GOLDEN = FIXTURES / "golden"
UPDATE = os.environ.get("SHOOTOUT_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with SHOOTOUT_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from its golden file (SHOOTOUT_UPDATE_GOLDEN=1 to accept)"


def _close(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


class Outline(HTMLParser):
    """The structure of the report without the chart drawings: headings, tables, figures."""

    KEEP = frozenset({"h1", "h2", "h3", "section", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "figure", "figcaption", "li", "p", "script"})

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self.stack: list[tuple[str, list[str]]] = []
        self.in_svg = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg":
            self.in_svg += 1
            if self.in_svg == 1:
                self.lines.append("  " * len(self.stack) + "<svg>")
            return
        if self.in_svg or tag not in self.KEEP:
            return
        ident = "".join(f" {k}={attrs[k]}" for k in ("id", "class", "data-type", "data-sort", "colspan") if k in attrs)
        self.lines.append("  " * len(self.stack) + f"<{tag}{ident}>")
        self.stack.append((tag, []))

    def handle_endtag(self, tag):
        if tag == "svg":
            self.in_svg -= 1
            return
        if self.in_svg or tag not in self.KEEP:
            return
        while self.stack:
            name, text = self.stack.pop()
            words = " ".join("".join(text).split())
            if words and name != "script":
                self.lines.append("  " * (len(self.stack) + 1) + words)
            if name == tag:
                break

    def handle_data(self, data):
        if not self.in_svg and self.stack:
            self.stack[-1][1].append(data)


def html_outline(html: str) -> str:
    parser = Outline()
    parser.feed(html)
    return "\n".join(parser.lines) + "\n"


def test_markdown_matches_golden(analysis):
    names = chart_names(analysis, "png")
    check_golden("report.md", render_markdown(analysis, names))


def test_markdown_references_every_chart(analysis):
    names = chart_names(analysis, "png")
    text = render_markdown(analysis, names)
    assert f"]({names[SUMMARY_KEY]})" in text
    for w in analysis.workloads:
        assert f"]({names[w.name]})" in text


def test_json_rows_match_golden(analysis):
    rows = show_rows(analysis)
    text = json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    path = GOLDEN / "show-rows.json"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    assert _close(rows, json.loads(path.read_text(encoding="utf-8"))), "show rows differ from golden file"


def test_json_rows_carry_the_documented_keys(analysis):
    rows = show_rows(analysis)
    keys = {"workload", "metric", "unit", "direction", "baseline", "config", "speedup", "ci_low", "ci_high",
            "verdict", "flags", "confounders", "paired", "rule", "resolution"}
    assert all(keys <= row.keys() for row in rows)
    json.dumps(rows)  # plain data only
    geo = [r for r in rows if r["workload"] == "geomean"]
    assert len(geo) == 1 and geo[0]["ci_low"] < geo[0]["speedup"] < geo[0]["ci_high"]
    assert len(rows) - len(geo) - sum(r["workload"].startswith("geomean:") for r in rows) == len(analysis.comparisons)
    openssl = next(r for r in rows if r["metric"] == "openssl")
    assert openssl["confounders"] and openssl["verdict"] == "estimate"  # a sub-metric: no verdict
    sha1 = next(r for r in rows if r["metric"] == "sha1sum")
    assert sha1["verdict"] == "slower" and "Bonferroni over 5" in sha1["rule"]
    xz = next(r for r in rows if r["workload"] == "xz")
    assert xz["verdict"] == "inconclusive" and xz["resolution"]["same_at"] > xz["resolution"]["resolves"] > 0


def test_html_structure_matches_golden(analysis):
    check_golden("report-structure.txt", html_outline(render_html(analysis)))


def test_golden_files_are_compared_not_rewritten():
    # The update switch must be off in normal runs, or every golden test would pass vacuously.
    assert os.environ.get("SHOOTOUT_UPDATE_GOLDEN") in (None, "", "0", "1")
    if not UPDATE:
        assert (GOLDEN / "report.md").exists()

"""`shootout report`: render a report in one format and write its files into a directory."""

from __future__ import annotations

from pathlib import Path

from shootout.base.errors import UsageError
from shootout.judge.analysis import Analysis
from shootout.report import charts
from shootout.report.html import render_html
from shootout.report.markdown import render_markdown
from shootout.report.timeline import TIMELINE_KEY, timeline_chart
from shootout.report.whychart import WHY_KEY, why_chart

REPORT_FORMATS = ("html", "md", "png", "svg")
# Other spellings people type for the same formats (case is ignored too).
FORMAT_ALIASES = {"htm": "html", "markdown": "md", "mdown": "md", "mkd": "md"}


def report_format(name: str) -> str:
    """The canonical format for what the user typed: 'Markdown' -> 'md'; one-line error otherwise."""
    key = name.strip().lower().lstrip(".")
    fmt = FORMAT_ALIASES.get(key, key)
    if fmt not in REPORT_FORMATS:
        raise UsageError(f"unknown report format {name!r}", "use one of: html, md (or markdown), png, svg")
    return fmt


def write_report(
    analysis: Analysis,
    out_dir: Path,
    fmt: str,
    prices: dict[str, float] | None = None,
    price_unit: str = "$",
    all_metrics: bool = False,
) -> list[Path]:
    """Write the report for `shootout report --format html|md|png|svg --out DIR`.

    html: report.html (self-contained); md: report.md plus its PNG charts; png/svg: the
    charts only (with the monitors' timeline when something was sampled). A workload's chart draws its
    headline metric, or every metric with all_metrics. Returns the paths written. Everything is
    rendered before anything is written, so a rendering error leaves the directory untouched.
    """
    fmt = report_format(fmt)
    files: dict[str, bytes] = {}
    if fmt == "html":
        files["report.html"] = render_html(analysis, prices, price_unit, all_metrics).encode("utf-8")
    else:
        ext = "png" if fmt == "md" else fmt
        names = charts.chart_names(analysis, ext)
        for key, name in names.items():
            files[name] = (charts.summary_chart(analysis, ext) if key == charts.SUMMARY_KEY
                           else charts.workload_chart(analysis, key, ext, all_metrics=all_metrics))
        if (timeline := timeline_chart(analysis, ext)) is not None:
            names[TIMELINE_KEY] = f"timeline.{ext}"
            files[names[TIMELINE_KEY]] = timeline
        if (counters := why_chart(analysis, ext)) is not None:
            names[WHY_KEY] = f"why.{ext}"
            files[names[WHY_KEY]] = counters
        if fmt == "md":
            files["report.md"] = render_markdown(analysis, names, prices, price_unit).encode("utf-8")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name, data in files.items():
            path = out_dir / name
            path.write_bytes(data)
            written.append(path)
    except OSError as exc:
        raise UsageError(f"cannot write the report to {out_dir}: {exc.strerror or exc}",
                         "choose a writable directory with --out") from None
    return written

"""Charts: valid images, bars from zero with the right medians, sorted summary, fixed output."""

from __future__ import annotations

import dataclasses
import io
import re
import warnings

import matplotlib.image as mpimg
import numpy as np
import pytest

from shootout.base.errors import UsageError
from shootout.report import charts
from shootout.report.html import inline_svg


def _texts(svg: bytes) -> list[tuple[float, str]]:
    """(y, text) of every text element of an SVG rendered with text kept as text."""
    out = []
    for m in re.finditer(rb"<text([^>]*)>(.*?)</text>", svg, re.DOTALL):
        y = re.search(rb' y="([-\d.]+)"', m.group(1))
        out.append((float(y.group(1)) if y else 0.0, re.sub(rb"<[^>]+>", b"", m.group(2)).decode()))
    return out


def test_median_ci_is_the_order_statistic_interval():
    values = list(range(1, 21))  # n=20: the 95% interval of the median is [x(6), x(15)]
    assert charts.median_ci(values) == (6.0, 15.0)
    assert charts.median_ci([5, 1, 4, 2, 6, 3]) == (1.0, 6.0)  # n=6: [min, max], coverage 62/64
    assert charts.median_ci([1, 2, 3, 4, 5]) is None  # no 95% interval exists below 6 values


def test_png_charts_are_real_images(analysis):
    for data in [charts.summary_chart(analysis, "png")] + [
        charts.workload_chart(analysis, w.name, "png") for w in analysis.workloads
    ]:
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        img = mpimg.imread(io.BytesIO(data), format="png")
        h, w = img.shape[:2]
        assert 600 <= w <= 800 and h >= 250  # a blog's column, at the dpi it was saved at
        assert np.std(img[..., :3]) > 0.05  # not a blank canvas


def test_workload_chart_labels_caption_and_direction(analysis):
    svg = charts.workload_chart(analysis, "xz", "svg", text_as_paths=False)
    words = " ".join(t for _, t in _texts(svg))
    assert "amd64 userspace" in words and "i386 userspace" in words
    assert "lower is better" in words and "higher is better" not in words
    assert "6.576 s" in words  # the baseline median, labelled with its unit
    assert "cv&gt;10%" in words or "cv>10%" in words  # the flag is on the chart
    assert "95% CI of each median" in words


def test_workload_bars_start_at_zero_and_have_median_heights(analysis):
    svg = charts.workload_chart(analysis, "intmix", "svg", text_as_paths=False)
    ticks = [t for _, t in _texts(svg) if re.fullmatch(r"[\d,.]+M?", t)]
    assert ticks[0] == "0", f"y axis must start at zero, ticks: {ticks}"
    sha = charts.workload_chart(analysis, "sha1-sparse", "svg", text_as_paths=False, all_metrics=True)
    words = " ".join(t for _, t in _texts(sha))
    assert "sha1sum (MB/s)" in words and "openssl (MB/s)" in words  # one panel per metric
    assert "confounder" in words


def test_a_workload_chart_draws_its_headline_metric_unless_all_are_asked_for(analysis):
    words = " ".join(t for _, t in _texts(charts.workload_chart(analysis, "sha1-sparse", "svg", text_as_paths=False)))
    assert "sha1sum (MB/s)" in words and "openssl (MB/s)" not in words
    assert "shootout report --all draws the other 1" in words
    every = " ".join(t for _, t in _texts(charts.workload_chart(analysis, "xz", "svg", text_as_paths=False)))
    assert "--all" not in every  # xz has one metric: nothing left out


def test_many_flags_on_every_panel_lay_out_without_a_warning(analysis):
    """Captions that name every flag grow the figure: a fixed height collapsed the axes to zero."""
    flags = ("cv>10%", "outliers", "trend", "short-trial", "throttled", "steal 3.2%", "swap activity")
    comps = tuple(dataclasses.replace(c, flags=flags, confounders=("the C libraries copy with different code",) * 3)
                  for c in analysis.comparisons)
    flagged = dataclasses.replace(analysis, comparisons=comps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # matplotlib's layout warnings
        for w in analysis.workloads:
            charts.workload_chart(flagged, w.name, "svg", all_metrics=True)


def test_summary_chart_is_sorted_by_speedup(analysis):
    svg = charts.summary_chart(analysis, "svg", text_as_paths=False)
    texts = _texts(svg)
    heads = [c for c in analysis.comparisons if c.headline]
    ys = {}
    specs = {w.name: w for w in analysis.workloads}

    def label(c):
        return f"{c.workload} ({c.metric})" if len(specs[c.workload].metrics) > 1 else c.workload

    for c in heads:
        ys[label(c)] = next(y for y, t in texts if t == label(c))
    by_ratio = sorted(heads, key=lambda c: -c.estimate.ratio)
    order = sorted(ys, key=ys.get)  # SVG y grows downwards: top first
    assert order == [label(c) for c in by_ratio]
    assert "membw (write)" in order and "intmix" in order
    words = " ".join(t for _, t in texts)
    assert "noise floor" in words and "GEOMEAN" in words and "geomean: memory" in words


def test_svg_output_is_deterministic(analysis):
    assert charts.summary_chart(analysis, "svg") == charts.summary_chart(analysis, "svg")
    assert charts.workload_chart(analysis, "membw", "svg") == charts.workload_chart(analysis, "membw", "svg")


def test_inline_svg_has_no_urls(analysis):
    svg = str(inline_svg(charts.summary_chart(analysis, "svg", text_as_paths=False)))
    assert svg.startswith("<svg") and "http" not in svg and "<metadata" not in svg


def test_unknown_format_and_workload_are_usage_errors(analysis):
    with pytest.raises(UsageError):
        charts.summary_chart(analysis, "gif")
    with pytest.raises(UsageError):
        charts.workload_chart(analysis, "no-such-workload")


def test_chart_names_are_unique_and_safe(analysis):
    names = charts.chart_names(analysis, "png")
    assert names[charts.SUMMARY_KEY] == "summary.png"
    assert len(set(names.values())) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+\.png", n) for n in names.values())


def test_a_workload_chart_names_the_size_the_run_stored_not_a_default(analysis):
    """rpi64 stores size = 2 GB for sha1-sparse; its chart said '1 GB' (the description's default)."""
    import dataclasses

    from shootout.report.markdown import render_markdown
    from shootout.workloads.crypto import Sha1Sparse

    run = dataclasses.replace(analysis.runs[0], params={"sha1-sparse": {"size": 2_000_000_000}})
    specs = tuple(Sha1Sparse.spec if w.name == "sha1-sparse" else w for w in analysis.workloads)
    two_gb = dataclasses.replace(analysis, runs=(run,), workloads=specs)
    title = " ".join(t for _, t in _texts(charts.workload_chart(two_gb, "sha1-sparse", "svg", text_as_paths=False)))
    assert "size = 2 GB" in title and "1 GB" not in title
    assert "(this run: size = 2 GB)" in render_markdown(two_gb, {})

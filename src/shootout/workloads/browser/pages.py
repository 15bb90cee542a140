"""The browser workloads' pages: a generated heavy page, and the small pages around the apps.

The heavy page stands in for a modern content page: `sections` blocks of text, tables,
lists, inline SVG charts and card grids, a few hundred generated CSS rules, and a script that
builds a comment thread from a JSON island and draws a canvas chart as the page loads (as a
hydrating page would). It sets `window.heavyReady`, a promise resolved once that work is
done and a frame has been produced. Byte-identical on every machine (inputs.Rng).
"""

from __future__ import annotations

import html
import json

from shootout.workloads.inputs import Rng, vocabulary

FRAMEWORKS = ("react", "preact", "vue", "svelte", "vanilla")


def _words(rng: Rng, vocab: list[str], n: int) -> list[str]:
    return [vocab[i] for i in rng.below(n, len(vocab)).tolist()]


def _color(value: int) -> str:
    return f"#{value & 0xFFFFFF:06x}"


def _styles(rng: Rng, rules: int) -> str:
    d = rng.below(rules * 6, 1 << 24).tolist()
    lines = ["*{box-sizing:border-box}body{margin:0;font:15px/1.5 'DejaVu Sans',sans-serif;color:#222}",
             "main{max-width:1100px;margin:0 auto;padding:16px}",
             ".grid{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}",
             ".card{border:1px solid #ddd;border-radius:8px;padding:12px;box-shadow:0 1px 3px rgba(0,0,0,.15)}",
             "table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:4px 8px}",
             "tr:nth-child(even){background:#f4f6f8}.badge{display:inline-block;padding:0 6px;border-radius:9px}",
             "nav ul{display:flex;flex-wrap:wrap;gap:8px;list-style:none;padding:0}",
             ".comment{margin:6px 0 6px 24px;padding:6px;border-left:3px solid #9ab}"]
    for i in range(rules):
        a, b, c, e, f, g = d[6 * i:6 * i + 6]
        lines.append(f".c{i}{{color:{_color(a)};background:linear-gradient({b % 360}deg,{_color(c)}22,{_color(e)}11);"
                     f"padding:{f % 9}px {g % 13}px;margin:{a % 5}px 0;border-radius:{b % 7}px;"
                     f"transform:translateX({c % 3}px)}}")
        if i % 4 == 0:
            lines.append(f"section:nth-of-type({i % 17 + 2}n) .c{i}:hover{{outline:1px solid {_color(f)}}}")
    return "\n".join(lines)


def _chart(rng: Rng) -> str:
    ys = rng.below(40, 90).tolist()
    bars = rng.below(10, 80).tolist()
    points = " ".join(f"{10 + 12 * i},{100 - y}" for i, y in enumerate(ys))
    rects = "".join(f'<rect x="{20 + 46 * i}" y="{100 - h}" width="30" height="{h}" fill="#{(i * 0x1b3d5f) & 0xFFFFFF:06x}"/>'
                    for i, h in enumerate(bars))
    return (f'<svg viewBox="0 0 500 110" width="500" height="110" role="img">{rects}'
            f'<polyline points="{points}" fill="none" stroke="#c33" stroke-width="2"/></svg>')


def _section(rng: Rng, vocab: list[str], k: int, rules: int) -> str:
    cls = lambda: f"c{rng.int(rules)}"
    title = " ".join(_words(rng, vocab, 4)).capitalize()
    paragraphs = []
    for _ in range(3):
        words = _words(rng, vocab, 40 + rng.int(40))
        words[5] = f'<a href="#s{rng.int(k + 1)}">{words[5]}</a>'
        words[12] = f"<em>{words[12]}</em>"
        words[20] = f'<strong class="{cls()}">{words[20]}</strong>'
        paragraphs.append(f'<p class="{cls()}">{" ".join(words).capitalize()}.</p>')
    cells = rng.below(8 * 5, 100000).tolist()
    names = _words(rng, vocab, 8)
    rows = "".join(f"<tr><th>{names[r]}</th>" + "".join(f"<td>{cells[5 * r + c] / 100:.2f}</td>" for c in range(4))
                   + f'<td><span class="badge {cls()}">{cells[5 * r + 4] % 7}</span></td></tr>' for r in range(8))
    items = "".join(f'<li class="{cls()}">{" ".join(_words(rng, vocab, 5))} <span class="badge">{i}</span></li>'
                    for i in range(8))
    cards = "".join(f'<div class="card {cls()}"><h3>{" ".join(_words(rng, vocab, 2))}</h3>'
                    f'<p>{" ".join(_words(rng, vocab, 18))}</p><button type="button">{_words(rng, vocab, 1)[0]}</button></div>'
                    for _ in range(6))
    return (f'<section id="s{k}"><h2 class="{cls()}">{title}</h2>{"".join(paragraphs)}'
            f"<table><tbody>{rows}</tbody></table><ul>{items}</ul>{_chart(rng)}"
            f'<div class="grid">{cards}</div></section>')


_HEAVY_SCRIPT = """
window.heavyReady = new Promise((resolve) => {
  const data = JSON.parse(document.getElementById("comments").textContent);
  const thread = document.getElementById("thread");
  const render = (c) => `<div class="comment"><b>${c.author}</b> <i>${c.score} points</i><p>${c.text}</p>` +
    c.replies.map(render).join("") + "</div>";
  thread.innerHTML = data.map(render).join("");
  const canvas = document.getElementById("spark");
  const g = canvas.getContext("2d");
  g.beginPath();
  data.forEach((c, i) => g.lineTo(i * canvas.width / data.length, canvas.height - (c.score % canvas.height)));
  g.stroke();
  requestAnimationFrame(() => requestAnimationFrame(() => resolve(document.querySelectorAll("*").length)));
});
"""


def _comments(rng: Rng, vocab: list[str], n: int, depth: int = 2) -> list[dict]:
    out = []
    for _ in range(n):
        replies = _comments(rng, vocab, rng.int(3), depth - 1) if depth > 0 else []
        out.append({"author": _words(rng, vocab, 1)[0], "score": rng.int(5000),
                    "text": " ".join(_words(rng, vocab, 12 + rng.int(20))), "replies": replies})
    return out


def heavy_page(sections: int, seed: int = 1) -> str:
    """The heavy page with `sections` content blocks (about 7 kB and 150 elements each)."""
    vocab = vocabulary(seed)
    rng = Rng(seed, 5 << 40)
    rules = max(40, 2 * sections)
    nav = "".join(f'<li><a href="#s{k}">{html.escape(w)}</a></li>' for k, w in enumerate(_words(rng, vocab, min(sections, 60))))
    body = "".join(_section(rng, vocab, k, rules) for k in range(sections))
    comments = json.dumps(_comments(rng, vocab, max(4, sections // 2)), separators=(",", ":")).replace("</", "<\\/")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>shootout heavy page</title>"
            f"<style>{_styles(rng, rules)}</style></head><body><header><nav><ul>{nav}</ul></nav></header>"
            f'<main>{body}<h2>Discussion</h2><canvas id="spark" width="1000" height="120"></canvas><div id="thread"></div></main>'
            f'<script type="application/json" id="comments">{comments}</script><script>{_HEAVY_SCRIPT}</script></body></html>\n')


def todo_page(framework: str) -> str:
    """The page of one to-do app: its bundle, then the harness that drives it."""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>to-do: {framework}</title><link rel=\"stylesheet\" href=\"todo.css\"></head>"
            f'<body><div id="app"></div><script src="app-{framework}.js"></script>'
            '<script src="todo-harness.js"></script></body></html>\n')


def engine_page() -> str:
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>engine kernels</title></head>"
            '<body><p>JavaScript engine kernels</p><script src="engine.js"></script></body></html>\n')

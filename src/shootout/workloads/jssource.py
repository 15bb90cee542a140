"""Deterministic JavaScript and TypeScript sources for the js workload.

One generated module, printed twice: as TypeScript (strict-clean, with annotations, an
interface and typed class fields) and as the same code in plain JavaScript. Functions, classes
and async functions mix loops, switches, destructuring, spread, template strings, closures,
regular expressions and try/catch, so parsers, minifiers, formatters and the type checker all
meet ordinary code. Byte-identical on every machine (inputs.Rng).
"""

from __future__ import annotations

from shootout.workloads.inputs import Rng, vocabulary

_OPS = ("+", "-", "*", "%", "^", "|", "&")


class _Printer:
    def __init__(self, typed: bool) -> None:
        self.typed = typed

    def t(self, annotation: str) -> str:
        """A type annotation in TypeScript, nothing in JavaScript."""
        return annotation if self.typed else ""


def _statement(p: _Printer, d: list[int], name: str, words: list[str], n: int) -> list[str]:
    """Statement number n of a function; its local names carry n so none is declared twice."""
    c1, c2, c3 = d[1] % 97 + 1, d[2] % 13 + 2, d[3] % 1000
    op = _OPS[d[4] % len(_OPS)]
    kind = d[0] % 9
    if kind == 0:
        return ["for (let i = 0; i < limit; i++) {", f"  total += (a * i + b) {op} (scale + {c1});", "}"]
    if kind == 1:
        return [f"let j{n} = {c3};", f"while (j{n} > 0) {{", f"  total ^= j{n} * a + {c2};", f"  j{n} = j{n} >> 1;", "}"]
    if kind == 2:
        return [f"switch (b % {c2}) {{", f"  case 0: total += a {op} {c1}; break;",
                "  case 1: total -= b; break;", "  default: total = total * 2 + 1;", "}"]
    if kind == 3:
        return [f"const rec{n} = {{ id: a, name: \"{words[0]}\", ...{{ extra: b + {c1} }} }};",
                f"total += rec{n}.id + rec{n}.extra + rec{n}.name.length;"]
    if kind == 4:
        return ["try {", f"  total += JSON.parse(\"[{c1}, {c2}, {c3}]\").length;", "} catch (e) {",
                "  total = -1;", "}"]
    if kind == 5:
        return [f"const [p{n}, q{n}]{p.t(': Pair')} = [a + {c1}, b - {c2}];", f"total += p{n} {op} q{n};"]
    if kind == 6:
        return [f"total += Math.max(a, b) > {c3} ? Math.floor(total / {c2}) : Math.abs(a - b);"]
    if kind == 7:
        return [f"const words{n} = \"{' '.join(words)}\".split(\" \").filter((w) => w.length > {c2 % 5});",
                f"total += words{n}.map((w) => w.toUpperCase()).join(\"\").length;"]
    return [f"total += /{words[1][:3]}[a-z]+/.test(\"{name}\") ? {c1} : {c2};",
            f"const add{n} = (x{p.t(': number')}){p.t(': number')} => x + total {op} {c1};", f"total = add{n}(a);"]


def _function(p: _Printer, rng: Rng, name: str, vocab: list[str]) -> list[str]:
    d = rng.below(64, 1 << 30).tolist()
    words = [vocab[x % len(vocab)] for x in d[40:46]]
    lines = [f"export function {name}(a{p.t(': number')}, b{p.t(': number')}, "
             f"opts{p.t(': Options')} = {{}}){p.t(': number')} {{",
             f"  const {{ limit = {d[0] % 20 + 5}, scale = {d[1] % 7 + 1} }} = opts;",
             "  let total = 0;"]
    for s in range(3 + d[2] % 5):
        lines += ["  " + line for line in _statement(p, d[8 + 4 * s:8 + 4 * s + 5], name, words, s)]
    lines += [f"  const items{p.t(': number[]')} = [a, b, total].map((x) => x * scale + {d[3] % 50});",
              f"  if (total > {d[4] % 100000}) {{", "    return items.reduce((s, x) => s + x, 0);", "  }",
              f"  const text = `{name}:${{total}}:${{items.join(\",\")}}`;",
              "  return text.length + helper(items);", "}", ""]
    return lines


def _class(p: _Printer, rng: Rng, name: str, callee: str) -> list[str]:
    d = rng.below(8, 1 << 30).tolist()
    fields = [f"  id{p.t(': number')};", f"  label{p.t(': string')};", f"  items{p.t(': number[]')};"]
    return [f"export class {name} {{", *(fields if p.typed else []),
            f"  constructor(id{p.t(': number')}, label{p.t(': string')}) {{",
            "    this.id = id;", "    this.label = label;", "    this.items = [];", "  }",
            f"  add(value{p.t(': number')}){p.t(': this')} {{", f"    this.items.push(value * {d[0] % 17 + 1});",
            "    return this;", "  }",
            f"  get size(){p.t(': number')} {{", "    return this.items.length;", "  }",
            f"  summary(){p.t(': { id: number; label: string; weight: number }')} {{",
            "    return { id: this.id, label: `${this.label}-${this.size}`, weight: this.weight() };", "  }",
            f"  weight(){p.t(': number')} {{",
            f"    return this.items.reduce((a, b) => a + b, 0) + {callee}(this.id, {d[1] % 100});", "  }",
            "}", ""]


def _async(p: _Printer, rng: Rng, name: str) -> list[str]:
    k = rng.int(50) + 2
    return [f"export async function {name}(n{p.t(': number')}){p.t(': Promise<number>')} {{",
            f"  const values = await Promise.all([n, n + 1, n + 2].map(async (v) => v * {k}));",
            "  return values.reduce((s, v) => s + v, 0);", "}", ""]


def module_source(units: int, typed: bool, seed: int = 1) -> str:
    """`units` functions, classes and async functions; TypeScript if typed, else JavaScript."""
    p = _Printer(typed)
    vocab = vocabulary(seed)
    rng = Rng(seed, 3 << 40)
    lines = ["// generated by shootout (deterministic)"]
    if typed:
        lines += ["export interface Options { limit?: number; scale?: number; label?: string }",
                  "export type Pair = [number, number];"]
    lines += [f"function helper(items{p.t(': number[]')}){p.t(': number')} {{",
              "  return items.length ? items[0] + items[items.length - 1] : 0;", "}", ""]
    functions: list[str] = []
    for i in range(units):
        word = vocab[rng.int(len(vocab))]
        kind = rng.int(10)
        if kind < 7 or not functions:
            name = f"{word}{i}"
            lines += _function(p, rng, name, vocab)
            functions.append(name)
        elif kind < 9:
            lines += _class(p, rng, f"{word.capitalize()}{i}", functions[rng.int(len(functions))])
        else:
            lines += _async(p, rng, f"{word}Async{i}")
    return "\n".join(lines) + "\n"

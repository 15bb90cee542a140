"""Do shootout's verdicts keep their promise on this machine, and at what cost, against hyperfine?

One fixed C program (work.c, calibrated to about 0.2 s) is measured as two configurations of
the host that differ only in an environment variable: B runs 0%, 2% or 5% more iterations
than A. For every injection and condition, RUNS times:

- shootout: `shootout run --file bench.toml` (defaults: threshold 1%, 95%, budget 4m), then
  its verdict and interval for B against A (`shootout show --json`);
- the peer: `hyperfine -N --warmup 1 'A' 'B'` (its default run count), then Welch's t-test on
  the two samples of times (p < 0.05: a difference, its sign the verdict; else none).

Conditions: "quiet" (whatever else runs on the machine) and "load" (every CPU busy 1.3 s, idle
1.7 s, repeating, generated here in Python). Reported per condition and injection: wrong
verdicts (A/A: faster/slower; injections: faster, same), correct ones (A/A: same, or for the
peer no significant difference; injections: slower), intervals covering the injected
difference, the median machine-seconds per run (wall time of the whole command), and
machine-seconds per correct verdict.

    .venv/bin/python benchmarks/verdicts.py                     # 20 runs of everything (about 2 h)
    .venv/bin/python benchmarks/verdicts.py --runs 3 --json out.json

Needs: cc (gcc), hyperfine, and shootout installed in the running Python (the repo's venv).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from contextlib import nullcontext
from pathlib import Path

from common import (
    build_work,
    calibrate,
    hyperfine,
    on_off_load,
    scratch,
    shootout,
    shootout_toml,
)
from scipy import stats

INJECTIONS = (0.0, 2.0, 5.0)


def shootout_run(home: Path, toml: Path, seed: int) -> dict:
    t0 = time.perf_counter()
    done = shootout("run", "--file", str(toml), "-w", "work", "--seed", str(seed), home=home)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"shootout run failed: {done.stderr.strip()}")
    rows = json.loads(shootout("show", "last", "--json", home=home).stdout)
    row = next(r for r in rows if r["workload"] == "work" and r["config"] == "B")
    resolves = (row.get("resolution") or {}).get("resolves")
    return {"verdict": row["verdict"], "low": row["ci_low"], "high": row["ci_high"], "rounds": row["rounds"],
            "resolves": resolves, "seconds": seconds}


def welch_run(binary: Path, iterations: int, extra: float, out: Path) -> dict:
    t0 = time.perf_counter()
    doc = hyperfine(binary, iterations, extra, out)
    seconds = time.perf_counter() - t0
    a, b = (r["times"] for r in doc["results"])
    test = stats.ttest_ind(b, a, equal_var=False)
    ci = test.confidence_interval(0.95)
    mean_a = statistics.fmean(a)
    # speed-up of B over A (performance = 1/time): mean_A / mean_B, interval from the difference
    ratio = mean_a / statistics.fmean(b)
    low, high = mean_a / (mean_a + ci.high), mean_a / (mean_a + ci.low)
    verdict = "none" if test.pvalue >= 0.05 else ("faster" if ratio > 1 else "slower")
    return {"verdict": verdict, "ratio": ratio, "low": float(low), "high": float(high), "p": float(test.pvalue),
            "rounds": len(a), "seconds": seconds}


def correct(tool: str, extra: float, verdict: str) -> bool:
    if extra == 0:
        return verdict == ("same" if tool == "shootout" else "none")
    return verdict == "slower"


def wrong(extra: float, verdict: str) -> bool:
    return verdict in ("faster", "slower") if extra == 0 else verdict in ("faster", "same")


def summarise(results: list[dict]) -> dict:
    truth = 1.0 / (1.0 + results[0]["extra"] / 100.0)
    ok = [r for r in results if correct(r["tool"], r["extra"], r["verdict"])]
    seconds = [r["seconds"] for r in results]
    return {
        "runs": len(results),
        "wrong": sum(wrong(r["extra"], r["verdict"]) for r in results),
        "correct": len(ok),
        "verdicts": {v: sum(r["verdict"] == v for r in results) for v in sorted({r["verdict"] for r in results})},
        "ci_covers_truth": sum(bool(r["low"] is not None and r["low"] <= truth <= r["high"]) for r in results),
        "median_rounds": statistics.median(r["rounds"] for r in results),
        "median_seconds": statistics.median(seconds),
        "seconds_per_correct": sum(seconds) / len(ok) if ok else None,  # None: no correct verdict
    }


def summarise_all(results: list[dict]) -> dict:
    """Every injection of one condition and tool together: machine-seconds per correct verdict."""
    ok = sum(correct(r["tool"], r["extra"], r["verdict"]) for r in results)
    seconds = sum(r["seconds"] for r in results)
    return {"runs": len(results), "correct": ok, "wrong": sum(wrong(r["extra"], r["verdict"]) for r in results),
            "seconds_per_correct": seconds / ok if ok else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per tool, injection and condition")
    parser.add_argument("--conditions", default="quiet,load", help="comma-separated: quiet, load")
    parser.add_argument("--injections", default="0,2,5", help="comma-separated percentages")
    parser.add_argument("--json", type=Path, help="also write every run and the summary here")
    args = parser.parse_args()
    with scratch() as tmp:
        work = Path(tmp)
        binary = build_work(work)
        iterations = calibrate(binary)
        print(f"work {iterations} iterations (~0.2 s); {args.runs} runs per cell", flush=True)
        results = []
        for condition in args.conditions.split(","):
            with on_off_load() if condition == "load" else nullcontext():
                for extra in (float(x) for x in args.injections.split(",")):
                    toml = shootout_toml(work, binary, iterations, extra)
                    for i in range(args.runs):  # alternate the tools so both see the same hour
                        home = work / f"home-{condition}-{extra:g}-{i}"
                        r1 = {"tool": "shootout", **shootout_run(home, toml, seed=i + 1)}
                        r2 = {"tool": "hyperfine+welch", **welch_run(binary, iterations, extra, work / "hf.json")}
                        for r in (r1, r2):
                            results.append({"condition": condition, "extra": extra, **r})
                            print(json.dumps(results[-1]), flush=True)
        summary = {}
        for condition in args.conditions.split(","):
            for extra in (float(x) for x in args.injections.split(",")):
                for tool in ("shootout", "hyperfine+welch"):
                    cell = [r for r in results if (r["condition"], r["extra"], r["tool"]) == (condition, extra, tool)]
                    summary[f"{condition} +{extra:g}% {tool}"] = summarise(cell)
        for condition in args.conditions.split(","):
            for tool in ("shootout", "hyperfine+welch"):
                cell = [r for r in results if (r["condition"], r["tool"]) == (condition, tool)]
                summary[f"{condition} all {tool}"] = summarise_all(cell)
        for key, s in summary.items():
            cost = f"{s['seconds_per_correct']:.1f} s per correct verdict" if s["seconds_per_correct"] else \
                "no correct verdict"
            if "verdicts" not in s:
                print(f"{key:32} {s['correct']}/{s['runs']} correct, {s['wrong']} wrong, {cost}")
                continue
            print(f"{key:32} wrong {s['wrong']}/{s['runs']}  correct {s['correct']}  {s['verdicts']}  "
                  f"CI covers {s['ci_covers_truth']}  median rounds {s['median_rounds']}  "
                  f"median {s['median_seconds']:.1f} s/run  {cost}")
        if args.json:
            args.json.write_text(json.dumps({"iterations": iterations, "runs": results, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()

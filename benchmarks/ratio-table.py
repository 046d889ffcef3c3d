#!/usr/bin/env python3
"""Turns JMH's JSON output (-rf json -rff result.json) into markdown tables of ratios to the floor.

Give it one file per round (benchmarks/run-rounds.sh writes them); with several, every figure is the median over the
rounds, with the spread (lowest–highest) beside it. Each ratio is taken within one round, against the floor of the same
class, mode, thread count and node count of that round, and only then summarised, so a round that ran slower as a whole
does not move the ratios:
  - avgt (time per lock+unlock): score / floor score, so 2.0 means two floor round trips;
  - sample: the same for the median (p50) and the p99;
  - thrpt (operations per second): score / floor score, so 0.5 means half as many lock+unlocks as floor round trips.
A second table compares the clients head to head (who is how many times faster than whom), a third lists secondary
results (OneKey16's acquired, refused and violations; with -prof gc, the bytes allocated per operation).

Usage: python3 benchmarks/ratio-table.py round1.json [round2.json ...]
A round may also be given as several files joined with '+' (round1-a.json+round1-b.json): they are read as one.
"""

import json
import statistics
import sys
from collections import defaultdict

MODES = {"avgt": "mean time", "sample": "sampled time", "thrpt": "throughput", "ss": "single shot"}

# (scenario, mode, numerator, denominator, what it says): "how many times better the first is than the second"
COMPARISONS = [
    ("Latency", "avgt", "naive", "redlock", "naive ÷ redlock mean time: how many times faster than the naive client"),
    ("Latency", "avgt", "redisson", "redlock", "redisson ÷ redlock mean time: how many times faster than Redisson"),
    ("Latency", "avgt", "annotated", "redlock", "annotated ÷ redlock mean time: the annotation's cost (1.00 = none)"),
    ("Latency", "avgt", "ideal", "redlock", "ideal ÷ redlock mean time: the share of the least possible cost (1.00 = none over it)"),
    ("Latency", "avgt", "fenced", "redlock", "fenced ÷ redlock mean time: a fenced lock's cost (one round more)"),
    ("DistinctKeys16", "thrpt", "redlock", "naive", "redlock ÷ naive ops/s"),
    ("DistinctKeys16", "thrpt", "redlock", "redisson", "redlock ÷ redisson ops/s"),
    ("DistinctKeys16", "thrpt", "redlock", "annotated", "redlock ÷ annotated ops/s: the annotation's cost (1.00 = none)"),
    ("DistinctKeys16", "thrpt", "redlock", "ideal", "redlock ÷ ideal ops/s: the share of the least possible cost's throughput"),
    ("OneKey16", "thrpt", "redlock", "redisson", "redlock ÷ redisson acquisitions/s"),
    ("OneKey16", "thrpt", "redlock", "naive", "redlock ÷ naive acquisitions/s"),
]


def split(name):
    """'dev.redlock.benchmarks.Latency.redlock' -> ('Latency', 'redlock')."""
    parts = name.split(".")
    return parts[-2], parts[-1]


def params_of(entry):
    return tuple(sorted((entry.get("params") or {}).items()))


def number(value):
    if value is None:
        return "—"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def times(value):
    return f"{value:.2f}×"


def summary(values, show=times):
    """'2.05×' for one value, '2.05× (1.98–2.11)' for several."""
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    median = statistics.median(values)
    if len(values) == 1:
        return show(median)
    return f"{show(median)} ({show(min(values))}–{show(max(values))})"


def load(paths):
    """Per round: {(cls, mode, threads, params, method): entry}."""
    rounds = []
    for spec in paths:
        entries = []
        for path in spec.split("+"):
            with open(path, encoding="utf-8") as f:
                entries.extend(json.load(f))
        by_key = {}
        for entry in entries:
            cls, method = split(entry["benchmark"])
            by_key[(cls, entry["mode"], entry["threads"], params_of(entry), method)] = entry
        rounds.append(by_key)
    return rounds


def ratio(value, floor):
    return value / floor if value is not None and floor else None


def percentile(entry, which):
    return entry["primaryMetric"].get("scorePercentiles", {}).get(which)


def main(paths):
    rounds = load(paths)
    keys = sorted({key for r in rounds for key in r},
                  key=lambda k: (k[0], k[1], k[3], k[4] != "floor", k[4]))
    print(f"{len(rounds)} round(s); medians, with lowest–highest in brackets when there are several.")
    print()
    print("| scenario | mode | threads | params | benchmark | score | unit | ÷ floor | p50 ÷ floor | p99 ÷ floor "
          "| B/op |")
    print("|---|---|---:|---|---|---:|---|---:|---:|---:|---:|")
    secondary = defaultdict(list)
    for key in keys:
        cls, mode, threads, params, method = key
        scores, ratios, p50s, p99s, allocations = [], [], [], [], []
        unit = ""
        for r in rounds:
            entry = r.get(key)
            if entry is None:
                continue
            metric = entry["primaryMetric"]
            unit = metric["scoreUnit"]
            scores.append(metric["score"])
            floor = r.get((cls, mode, threads, params, "floor"))
            if floor is not None:
                ratios.append(ratio(metric["score"], floor["primaryMetric"]["score"]))
                if mode == "sample":
                    p50s.append(ratio(percentile(entry, "50.0"), percentile(floor, "50.0")))
                    p99s.append(ratio(percentile(entry, "99.0"), percentile(floor, "99.0")))
            for name, extra in (entry.get("secondaryMetrics") or {}).items():
                if name == "gc.alloc.rate.norm":
                    allocations.append(extra["score"])
                elif not name.startswith("gc.") and not (mode == "sample" and name.startswith("p")):
                    secondary[(cls, params, method, name, extra["scoreUnit"])].append(extra["score"])
        params_text = ", ".join(f"{k}={v}" for k, v in params) or "—"
        print(f"| {cls} | {MODES.get(mode, mode)} | {threads} | {params_text} | {method} | "
              f"{number(statistics.median(scores))} | {unit} | {summary(ratios)} | "
              f"{summary(p50s) if mode == 'sample' else '—'} | {summary(p99s) if mode == 'sample' else '—'} | "
              f"{number(statistics.median(allocations)) if allocations else '—'} |")

    print()
    print("| scenario | params | comparison | times (per round, then median) |")
    print("|---|---|---|---:|")
    for cls, mode, top, bottom, text in COMPARISONS:
        params_seen = sorted({k[3] for r in rounds for k in r if k[0] == cls and k[1] == mode})
        for params in params_seen:
            values = []
            for r in rounds:
                a = next((e for k, e in r.items() if k[:2] == (cls, mode) and k[3] == params and k[4] == top), None)
                b = next((e for k, e in r.items() if k[:2] == (cls, mode) and k[3] == params and k[4] == bottom), None)
                if a is None or b is None:
                    continue
                if cls == "OneKey16":
                    a_value = a.get("secondaryMetrics", {}).get("acquired", {}).get("score")
                    b_value = b.get("secondaryMetrics", {}).get("acquired", {}).get("score")
                else:
                    a_value, b_value = a["primaryMetric"]["score"], b["primaryMetric"]["score"]
                values.append(ratio(a_value, b_value))
            if values:
                params_text = ", ".join(f"{k}={v}" for k, v in params) or "—"
                print(f"| {cls} | {params_text} | {text} | {summary(values)} |")

    if secondary:
        print()
        print("| scenario | params | benchmark | secondary result | score | unit |")
        print("|---|---|---|---|---:|---|")
        for (cls, params, method, name, unit), values in sorted(secondary.items()):
            params_text = ", ".join(f"{k}={v}" for k, v in params) or "—"
            if name == "violations":
                shown = f"{sum(values):.0f} in all rounds"
            else:
                shown = summary(values, show=number)
            print(f"| {cls} | {params_text} | {method} | {name} | {shown} | {unit} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: ratio-table.py round1.json [round2.json ...]")
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Turns JMH's JSON output (-rf json -rff result.json) into a markdown table of ratios to the floor.

Each row is one benchmark, mode and node count, divided by the floor benchmark of the same class, mode, thread count
and node count from the same run:
  - avgt (time per lock+unlock): score / floor score, so 2.0 means two floor round trips;
  - sample: the same for the median (p50) and p99;
  - thrpt (operations per second): score / floor score, so 0.5 means half as many lock+unlocks as floor round trips.
Secondary results (for example OneKey16's acquired, refused, violations) are listed as they are, without a ratio.

Usage: python3 benchmarks/ratio-table.py result.json
"""

import json
import sys

MODES = {"avgt": "mean time", "sample": "sampled time", "thrpt": "throughput", "ss": "single shot"}


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


def ratio(value, floor):
    if value is None or not floor:
        return "—"
    return f"{value / floor:.2f}×"


def main(path):
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    floors = {}
    for entry in results:
        cls, method = split(entry["benchmark"])
        if method == "floor":
            floors[(cls, entry["mode"], entry["threads"], params_of(entry))] = entry["primaryMetric"]

    def sort_key(entry):
        cls, method = split(entry["benchmark"])
        return (cls, entry["mode"], params_of(entry), method != "floor", method)

    print("| scenario | mode | threads | params | benchmark | score | unit | ÷ floor | p50 ÷ floor | p99 ÷ floor |")
    print("|---|---|---:|---|---|---:|---|---:|---:|---:|")
    secondary = []
    for entry in sorted(results, key=sort_key):
        cls, method = split(entry["benchmark"])
        mode = entry["mode"]
        params = ", ".join(f"{k}={v}" for k, v in params_of(entry)) or "—"
        metric = entry["primaryMetric"]
        floor = floors.get((cls, mode, entry["threads"], params_of(entry)))
        p50 = p99 = "—"
        whole = "—"
        if floor is not None:
            whole = ratio(metric["score"], floor["score"])
            if mode == "sample":
                mine = metric.get("scorePercentiles", {})
                theirs = floor.get("scorePercentiles", {})
                p50 = ratio(mine.get("50.0"), theirs.get("50.0"))
                p99 = ratio(mine.get("99.0"), theirs.get("99.0"))
        print(f"| {cls} | {MODES.get(mode, mode)} | {entry['threads']} | {params} | {method} | "
              f"{number(metric['score'])} | {metric['scoreUnit']} | {whole} | {p50} | {p99} |")
        for name, extra in sorted((entry.get("secondaryMetrics") or {}).items()):
            if name.startswith("p") and mode == "sample":
                continue
            secondary.append((cls, params, method, name, extra))
    if secondary:
        print()
        print("| scenario | params | benchmark | secondary result | score | unit |")
        print("|---|---|---|---|---:|---|")
        for cls, params, method, name, extra in secondary:
            print(f"| {cls} | {params} | {method} | {name} | {number(extra['score'])} | {extra['scoreUnit']} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ratio-table.py result.json")
    main(sys.argv[1])

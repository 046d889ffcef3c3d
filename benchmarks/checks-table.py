#!/usr/bin/env python3
"""Prints the performance checks of docs/benchmarks.md against their targets, from benchmarks/run-checks.sh's files.

Each ratio is taken within one round (its files are named round<N>-…json), then the median over the rounds is shown
with the lowest and highest round, whether the median meets the target, and how many rounds did not.

Usage: python3 benchmarks/checks-table.py benchmarks/target/checks
"""

import glob
import importlib.util
import json
import os
import re
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    "ratio_table", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ratio-table.py"))
ratio_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ratio_table)


def read_round(directory, round_number):
    """{(file part, method, slow, mode): entry} for one round."""
    entries = {}
    for path in glob.glob(os.path.join(directory, f"round{round_number}-*.json")):
        part = re.sub(rf"^round{round_number}-|\.json$", "", os.path.basename(path))
        with open(path, encoding="utf-8") as f:
            for entry in json.load(f):
                method = entry["benchmark"].rsplit(".", 1)[1]
                slow = (entry.get("params") or {}).get("slow", "none")
                entries[(part, method, slow, entry["mode"])] = entry
    return entries


def score(entries, part, method, slow="none", mode="avgt"):
    entry = entries.get((part, method, slow, mode))
    return entry["primaryMetric"]["score"] if entry else None


def p99(entries, part, method, slow):
    entry = entries.get((part, method, slow, "sample"))
    return entry["primaryMetric"]["scorePercentiles"]["99.0"] if entry else None


def allocated(entries, part, method, mode):
    entry = entries.get((part, method, "none", mode))
    return entry["secondaryMetrics"]["gc.alloc.rate.norm"]["score"] if entry else None


def secondary(entries, part, method, metric):
    entry = entries.get((part, method, "none", "avgt"))
    return entry["secondaryMetrics"].get(metric, {}).get("score") if entry else None


def side_by_side(entries, method):
    """The first-named client's time ÷ the second's, over the same invocations of SideBySide."""
    return divide(secondary(entries, "side-by-side", method, "firstNanos"),
                  secondary(entries, "side-by-side", method, "secondNanos"))


def divide(top, bottom):
    return top / bottom if top is not None and bottom else None


# (what is checked, target or None, "min" when the figure must be at least the target, how a round gives it)
CHECKS = [
    ("16 threads, distinct keys: ours ÷ `ideal` (ops/s)", 0.95, "min",
     lambda r: divide(score(r, "threads-16", "redlock", mode="thrpt"), score(r, "threads-16", "ideal", mode="thrpt"))),
    ("16 threads: ours ÷ floor (ops/s)", None, None,
     lambda r: divide(score(r, "threads-16", "redlock", mode="thrpt"), score(r, "threads-16", "floor", mode="thrpt"))),
    ("16 threads: annotated ÷ `ideal` (ops/s)", None, None,
     lambda r: divide(score(r, "threads-16", "annotated", mode="thrpt"), score(r, "threads-16", "ideal", mode="thrpt"))),
    ("one thread, each in a JVM of its own: ours ÷ `ideal` (time)", 1.05, "max",
     lambda r: divide(score(r, "one-thread-redlock", "redlock"), score(r, "one-thread-ideal", "ideal"))),
    ("one thread, both in one JVM in turn (`SideBySide`): ours ÷ `ideal` (time)", 1.05, "max",
     lambda r: side_by_side(r, "redlockAndIdeal")),
    ("the same method's control: `ideal` ÷ a second `ideal` (time)", None, None,
     lambda r: side_by_side(r, "idealAndIdeal")),
    ("one thread: annotated ÷ `ideal` (time)", None, None,
     lambda r: divide(score(r, "one-thread-annotated", "annotated"), score(r, "one-thread-ideal", "ideal"))),
    ("bytes per lock+unlock, one thread, programmatic", 1600, "max",
     lambda r: allocated(r, "one-thread-redlock", "redlock", "avgt")),
    ("bytes per lock+unlock, one thread, annotated", 2000, "max",
     lambda r: allocated(r, "one-thread-annotated", "annotated", "avgt")),
    ("bytes per lock+unlock, 16 threads, programmatic", None, None,
     lambda r: allocated(r, "threads-16", "redlock", "thrpt")),
    ("bytes per lock+unlock, 16 threads, annotated", None, None,
     lambda r: allocated(r, "threads-16", "annotated", "thrpt")),
    ("fenced ÷ unfenced (time)", 1.7, "max",
     lambda r: divide(score(r, "fenced", "fenced"), score(r, "fenced", "redlock"))),
    ("fenced ÷ floor, one node 40 ms away", 3.0, "max",
     lambda r: divide(score(r, "fenced", "fenced", "one"), score(r, "fenced", "floor", "one"))),
    ("two slow nodes first: mean ÷ floor", 3.0, "max",
     lambda r: divide(score(r, "slow-minority", "redlock", "first"), score(r, "slow-minority", "floor", "first"))),
    ("two slow nodes last: mean ÷ floor", 3.0, "max",
     lambda r: divide(score(r, "slow-minority", "redlock", "last"), score(r, "slow-minority", "floor", "last"))),
    ("two slow nodes first: p99 ÷ floor's mean", 6.0, "max",
     lambda r: divide(p99(r, "slow-minority", "redlock", "first"), score(r, "slow-minority", "floor", "first"))),
    ("two slow nodes last: p99 ÷ floor's mean", 6.0, "max",
     lambda r: divide(p99(r, "slow-minority", "redlock", "last"), score(r, "slow-minority", "floor", "last"))),
]


def shown(value, text):
    return ratio_table.number(value) if text.startswith("bytes") else ratio_table.times(value)


def main(directory):
    numbers = sorted({int(m.group(1)) for path in glob.glob(os.path.join(directory, "round*-*.json"))
                      if (m := re.match(r"round(\d+)-", os.path.basename(path)))})
    if not numbers:
        sys.exit(f"no round*-*.json in {directory}")
    rounds = [read_round(directory, n) for n in numbers]
    print(f"{len(rounds)} round(s); medians, with lowest–highest in brackets.")
    print()
    print("| check (5 nodes) | target | median (range) | met | rounds not meeting it |")
    print("|---|---:|---|---|---:|")
    for text, target, sense, figure in CHECKS:
        values = [v for v in (figure(r) for r in rounds) if v is not None]
        if not values:
            continue
        median = statistics.median(values)
        result = ratio_table.summary(values, show=lambda v: shown(v, text))
        if target is None:
            print(f"| {text} | | {result} | | |")
            continue
        meets = (lambda v: v >= target) if sense == "min" else (lambda v: v <= target)
        bound = ("≥ " if sense == "min" else "≤ ") + shown(target, text)
        missed = sum(1 for v in values if not meets(v))
        print(f"| {text} | {bound} | {result} | {'yes' if meets(median) else '**no**'} | {missed} of {len(values)} |")
    handoff = os.path.join(directory, "handoff.log")
    if os.path.exists(handoff):
        print()
        print("Waiting for one busy lock, 16 threads, against Redisson (HandOff, medians of its runs):")
        with open(handoff, encoding="utf-8") as f:
            for line in f:
                if "Redisson's" in line:
                    print("  " + line.strip())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: checks-table.py directory")
    main(sys.argv[1])

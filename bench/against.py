#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/against.sh's summary: per row (system, workload, threads and the
row's other text fields) and numeric field, the medians of "before" and
"after" and after/before with its 95% bootstrap interval (2,000 resamples
of each side's runs, a fixed seed). A `*` marks an interval wholly above 1,
a `+` one wholly below: a change the runs show whatever their noise."""
import collections
import json
import random
import statistics
import sys

# Fields that name a row or a run rather than measure it.
NOT_MEASURED = {"threads", "run", "rounds", "drivers", "bursts", "gap_us", "ticks", "interval_us"}


def load(path):
    cells = collections.defaultdict(list)
    for line in open(path):
        if not line.strip():
            continue
        rec = json.loads(line)
        row = tuple(
            f"{k}={v}" for k, v in rec.items() if isinstance(v, str) and k != "variant"
        ) + (f"threads={rec.get('threads')}",)
        for k, v in rec.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in NOT_MEASURED:
                cells[(row, k, rec["variant"])].append(v)
    return cells


def interval(after, before, rng):
    ratios = []
    for _ in range(2000):
        b = statistics.median(rng.choices(before, k=len(before)))
        if b:
            ratios.append(statistics.median(rng.choices(after, k=len(after))) / b)
    ratios.sort()
    return ratios[int(0.025 * len(ratios))], ratios[int(0.975 * len(ratios)) - 1]


def main():
    cells = load(sys.argv[1])
    rng = random.Random(1)
    print("| row | field | runs | before | after | after/before [95%] |")
    print("|---|---|---:|---:|---:|---|")
    for row, field in sorted({(r, f) for r, f, _ in cells}):
        before, after = cells.get((row, field, "before")), cells.get((row, field, "after"))
        if not before or not after:
            continue
        mb, ma = statistics.median(before), statistics.median(after)
        if not mb:
            continue
        lo, hi = interval(after, before, rng)
        mark = "*" if lo > 1 else "+" if hi < 1 else ""
        print(
            f"| {' '.join(row)} | {field} | {min(len(before), len(after))} | {mb:.4g} | {ma:.4g} "
            f"| {ma / mb:.3f}{mark} [{lo:.2f}, {hi:.2f}] |"
        )


if __name__ == "__main__":
    main()

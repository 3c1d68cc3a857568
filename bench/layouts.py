#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/layouts.sh's summary: per workload, thread count and system, the
median wall time at each code layout, the mean of those medians, and that
mean over Lace's (each layout's own ratio beside it, lowest to highest). A
build's layout is a draw; the mean over layouts is the row's value, and the
spread says how much one build's row can say."""
import collections
import json
import statistics
import sys


def main():
    walls = collections.defaultdict(list)
    layouts = set()
    for line in open(sys.argv[1]):
        if line.startswith("{"):
            rec = json.loads(line)
            name = rec["system"] if rec["variant"] == "lace" else f"{rec['system']} ({rec['variant']})"
            walls[(rec["workload"], rec["threads"], name, rec["layout"])].append(rec["wall_s"])
            layouts.add(rec["layout"])
    layouts = sorted(layouts)
    rows = sorted({k[:3] for k in walls})
    print("| workload | threads | system | median ms per layout (" + ", ".join(map(str, layouts))
          + ") | mean ms | ÷ Lace (per layout) |")
    print("|---|---:|---|---|---:|---|")
    for workload, threads, name in rows:
        med = [statistics.median(walls[(workload, threads, name, p)]) for p in layouts]
        lace = [statistics.median(walls.get((workload, threads, "lace", p), [0])) for p in layouts]
        mean = statistics.mean(med)
        ratio = ""
        if all(lace):
            each = sorted(m / l for m, l in zip(med, lace))
            ratio = f"{mean / statistics.mean(lace):.3f} ({each[0]:.2f}-{each[-1]:.2f})"
        print(f"| {workload} | {threads} | {name} | " + " ".join(f"{m * 1e3:.2f}" for m in med)
              + f" | {mean * 1e3:.2f} | {ratio} |")


if __name__ == "__main__":
    main()

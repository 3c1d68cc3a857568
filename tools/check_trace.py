#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a weft trace: valid JSON in Chrome's trace-event format, one named
track per worker, slices on a track never overlap, every flow that ends had
started. Exit 0 if so; print what is wrong and exit 1 otherwise.

usage: check_trace.py TRACE.json [MIN_WORKERS]
"""
import json
import sys


def check(path, min_workers):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names = {e["tid"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    workers = {t for t in names if t < 100000}
    problems = []
    if len(workers) < min_workers:
        problems.append(f"{len(workers)} worker tracks, expected at least {min_workers}")
    slices = {}
    for e in events:
        if e.get("ph") == "X":
            if e["dur"] < 0:
                problems.append(f"negative duration: {e}")
            slices.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    for tid, s in slices.items():
        s.sort()
        for (a0, a1, an), (b0, b1, bn) in zip(s, s[1:]):
            if b0 < a1 - 1e-3:  # 1 ns of rounding
                problems.append(f"track {tid}: {an} [{a0}, {a1}] overlaps {bn} [{b0}, {b1}]")
    # Nothing before the trace began (ts 0) or after its last slice ended.
    ends = [e["ts"] + e["dur"] for e in events if e.get("ph") == "X" and e["tid"] < 100000]
    last = max(ends, default=None)
    for e in events:
        if "ts" in e and (e["ts"] < 0 or (last is not None and e["ts"] > last + 1e-3)):
            problems.append(f"outside the trace [0, {last}]: {e}")
    starts = {e["id"] for e in events if e.get("ph") == "s"}
    for e in events:
        if e.get("ph") == "f" and e["id"] not in starts:
            problems.append(f"flow {e['id']} ends but never started")
    kinds = {e["name"] for e in events if e.get("ph") == "X"}
    for problem in problems[:20]:
        print(problem)
    print(f"{path}: {len(workers)} workers, {sum(map(len, slices.values()))} slices "
          f"({', '.join(sorted(kinds))}), {len(starts)} wake-ups: "
          f"{'ok' if not problems else 'BAD'}")
    return not problems


if __name__ == "__main__":
    sys.exit(0 if check(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1) else 1)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a weft trace: valid JSON in Chrome's trace-event format, one named
track per worker, slices on a track never overlap, every flow that ends had
started. Exit 0 if so; print what is wrong and exit 1 otherwise.

usage: check_trace.py TRACE.json [MIN_WORKERS] [--row NAME]... [--job NAME]...

--row NAME: a track named NAME ("caller 0", "context 1", "worker 2") holds
at least one running slice. --job NAME: some running slice is named NAME
(a job named with weft_trace_name).
"""
import argparse
import json
import sys


def state(e):
    """A slice's state: its category; a trace of before job names had it as
    the slice's name."""
    return e.get("cat", e["name"])


def check_expected(events, rows, rows_wanted, jobs_wanted):
    """The rows and job names asked for: what is missing."""
    problems = []
    running = [e for e in events if e.get("ph") == "X" and state(e) == "running"]
    for row in rows_wanted:
        tids = [t for t, name in rows.items() if name == row]
        if not tids:
            problems.append(f"no track named {row!r} (tracks: {sorted(rows.values())})")
        elif not any(e["tid"] in tids for e in running):
            problems.append(f"track {row!r} has no running slice")
    names = {e["name"] for e in running}
    for job in jobs_wanted:
        if job not in names:
            problems.append(f"no running slice named {job!r} (names: {sorted(names)})")
    return problems


def check(path, min_workers, rows_wanted=(), jobs_wanted=()):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    rows = {e["tid"]: e["args"]["name"] for e in events
            if e.get("ph") == "M" and e["name"] == "thread_name"}
    workers = {t for t, name in rows.items() if name.startswith("worker")}
    problems = check_expected(events, rows, rows_wanted, jobs_wanted)
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
    # Nothing before the trace began (ts 0) or after the workers' last slice
    # ended (a worker's lasts until the stop; a context's or caller's ends
    # when its thread leaves the pool).
    ends = [e["ts"] + e["dur"] for e in events if e.get("ph") == "X" and e["tid"] in workers]
    last = max(ends, default=None)
    for e in events:
        if "ts" in e and (e["ts"] < 0 or (last is not None and e["ts"] > last + 1e-3)):
            problems.append(f"outside the trace [0, {last}]: {e}")
    starts = {e["id"] for e in events if e.get("ph") == "s"}
    for e in events:
        if e.get("ph") == "f" and e["id"] not in starts:
            problems.append(f"flow {e['id']} ends but never started")
    kinds = {state(e) for e in events if e.get("ph") == "X"}
    for problem in problems[:20]:
        print(problem)
    print(f"{path}: {len(workers)} workers, {sum(map(len, slices.values()))} slices "
          f"({', '.join(sorted(kinds))}), {len(starts)} wake-ups: "
          f"{'ok' if not problems else 'BAD'}")
    return not problems


def main():
    p = argparse.ArgumentParser(description="Check a weft trace's structure.")
    p.add_argument("trace")
    p.add_argument("min_workers", nargs="?", type=int, default=1)
    p.add_argument("--row", action="append", default=[], help="a track that must run jobs")
    p.add_argument("--job", action="append", default=[], help="a job name that must appear")
    args = p.parse_args()
    return 0 if check(args.trace, args.min_workers, args.row, args.job) else 1


if __name__ == "__main__":
    sys.exit(main())

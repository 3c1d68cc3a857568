#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Aggregate bench/policy.sh's JSON lines into the leave-policy table and the
wake-rule table (markdown on stdout). Medians over runs."""
import collections
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
cell = collections.defaultdict(list)
for r in rows:
    # A sweep's rows differ by interval, the pools workload's by layout.
    key = (r["system"], r["workload"], r["threads"], r.get("interval_us", r.get("layout")))
    cell[key].append(r)


def med(system, workload, threads, field, interval=None):
    v = [r[field] for r in cell.get((system, workload, threads, interval), []) if field in r]
    return statistics.median(v) if v else None


def med_where(workload, threads, field, layout):
    """A pools workload row (wl_pools.c): the median of field over the runs of one layout."""
    return med("weft", workload, threads, field, layout)


def paired(sys_a, sys_b, workload, threads, field, interval=None):
    """Median over runs of a's value ÷ b's in the same run: policy.sh runs every
    system once per run, so a run's two cells shared the machine's state."""
    def by_run(system):
        return {r["run"]: r[field] for r in cell.get((system, workload, threads, interval), [])
                if field in r}
    a, b = by_run(sys_a), by_run(sys_b)
    ratios = [a[k] / b[k] for k in a if k in b and b[k]]
    return statistics.median(ratios) if ratios else None


def fmt(x, digits=3):
    return "—" if x is None else f"{x:.{digits}g}"


CASES = [("sporadic every 50 us", "sweep", 8, 50), ("sporadic every 500 us", "sweep", 8, 500),
         ("sporadic every 10 ms", "sweep", 8, 10000), ("burst, 200 us gaps", "burst", 2, None),
         ("burst, 200 us gaps", "burst", 8, None), ("burst, 5 ms gaps", "burst5ms", 2, None),
         ("burst, 5 ms gaps", "burst5ms", 8, None), ("control loop", "control", 8, None)]


def policy_table(suffix, title):
    print(f"\n### {title}\n")
    print("| workload | threads | AUTOMATIC wall / CPU s | FAST wall / CPU s | always-search wall / CPU s "
          "| AUTO wall ÷ best | AUTO CPU ÷ lowest | goal |")
    print("|---|---:|---|---|---|---:|---:|---|")
    met = 0
    for name, wl, t, iv in CASES:
        got = {}
        for label, sys_ in (("auto", "weft"), ("fast", "weft-fast"), ("spin", "weft-spin")):
            got[label] = (med(sys_ + suffix, wl, t, "wall_s", iv), med(sys_ + suffix, wl, t, "cpu_s", iv))
        if any(v is None for pair in got.values() for v in pair):
            continue
        best_wall = min(got["fast"][0], got["spin"][0])
        low_cpu = min(got["fast"][1], got["spin"][1])
        rw, rc = got["auto"][0] / best_wall, got["auto"][1] / low_cpu
        ok = rw <= 1.05 and rc <= 1.25
        met += ok
        print(f"| {name} | {t} | " + " | ".join(f"{fmt(w)} / {fmt(c)}" for w, c in got.values()) +
              f" | {rw:.3f} | {rc:.2f} | {'met' if ok else 'missed'} |")
    print(f"\nGoal met on {met} of {len(CASES)} rows.")


def wake_rule_table():
    print("\n### Wake rule: Go's (a push wakes only when nobody searches) ÷ Rayon's "
          "(a push onto a non-empty queue always wakes)\n")
    print("Each cell: medians of Go's / Rayon's (their ratio; the median of the "
          "per-run ratios).\n")
    print("| workers | idle CPU s in 1 s (Go / Rayon) | sporadic CPU/wall (Go / Rayon) "
          "| fib(30) s (Go / Rayon) | loop s per call (Go / Rayon) |")
    print("|---:|---|---|---|---|")
    for t in (8, 16, 64):
        def pair(wl, field):
            a, b = med("weft", wl, t, field), med("weft-rayonwake", wl, t, field)
            p = paired("weft", "weft-rayonwake", wl, t, field)
            ratio = f" ({a / b:.2f}×" if a and b else ""
            ratio += f"; paired {p:.2f}×)" if ratio and p else (")" if ratio else "")
            return f"{fmt(a)} / {fmt(b)}{ratio}"
        print(f"| {t} | {pair('idle', 'cpu_s')} | {pair('sporadic', 'cpu_per_wall')} | "
              f"{pair('fib30', 'wall_s')} | {pair('loop', 'wall_s')} |")


def compose_table():
    print("\n### Composability: an OpenMP `parallel for` stage right after a weft stage\n")
    none = med("compose", "none", 2, "omp_stage_us_p50")
    print("| weft before the OpenMP stage | OpenMP stage, median µs (p90) | ÷ no weft |")
    print("|---|---:|---:|")
    for mode, label in (("none", "no weft pool at all"), ("default", "idle pool, default leave"),
                        ("fast-leave", "after weft_phase_end(pool, true)"),
                        ("spin", "idle workers that never sleep (hook)")):
        m, p90 = med("compose", mode, 2, "omp_stage_us_p50"), med("compose", mode, 2, "omp_stage_us_p90")
        ratio = f"{m / none:.3f}" if m and none else "—"
        print(f"| {label} | {fmt(m, 4)} ({fmt(p90, 4)}) | {ratio} |")


def pools_table():
    print("\n### Several pools in one process (bench/wl_pools.c)\n")
    print("Four driver threads, each running fib(27) and a 10^6-index loop "
          "from outside; medians.\n")
    print("| layout | wall s | CPU s | involuntary switches | voluntary switches |")
    print("|---|---:|---:|---:|---:|")
    for layout, label in (("four", "four pools of 8, a driver each"),
                          ("shared", "one pool of 8, four drivers"),
                          ("alone", "one pool of 8, one driver")):
        vals = [med_where("pools", 8, f, layout) for f in ("wall_s", "cpu_s", "nivcsw", "nvcsw")]
        print(f"| {label} | {fmt(vals[0])} | {fmt(vals[1])} | {fmt(vals[2], 5)} | {fmt(vals[3], 5)} |")


ABLATION = ["spent", "wanted", "due", "implicit", "gain", "search", "selfwake", "defer",
            "backoff"]
# (row, workload, threads, interval or layout, the fields compared)
ABLATION_ROWS = [(n, w, t, i, ("wall_s", "cpu_s")) for n, w, t, i in CASES] + [
    ("roundtrip: p50, p99, CPU/wall", "roundtrip", 8, None, ("us_median", "us_p99", "cpu_per_wall")),
    ("sporadic: p50, p99, CPU/wall", "sporadic", 8, None, ("p50_us", "p99_us", "cpu_per_wall")),
    ("sporadic: p50, p99, CPU/wall", "sporadic", 16, None, ("p50_us", "p99_us", "cpu_per_wall")),
    ("idle: CPU", "idle", 8, None, ("cpu_s",)),
    ("four pools of 8: wall, CPU, switches", "pools", 8, "four", ("wall_s", "cpu_s", "nivcsw")),
    ("loop", "loop", 8, None, ("wall_s",)), ("loop", "loop", 64, None, ("wall_s",)),
    ("fib(30)", "fib30", 8, None, ("wall_s",))]


def ablation_table():
    """Each rule off alone against the whole policy: per row, the median over
    runs of (rule off) ÷ (whole policy) in the same run, wall and CPU. A rule
    earns its place where some row costs more than 3% without it."""
    systems = [r for r in ["none"] + ABLATION if cell_any("weft-off-" + r)]
    if not systems:
        return
    print("\n### Ablation: each rule of the idle policy switched off alone\n")
    print("Each cell: the row's fields (wall and CPU unless named) ÷ the whole policy's, "
          "medians of per-run ratios; **bold**: more than 3% worse without the rule and more "
          "than 3% beyond the A/A control (`none`: the whole policy, built apart) on that field.\n")
    print("| workload | threads | " + " | ".join(systems) + " |")
    print("|---|---:|" + "---|" * len(systems))
    worst = {r: 0.0 for r in systems}
    earned = {r: 0 for r in systems}

    def beyond(p, noise):
        return p is not None and p > 1.03 and (noise is None or p > 1.03 * max(noise, 1.0))

    for name, wl, t, iv, fields in ABLATION_ROWS:
        noise = [paired("weft-off-none", "weft", wl, t, field, iv) for field in fields]
        cells = []
        for r in systems:
            ps = [paired("weft-off-" + r, "weft", wl, t, field, iv) for field in fields]
            worst[r] = max([worst[r]] + [p for p in ps if p is not None])
            marks = [r != "none" and beyond(p, n) for p, n in zip(ps, noise)]
            earned[r] += sum(marks)
            cells.append(" / ".join("—" if p is None else (f"**{p:.2f}**" if m else f"{p:.2f}")
                                    for p, m in zip(ps, marks)))
        print(f"| {name} | {t} | " + " | ".join(cells) + " |")
    print("\n| rule | worst field without it | fields worse beyond noise | verdict |")
    print("|---|---:|---:|---|")
    for r in systems:
        verdict = ("the A/A control" if r == "none" else "keeps its place" if earned[r]
                   else "costs no field 3% beyond noise: a candidate to remove")
        print(f"| {r} | {worst[r]:.3f} | {earned[r]} | {verdict} |")


def cell_any(system):
    return any(k[0] == system for k in cell)


policy_table("", "Leave policies, outside phases")
policy_table("-phase", "Leave policies, the whole run inside a parallel phase")
compose_table()
pools_table()
wake_rule_table()
ablation_table()

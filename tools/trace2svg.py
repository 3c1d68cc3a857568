#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw a weft trace (Chrome trace-event JSON from weft_trace_stop or
WEFT_TRACE) as an SVG timeline: one row per thread, running / searching /
sleeping slices in colour, wake-ups as arrows from waker to wakee.

usage: trace2svg.py TRACE.json OUT.svg [FROM_US TO_US]
"""
import json
import sys

COLORS = {"running": "#2e7d32", "searching": "#f9a825", "sleeping": "#cfd8dc",
          "submit": "#1565c0"}
ROW, PAD, LEFT, WIDTH = 22, 6, 90, 1100


def main():
    trace = json.load(open(sys.argv[1]))["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in trace
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    tids = sorted(names)
    row = {t: i for i, t in enumerate(tids)}
    spans = [e for e in trace if e.get("ph") == "X" and e["tid"] in row]
    t_from = float(sys.argv[3]) if len(sys.argv) > 4 else min((e["ts"] for e in spans), default=0)
    t_to = float(sys.argv[4]) if len(sys.argv) > 4 else max((e["ts"] + e["dur"] for e in spans),
                                                           default=1)
    scale = WIDTH / max(t_to - t_from, 1e-9)

    def x(ts):
        return LEFT + (min(max(ts, t_from), t_to) - t_from) * scale

    height = len(tids) * ROW + 2 * PAD + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           '<defs><marker id="a" markerWidth="6" markerHeight="6" refX="5" refY="3" '
           'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#c62828"/></marker></defs>']
    for t in tids:
        y = PAD + row[t] * ROW
        out.append(f'<text x="4" y="{y + 14}">{names[t]}</text>')
    for e in spans:
        if e["ts"] + e["dur"] < t_from or e["ts"] > t_to:
            continue
        y = PAD + row[e["tid"]] * ROW + 3
        w = max(x(e["ts"] + e["dur"]) - x(e["ts"]), 0.5)
        out.append(f'<rect x="{x(e["ts"]):.2f}" y="{y}" width="{w:.2f}" height="{ROW - 6}" '
                   f'fill="{COLORS.get(e["name"], "#999")}"><title>{e["name"]} '
                   f'{e["dur"]:.1f} us</title></rect>')
    starts = {e["id"]: e for e in trace if e.get("ph") == "s"}
    for e in trace:
        s = starts.get(e.get("id")) if e.get("ph") == "f" else None
        if s and s["tid"] in row and e["tid"] in row and t_from <= s["ts"] <= t_to:
            y0 = PAD + row[s["tid"]] * ROW + ROW / 2
            y1 = PAD + row[e["tid"]] * ROW + ROW / 2
            out.append(f'<line x1="{x(s["ts"]):.2f}" y1="{y0}" x2="{x(e["ts"]):.2f}" y2="{y1}" '
                       'stroke="#c62828" stroke-width="1" marker-end="url(#a)"/>')
    y = height - 12
    lx = LEFT
    for name, color in COLORS.items():
        out.append(f'<rect x="{lx}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx + 14}" y="{y}">{name}</text>')
        lx += 90
    out.append(f'<text x="{lx}" y="{y}">{t_to - t_from:.0f} us shown; red arrows: wake-ups</text>')
    out.append("</svg>")
    open(sys.argv[2], "w").write("\n".join(out))


if __name__ == "__main__":
    main()

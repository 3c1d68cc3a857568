#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draw a weft trace (Chrome trace-event JSON from weft_trace_stop or
WEFT_TRACE) as an SVG timeline: one row per thread (workers, and the
contexts and callers that took part), running / searching / sleeping /
waiting slices in colour, wake-ups as arrows from waker to wakee. Jobs named
with weft_trace_name get a colour each, their name on slices wide enough
to hold it and in the slice's tooltip, and a line in the legend.

Installed as weft-trace2svg. A long run drawn whole is a smear (a pixel
holds thousands of slices), so by default the picture is the first
DEFAULT_WINDOW_US of the trace, and says so; --from and --to choose the
window (µs from the trace's start), --all draws everything.
"""
import argparse
import json
import sys

COLORS = {"running": "#2e7d32", "searching": "#f9a825", "sleeping": "#cfd8dc",
          "waiting": "#b39ddb", "submit": "#1565c0"}
# Named jobs' colours, in order of first appearance (then round again).
NAMED = ["#00897b", "#6d4c41", "#c2185b", "#5e35b1", "#00838f", "#558b2f", "#ef6c00",
         "#3949ab"]
CHAR_W = 6.2  # the width of a character of the labels, in pixels
ROW, PAD, LEFT, WIDTH = 22, 6, 90, 1100
DEFAULT_WINDOW_US = 50000.0  # 50 ms: about 45 µs a pixel


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="weft-trace2svg",
        description="Draw a weft trace (weft_trace_start/stop, or WEFT_TRACE=file) as an SVG "
                    "timeline: a row per thread, running / searching / sleeping slices, "
                    "wake-ups as arrows.")
    p.add_argument("trace", help="the trace file (Chrome trace-event JSON)")
    p.add_argument("svg", help="the SVG file to write")
    p.add_argument("--from", dest="t_from", type=float, metavar="US",
                   help="start of the window, µs after the trace's first event (default 0)")
    p.add_argument("--to", dest="t_to", type=float, metavar="US",
                   help="end of the window, µs after the trace's first event (default: "
                        f"--from + {DEFAULT_WINDOW_US:.0f}, or the trace's end)")
    p.add_argument("--all", action="store_true", help="draw the whole trace, however long")
    return p.parse_args(argv)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)["traceEvents"]
    except OSError as e:
        sys.exit(f"weft-trace2svg: cannot read {path}: {e.strerror}")
    except (ValueError, KeyError, TypeError):
        sys.exit(f"weft-trace2svg: {path} is not a weft trace (Chrome trace-event JSON with "
                 "traceEvents)")


def state(e):
    """A slice's state: its category (a trace of before job names had it as
    its name)."""
    return e.get("cat", e["name"])


def job_colors(spans):
    """A colour for each job name (a running slice not named "running")."""
    colors = {}
    for e in spans:
        if state(e) == "running" and e["name"] != "running" and e["name"] not in colors:
            colors[e["name"]] = NAMED[len(colors) % len(NAMED)]
    return colors


def esc(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    trace = load(args.trace)
    names = {e["tid"]: e["args"]["name"] for e in trace
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    tids = sorted(names)
    row = {t: i for i, t in enumerate(tids)}
    spans = [e for e in trace if e.get("ph") == "X" and e["tid"] in row]
    first = min((e["ts"] for e in spans), default=0)
    last = max((e["ts"] + e["dur"] for e in spans), default=first + 1)
    t_from = first + (args.t_from or 0)
    if args.all:
        t_from, t_to = first, last
    elif args.t_to is not None:
        t_to = first + args.t_to
    else:
        t_to = min(t_from + DEFAULT_WINDOW_US, last)
    if t_to <= t_from:
        sys.exit(f"weft-trace2svg: empty window: --from {t_from - first:.0f} --to "
                 f"{t_to - first:.0f} (the trace lasts {last - first:.0f} µs)")
    if t_to < last or t_from > first:
        print(f"weft-trace2svg: {args.svg}: µs {t_from - first:.0f} to {t_to - first:.0f} of "
              f"{last - first:.0f} (--from, --to or --all for more)", file=sys.stderr)
    scale = WIDTH / max(t_to - t_from, 1e-9)
    jobs = job_colors(spans)

    def x(ts):
        return LEFT + (min(max(ts, t_from), t_to) - t_from) * scale

    height = len(tids) * ROW + 2 * PAD + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           '<defs><marker id="a" markerWidth="6" markerHeight="6" refX="5" refY="3" '
           'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#c62828"/></marker></defs>']
    for t in tids:
        y = PAD + row[t] * ROW
        out.append(f'<text x="4" y="{y + 14}">{esc(names[t])}</text>')
    for e in spans:
        if e["ts"] + e["dur"] < t_from or e["ts"] > t_to:
            continue
        y = PAD + row[e["tid"]] * ROW + 3
        w = max(x(e["ts"] + e["dur"]) - x(e["ts"]), 0.5)
        named = e["name"] in jobs and state(e) == "running"
        fill = jobs[e["name"]] if named else COLORS.get(state(e), "#999")
        title = f'{esc(e["name"])} ({state(e)})' if named else state(e)
        out.append(f'<rect x="{x(e["ts"]):.2f}" y="{y}" width="{w:.2f}" height="{ROW - 6}" '
                   f'fill="{fill}"><title>{title} {e["dur"]:.1f} us</title></rect>')
        if named and w > 3 * CHAR_W:  # a label that fits, cut to the slice
            label = e["name"][:int(w / CHAR_W) - 1]
            out.append(f'<text x="{x(e["ts"]) + 2:.2f}" y="{y + ROW - 10}" fill="#fff" '
                       f'pointer-events="none">{esc(label)}</text>')
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
    for name, color in jobs.items():
        out.append(f'<rect x="{lx}" y="{y - 9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx + 14}" y="{y}">{esc(name)}</text>')
        lx += 24 + CHAR_W * len(name)
    out.append(f'<text x="{lx}" y="{y}">{t_to - t_from:.0f} us shown, from '
               f'{t_from - first:.0f} of {last - first:.0f}; red arrows: wake-ups</text>')
    out.append("</svg>")
    try:
        with open(args.svg, "w") as f:
            f.write("\n".join(out))
    except OSError as e:
        sys.exit(f"weft-trace2svg: cannot write {args.svg}: {e.strerror}")


if __name__ == "__main__":
    main()

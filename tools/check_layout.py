#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shape of src/: no include cycle between modules, no file too long.

    tools/check_layout.py [SOURCE_DIR]

A module is a base name of src/ (pool.c and pool.h are the module "pool").
Module A depends on module B when a file of A includes B's header. The
dependencies must form no cycle: a module below the pool (the sleep
protocols, latches, queues) never reaches back into what uses it, and what it
needs from above is passed in. The public header (include/weft.h) is not a
module of src/, so implementing or calling the public API is no dependency.
Every file of src/ has at most 500 lines. Exit status 0, or 1 with the cycles
and the long files listed.
"""
import os
import re
import sys

MAX_LINES = 500
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"')


def modules(src):
    deps, lengths = {}, {}
    for name in sorted(os.listdir(src)):
        base, ext = os.path.splitext(name)
        if ext not in (".c", ".h"):
            continue
        with open(os.path.join(src, name), encoding="utf-8") as f:
            lines = f.readlines()
        lengths[name] = len(lines)
        deps.setdefault(base, set())
        for line in lines:
            m = INCLUDE.match(line)
            if m and m.group(1) != base:
                deps[base].add(m.group(1))
    for base in deps:
        deps[base] &= deps.keys()
    return deps, lengths


def cycles(deps):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(deps[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(__file__))
    deps, lengths = modules(os.path.join(root, "src"))
    bad = 0
    for component in cycles(deps):
        print("include cycle among src/ modules: " + " -> ".join(component))
        bad = 1
    for name, n in sorted(lengths.items()):
        if n > MAX_LINES:
            print(f"src/{name}: {n} lines (at most {MAX_LINES})")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())

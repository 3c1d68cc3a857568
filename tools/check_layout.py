#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The shape of src/: layers in folders, headers that say where things live.

    tools/check_layout.py [ROOT]

src/ holds folders, one per layer, each with a README.md that states its
rule; LAYERS lists them from the bottom up. A module is a folder and a base
name (core/pool.c and core/pool.h are the module "core/pool"); a file names
the headers of src/ it includes by their path below src/ ("idle/sleep.h").
The check reads the files and fails (exit status 1, each fault listed) when:

 - a file includes a header of a higher layer than its own: a layer never
   reaches back into what uses it, and what it needs from above is passed in
   (a function pointer, an environment struct), so the folders form no cycle;
 - headers include each other in a cycle, within a layer too (a .c file
   may include any header of its layer or below: a call back into a module
   that includes nothing of the caller's is no cycle of declarations);
 - a header is included by more than a quarter of the .c files: no header is
   the place everything meets, each .c names the concepts it uses. One
   header is above the bar, by design: core/current.h answers the question
   every entry point asks first (which worker, if any, runs on the calling
   thread, and which group its work is in) in a handful of inline
   accessors, and declares nothing defined elsewhere; and os/error.h, which
   every file that answers a public call with an errno includes to say why
   in words, as it includes <errno.h> (WIDE lists both);
 - a function or object declared in x.h is defined anywhere but in x.c (or,
   for a seam with one implementation per platform, x_<platform>.c), or one
   defined in x.c with external linkage is declared in no header of its own
   module and is not public (weft_*, declared in include/): where a name is
   declared tells where it lives;
 - a file has more than 500 lines, or a folder of src/ has no README.md.

The public headers (include/) are not modules of src/: implementing or
calling the public API is no dependency.
"""
import os
import re
import sys

LAYERS = ["os", "obs", "idle", "core", "api"]
MAX_LINES = 500
PLATFORMS = ("linux", "posix")  # the OS seam's files: src/os/*_<platform>.c
WIDE = {"core/current", "os/error"}  # headers exempt from the quarter rule (see above)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+/[a-z_]+)\.h"')
NAME = re.compile(r"\b(weft__\w+)\s*(\(|;|\[|=)")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.readlines()


def top_level(lines):
    """The statements at file scope: comments, strings and preprocessor
    lines removed, each statement ended by ';' or an opening '{' at depth 0
    (a function's body, a struct's), as (text, ending)."""
    text = "".join(l for l in lines if not l.lstrip().startswith("#"))
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    depth, start, out = 0, 0, []
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                out.append((" ".join(text[start:i].split()), "{"))
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            out.append((" ".join(text[start:i].split()), ";"))
            start = i + 1
    return out


def declared(lines):
    """Names of functions and objects a header declares for another file to
    define (not static, not a type, not a macro)."""
    names = set()
    for stmt, end in top_level(lines):
        if end != ";" or stmt.startswith(("static", "typedef", "struct", "enum", "union")):
            continue
        m = NAME.search(stmt + ";")
        if m:
            names.add(m.group(1))
    return names


def defined(lines):
    """Names of functions and objects a .c file defines with external
    linkage."""
    names = set()
    for stmt, end in top_level(lines):
        if stmt.startswith(("static", "typedef", "struct", "enum", "union", "extern")):
            continue
        if stmt.startswith("_Static_assert"):
            continue
        m = NAME.search(stmt + end)
        if m and (end == "{" or m.group(2) in ";=["):
            names.add(m.group(1))
    return names


def cycles(deps):
    """Strongly connected components of more than one node (Tarjan)."""
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


def owner(module, name_module):
    """Is a definition in module name_module where module's header puts it:
    x.c, or a platform's x_<platform>.c (the OS seam's only)? Any other
    suffix would let x.h's names live in a file of another name."""
    return name_module == module or name_module in (module + "_" + p for p in PLATFORMS)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(__file__))
    src = os.path.join(root, "src")
    faults = []
    files = {}  # "core/pool.c" -> lines
    for entry in sorted(os.listdir(src)):
        path = os.path.join(src, entry)
        if not os.path.isdir(path):
            faults.append(f"src/{entry}: a file outside the layers' folders")
            continue
        if entry not in LAYERS:
            faults.append(f"src/{entry}/: not a layer of tools/check_layout.py")
            continue
        if not os.path.isfile(os.path.join(path, "README.md")):
            faults.append(f"src/{entry}/: no README.md stating the layer's rule")
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h")):
                files[f"{entry}/{name}"] = read(os.path.join(path, name))

    deps, included_by = {}, {}
    for rel, lines in files.items():
        module = rel[:-2]
        deps.setdefault(module, set())
        if len(lines) > MAX_LINES:
            faults.append(f"src/{rel}: {len(lines)} lines (at most {MAX_LINES})")
        layer = LAYERS.index(rel.split("/")[0])
        for line in lines:
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            if header + ".h" not in files:
                faults.append(f"src/{rel}: includes {header}.h, not a header of src/")
                continue
            if LAYERS.index(header.split("/")[0]) > layer:
                faults.append(f"src/{rel}: includes {header}.h of a higher layer")
            if header != module and rel.endswith(".h"):
                deps[module].add(header)
            if rel.endswith(".c"):
                included_by.setdefault(header, set()).add(rel)

    for component in cycles(deps):
        faults.append("include cycle among src/ modules: " + " -> ".join(component))

    sources = [rel for rel in files if rel.endswith(".c")]
    for header, users in sorted(included_by.items()):
        if 4 * len(users) > len(sources) and header not in WIDE:
            faults.append(
                f"src/{header}.h: included by {len(users)} of {len(sources)} .c files "
                f"(at most a quarter)")

    where = {}  # name -> modules that define it
    for rel, lines in files.items():
        if rel.endswith(".c"):
            for name in defined(lines):
                where.setdefault(name, set()).add(rel[:-2])
    declared_in = {}
    for rel, lines in files.items():
        if rel.endswith(".h"):
            for name in declared(lines):
                declared_in.setdefault(name, set()).add(rel[:-2])
                for module in where.get(name, ()):
                    if not owner(rel[:-2], module):
                        faults.append(f"src/{rel}: declares {name}, defined in src/{module}.c")
    public = set()  # weft__ names of include/'s ABI (join.h's fast path)
    for dirpath, _, names in os.walk(os.path.join(root, "include")):
        for name in names:
            if name.endswith(".h"):
                public |= set(re.findall(r"\bweft__\w+", "".join(read(os.path.join(dirpath, name)))))
    for name, modules in sorted(where.items()):
        if name in public:
            continue
        for module in sorted(modules):
            if not any(owner(h, module) for h in declared_in.get(name, ())):
                faults.append(f"src/{module}.c: defines {name}, declared in no header of its own")

    for fault in faults:
        print(fault)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())

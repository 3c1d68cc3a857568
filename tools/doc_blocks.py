#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compile, and run, every C and C++ code block of the documentation.

The ctest test docs.code_blocks runs this over README.md and docs/*.md, so an
example cannot drift from the API it shows.

Which blocks, and how:

  ```c / ```cpp (also ```c++)   checked; ```sh, ```cmake and bare ``` are not.

  A complete program (the block defines main) is compiled against the built
  library -- C with the C compiler (-std=c11), C++ with the C++ compiler
  (-std=c++17), -Wall -Wextra -Werror -- and run; it must exit 0 within the
  timeout.

  A fragment must say so in an HTML comment that ends on the line right before
  the fence (GitHub renders nothing for it):

      <!-- fragment -->
      ```c
      weft_spawn_priority(pool, fn, arg, WEFT_PRIORITY_HIGH);
      ```

  It is compiled (not linked, not run) as the body of a function, after
  #include <weft.h> (C) or <weft.hpp> (C++). What it refers to without
  declaring goes in the same comment, after the word "fragment": those lines
  are placed at file scope before the function, so the reader does not see
  them but the compiler does:

      <!-- fragment
      extern weft_pool *pool;
      void fn(void *arg);
      -->

  Unused variables and parameters are allowed in fragments (-Wno-unused-*);
  every other warning is an error. A block that neither defines main nor is
  marked as a fragment is an error, so a new block has to be classified.

Usage:
  doc_blocks.py --cc CC [--cxx CXX] [--cflags FLAGS] --include DIR
                --lib LIBRARY [--timeout SECONDS] FILE.md|DIR...

A directory stands for the *.md files in it.

Compiler errors point into the markdown (#line directives). Exit status 0 if
every block passed, 1 otherwise.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```\s*([A-Za-z+]*)")
MAIN = re.compile(r"\bint\s+main\s*\(")
LANGS = {"c": "c", "cpp": "cpp", "c++": "cpp"}


class Block:
    def __init__(self, path, line, lang, code, fragment, context, context_line):
        self.path = path
        self.line = line  # 1-based line of the first line of code
        self.lang = lang
        self.code = code
        self.fragment = fragment
        self.context = context
        self.context_line = context_line


def marker_before(lines, fence):
    """The fragment comment ending on the line before lines[fence], if any:
    (True, context lines, 1-based line of the first context line)."""
    end = fence - 1
    if end < 0 or not lines[end].rstrip().endswith("-->"):
        return False, [], 0
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    if start < 0:
        return False, [], 0
    body = lines[start:end + 1]
    body[0] = body[0].split("<!--", 1)[1]
    body[-1] = body[-1].rsplit("-->", 1)[0]
    head = body[0].strip().split(None, 1)
    if not head or head[0] != "fragment":
        return False, [], 0
    context = ([head[1]] if len(head) > 1 else []) + body[1:]
    return True, context, start + 2


def blocks_of(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        lang = LANGS.get(m.group(1).lower())
        if lang:
            fragment, context, context_line = marker_before(lines, i)
            out.append(Block(path, i + 2, lang, "\n".join(lines[i + 1:j]), fragment, context,
                             context_line))
        i = j + 1
    return out


def source_of(block):
    """The translation unit for block, with #line directives into the markdown."""
    path = block.path.replace("\\", "\\\\").replace('"', '\\"')
    if not block.fragment:
        return '#line %d "%s"\n%s\n' % (block.line, path, block.code)
    header = "weft.h" if block.lang == "c" else "weft.hpp"
    parts = ["#include <%s>\n" % header]
    if block.context:
        parts.append('#line %d "%s"\n%s\n' % (block.context_line, path,
                                              "\n".join(block.context)))
    parts.append("void doc_fragment(void);\nvoid doc_fragment(void) {\n")
    parts.append('#line %d "%s"\n%s\n}\n' % (block.line, path, block.code))
    return "".join(parts)


def check(block, args, tmp, index):
    where = "%s:%d" % (block.path, block.line)
    kind = "fragment" if block.fragment else "program"
    has_main = bool(MAIN.search(block.code))
    if block.fragment and has_main:
        return "%s: marked as a fragment but defines main" % where
    if not block.fragment and not has_main:
        return "%s: defines no main and is not marked <!-- fragment -->" % where
    if block.lang == "c":
        compiler, std, ext = args.cc, "-std=c11", "c"
    else:
        if not args.cxx:
            print("%s cpp %s: skipped (no C++ compiler)" % (where, kind))
            return None
        compiler, std, ext = args.cxx, "-std=c++17", "cpp"
    src = os.path.join(tmp, "block%d.%s" % (index, ext))
    with open(src, "w", encoding="utf-8") as f:
        f.write(source_of(block))
    cmd = shlex.split(compiler) + [std, "-Wall", "-Wextra", "-Werror"]
    cmd += shlex.split(args.cflags) + ["-I", args.include]
    if block.fragment:
        cmd += ["-Wno-unused-variable", "-Wno-unused-but-set-variable", "-Wno-unused-parameter",
                "-Wno-unused-function"]
        cmd += ["-c", src, "-o", os.path.join(tmp, "block%d.o" % index)]
    else:
        exe = os.path.join(tmp, "block%d" % index)
        libdir = os.path.dirname(os.path.abspath(args.lib))
        cmd += [src, args.lib, "-Wl,-rpath," + libdir, "-pthread", "-o", exe]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return "%s: %s %s does not compile:\n%s\n%s" % (where, block.lang, kind, " ".join(cmd),
                                                         r.stdout)
    if block.fragment:
        print("%s %s fragment: compiles" % (where, block.lang))
        return None
    try:
        r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "%s: %s program did not finish within %g s" % (where, block.lang, args.timeout)
    if r.returncode != 0:
        return "%s: %s program exited with %d:\n%s" % (where, block.lang, r.returncode, r.stdout)
    print("%s %s program: compiles and runs" % (where, block.lang))
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cc", required=True)
    p.add_argument("--cxx", default="")
    p.add_argument("--cflags", default="", help="extra flags for every compile (sanitizers)")
    p.add_argument("--include", required=True, help="weft's include directory")
    p.add_argument("--lib", required=True, help="the built library to link programs with")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("files", nargs="+")
    args = p.parse_args()
    paths = []
    for path in args.files:
        if os.path.isdir(path):
            paths += sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".md"))
        else:
            paths.append(path)
    failures = []
    count = 0
    with tempfile.TemporaryDirectory(prefix="weft-doc-blocks-") as tmp:
        for path in paths:
            for block in blocks_of(path):
                count += 1
                err = check(block, args, tmp, count)
                if err:
                    failures.append(err)
    for err in failures:
        print("FAIL " + err, file=sys.stderr)
    print("%d code blocks, %d failed" % (count, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source, build and script file of weft names its licence.

    tools/check_licence.py [SOURCE_DIR]

Lists the files git tracks (or, in a tree without .git such as a release
tarball, every file below SOURCE_DIR) and checks that each C, C++, Rust,
Promela, Python, shell, CMake, make, pkg-config and gnuplot file carries
`SPDX-License-Identifier: MIT` in its first three lines, that LICENSE is the
MIT licence, and that weft.pc.in declares it. Exit status 0, or 1 with the
offenders listed.
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: MIT"
EXTENSIONS = {".c", ".h", ".cpp", ".hpp", ".rs", ".pml", ".py", ".sh", ".cmake", ".mk",
              ".toml", ".gp", ".sed", ".in"}
NAMES = {"CMakeLists.txt", "Makefile", "Doxyfile", "run"}


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL).stdout
        return out.split()
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in (".git", "build")]
            files += [os.path.relpath(os.path.join(top, n), root) for n in names]
        return files


def wanted(path):
    name = os.path.basename(path)
    return name in NAMES or os.path.splitext(name)[1] in EXTENSIONS


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    problems = []
    for path in sorted(tracked(root)):
        if not wanted(path):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(3)]
        if not any(TAG in line for line in head):
            problems.append(f"{path}: no '{TAG}' in its first lines")
    with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
        if not f.readline().startswith("MIT License"):
            problems.append("LICENSE: not the MIT licence")
    with open(os.path.join(root, "weft.pc.in"), encoding="utf-8") as f:
        if "License: MIT" not in f.read():
            problems.append("weft.pc.in: no 'License: MIT' field")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

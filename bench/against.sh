#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# This tree's library against an older revision's, on the older revision's
# benchmark programs: the same harness, built by the same CMake with the same
# flags, linked once with each library; interleaved runs.
#
#   bench/against.sh [--runs N] [--target T] REV [ARGS...]
#
# REV: a commit of this repository. T: a program of REV's bench/CMakeLists.txt
# (default weft_bench). ARGS: the program's arguments; each run appends the
# run's index as `--run K` for weft_bench, as a last argument otherwise (the
# convention of REV's single-workload programs such as pools_bench).
#
# "before" is REV's tree; "after" is this working tree (tracked and untracked
# files, ignored ones left out) with REV's bench/ in place of its own, so the
# programs differ only in the library and its headers. Rebuilding a harness
# by hand invites different flags (bench/CMakeLists.txt sets the loop
# kernel's vectorisation), which move these workloads by more than the
# changes under test. Writes the JSON lines to bench/results/against.jsonl,
# tagged "variant": "before" / "after", and prints per row the medians and
# after/before with its 95% bootstrap interval (bench/against.py).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
runs=10
target=weft_bench
usage() {
    echo "usage: $0 [--runs N] [--target T] REV [ARGS...]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --runs)
        [ $# -ge 2 ] || usage
        runs=$2
        shift 2
        ;;
    --target)
        [ $# -ge 2 ] || usage
        target=$2
        shift 2
        ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
rev=$(git -C "$repo" rev-parse --verify "$1^{commit}")
shift

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/before" "$work/after"
git -C "$repo" archive "$rev" | tar -x -C "$work/before"
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -x -C "$work/after"
rm -rf "$work/after/bench"
cp -r "$work/before/bench" "$work/after/bench"
for side in before after; do
    cmake -S "$work/$side" -B "$work/$side/build" -DCMAKE_BUILD_TYPE=Release \
        -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF >/dev/null
    cmake --build "$work/$side/build" -j2 --target "$target" >/dev/null
done

out=$here/results/against.jsonl
mkdir -p "$here/results"
: >"$out"
sides=(before after)
run_flag=() # weft_bench takes the run's index as --run K, the others bare
[ "$target" = weft_bench ] && run_flag=(--run)
for ((r = 0; r < runs; r++)); do
    for k in 0 1; do
        side=${sides[$(((k + r) % 2))]} # the order alternates from run to run
        timeout 300 "$work/$side/build/bench/$target" "$@" "${run_flag[@]}" "$r" |
            sed "s/^{/{\"variant\":\"$side\",/" >>"$out"
    done
done
python3 "$here/against.py" "$out"

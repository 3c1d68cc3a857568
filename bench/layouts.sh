#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fork-join rows at four code layouts: weft's typed tasks (and, with
# --rev, an older revision's) against Lace, each built four times.
#
#   bench/layouts.sh --lace DIR [--rev REV] [--runs N] [--threads "1 2"]
#                    [--system S]... [WORKLOAD...]
#
# Why: on these rows a node is a few dozen instructions, and where the hot
# functions fall against 64-byte lines moves one binary's time by up to 15%
# with no instruction changed (docs/performance.md, "Code layout"): one
# build is one draw of that. Here every function starts on a 64-byte
# boundary and is entered 0, 16, 32 or 48 bytes past it
# (-falign-functions=64 -fpatchable-function-entry=P,P: P bytes of padding
# before each entry, never run), in the library, the benchmark program and
# Lace's program alike; the programs run interleaved (run, workload, layout,
# system), and bench/layouts.py prints each layout's median, the mean of
# the four medians, and the ratio of means to Lace's.
#
# DIR: a Lace source tree (as bench/run.sh --lace). REV: a commit of this
# repository, built the same way beside this working tree, as "before"
# (the working tree is "after"). S: weft_bench systems (default weft-task).
# WORKLOADS default to the suite: fib35 nqueens12 msort pi knapsack uts.
# Writes bench/results/layouts.jsonl.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
lace_dir=${LACE_DIR:-}
rev=
runs=7
threads="1 2"
systems=()
usage() {
    echo "usage: $0 --lace DIR [--rev REV] [--runs N] [--threads \"T...\"] [--system S]... [WORKLOAD...]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --lace | --rev | --runs | --threads | --system)
        [ $# -ge 2 ] || usage
        case $1 in
        --lace) lace_dir=$2 ;;
        --rev) rev=$(git -C "$repo" rev-parse --verify "$2^{commit}") ;;
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --system) systems+=("$2") ;;
        esac
        shift 2
        ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ -f "$lace_dir/src/lace.h" ] || {
    echo "$0: --lace DIR must name a Lace source tree (src/lace.h)" >&2
    exit 2
}
[ ${#systems[@]} -gt 0 ] || systems=(weft-task)
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(fib35 nqueens12 msort pi knapsack uts)
offsets=(0 16 32 48)
layout_flags() { # layout_flags P: the compiler flags of layout P
    if [ "$1" = 0 ]; then
        echo "-falign-functions=64"
    else
        echo "-falign-functions=64 -fpatchable-function-entry=$1,$1"
    fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sides=(after)
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
    (mkdir -p "$work/after" && tar -x -C "$work/after")
if [ -n "$rev" ]; then
    sides=(before after)
    mkdir -p "$work/before"
    git -C "$repo" archive "$rev" | tar -x -C "$work/before"
fi
cmake -S "$lace_dir" -B "$work/lace" -DCMAKE_BUILD_TYPE=Release -DLACE_BUILD_TESTS=OFF \
    -DLACE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$work/lace" --target lace -j2 >/dev/null
liblace=$(find "$work/lace" -name liblace.a | head -n 1)
for p in "${offsets[@]}"; do
    flags=$(layout_flags "$p")
    for side in "${sides[@]}"; do
        cmake -S "$work/$side" -B "$work/$side/build-$p" -DCMAKE_BUILD_TYPE=Release \
            -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF -DCMAKE_C_FLAGS="$flags" >/dev/null
        cmake --build "$work/$side/build-$p" -j2 --target weft_bench >/dev/null
    done
    # As bench/run.sh builds Lace's program, with the layout's flags.
    # shellcheck disable=SC2086 # flags: several words
    gcc -std=gnu11 -O2 -falign-loops=64 $flags -I"$here" -I"$lace_dir/src" -I"$work/lace" \
        "$here/driver.c" "$here"/wl_*.c "$here/peers/lace.c" "$liblace" \
        -o "$work/lace_bench-$p" -lpthread
done

out=$here/results/layouts.jsonl
mkdir -p "$here/results"
: >"$out"
tag() { sed "s/^{/{\"variant\":\"$1\",\"layout\":$2,/"; }
for ((r = 0; r < runs; r++)); do
    for w in "${workloads[@]}"; do
        for t in $threads; do
            for p in "${offsets[@]}"; do
                for side in "${sides[@]}"; do
                    for s in "${systems[@]}"; do
                        timeout 300 "$work/$side/build-$p/bench/weft_bench" --system "$s" \
                            --workload "$w" --threads "$t" --run "$r" >"$work/run.txt"
                        tag "$side" "$p" <"$work/run.txt" >>"$out"
                    done
                done
                timeout 300 "$work/lace_bench-$p" --system lace --workload "$w" \
                    --threads "$t" --run "$r" >"$work/run.txt"
                tag lace "$p" <"$work/run.txt" >>"$out"
            done
        done
    done
done
python3 "$here/layouts.py" "$out"

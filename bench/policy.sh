#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The leave-policy table and the wake rule's cost, in one run.
#
#   bench/policy.sh [--runs N] [--smoke] [--ablation] BUILD_DIR
#
# --ablation: the ablation alone (below).
#
# Policy table: weft with WEFT_LEAVE_AUTOMATIC (weft), WEFT_LEAVE_FAST
# (weft-fast) and idle workers that never sleep (weft-spin, the library's
# benchmark build that never sleeps), each also inside a parallel phase for the whole run (…-phase), on:
# sporadic jobs every 50 us, 500 us and 10 ms (the sweep's points), burst and
# gap with 200 us and 5 ms gaps, and the control loop. The goal: AUTOMATIC's
# wall time within 5% of the best of FAST and always-search, its CPU within
# 25% of the lower of the two.
#
# Composability: bench/compose.c (a weft stage, then an OpenMP stage), and
# the pools workload (bench/wl_pools.c: four pools of 8 in one process,
# against one shared pool; make bench runs it for the peers too).
#
# Wake rule: weft (Go's: a push wakes a sleeper only when nobody searches)
# against weft-rayonwake (Rayon's: a push onto a non-empty queue always wakes)
# on pools of 8, 16 and 64 workers: idle CPU, sporadic CPU, fib(30) and loop
# throughput.
#
# Ablation: the pool with each rule of the idle policy switched off alone
# (src/idle/leave.h, WEFT__RULE; a library build each) against the whole
# policy, interleaved, beside an A/A control (weft-off-none: the whole
# policy built apart) that shows each row's noise: a rule whose removal
# costs no row more than 3% beyond that noise has not earned its place.
#
# Writes bench/results/policy.jsonl and policy.md (also printed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=5
smoke=
only_ablation=
build=
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --smoke) smoke=--smoke; runs=1 ;;
    --ablation) only_ablation=1 ;;
    *) build=$1 ;;
    esac
    shift
done
[ -n "$build" ] || { echo "usage: $0 [--runs N] [--smoke] [--ablation] BUILD_DIR" >&2; exit 2; }
dir=$(realpath "$build")/bench
bin=$dir/weft_bench
[ -x "$bin" ] || { echo "no $bin: build with -DWEFT_BUILD_BENCH=ON first" >&2; exit 1; }
# The always-search and Rayon-wake systems are programs of their own: the
# library built with the idle module's compile-time switches.
program() { # system
    case $1 in
    weft-spin*) echo "$dir/weft_spin_bench" ;;
    weft-rayonwake) echo "$dir/weft_rayonwake_bench" ;;
    weft-off-*) echo "$dir/weft_off_${1#weft-off-}_bench" ;;
    *) echo "$bin" ;;
    esac
}
ablate=
for rule in none spent wanted due implicit gain search selfwake defer backoff; do
    [ -x "$dir/weft_off_${rule}_bench" ] && ablate="$ablate weft-off-$rule"
done
out=$here/results
mkdir -p "$out"
raw=$out/policy.jsonl
: >"$raw"
run() { # system workload [threads]
    local t=()
    [ $# -gt 2 ] && t=(--threads "$3")
    timeout 120 "$(program "$1")" --system "$1" --workload "$2" --run "$r" $smoke "${t[@]}" >>"$raw" ||
        echo "failed: $*" >&2
}
start=$(date +%s)
for r in $(seq 0 $((runs - 1))); do
    # The ablation: the whole policy against each rule off alone, on the
    # policy table's rows, latency, idle CPU, several pools and two
    # throughput rows; each run starts at another
    # system, so that none always runs first (a cold machine) or last.
    systems=(weft $ablate)
    for k in "${!systems[@]}"; do
        s=${systems[$(((k + r) % ${#systems[@]}))]}
        for w in sweep burst burst5ms control; do run "$s" "$w"; done
        for w in loop fib30 roundtrip sporadic idle pools; do run "$s" "$w" 8; done
        run "$s" sporadic 16
        run "$s" loop 64
    done
    [ -n "$only_ablation" ] && continue
    for s in weft weft-fast weft-spin weft-phase weft-fast-phase weft-spin-phase; do
        for w in sweep burst burst5ms control; do run "$s" "$w"; done
    done
    for compose in "$dir/compose_bench" "$dir/compose_spin_bench"; do
        [ -x "$compose" ] && { timeout 120 "$compose" "$r" >>"$raw" || echo "failed: compose" >&2; }
    done
    run weft pools 8
    for s in weft weft-rayonwake; do
        for t in 8 16 64; do
            for w in idle sporadic fib30 loop; do run "$s" "$w" "$t"; done
        done
    done
done
python3 "$here/policy.py" "$raw" | tee "$out/policy.md"
echo "policy: $(($(date +%s) - start)) s; results in $out/policy.md"

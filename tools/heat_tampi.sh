#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The heat solver (examples/heat_mpi.c) with plain blocking MPI calls in
# blocking regions against the same solver under Task-Aware MPI (TAMPI
# through libweft-alpi), at 2 and 4 ranks: builds both, runs them
# interleaved, checks that every run equals the serial solver, and prints
# each run's time (the iterations alone, the slowest rank's) and the
# medians.
#
#   tools/heat_tampi.sh [--runs N] [--size "ROWS COLS ITERATIONS"] TAMPI_DIR
#
# TAMPI_DIR: TAMPI's install prefix (TAMPI 4.x, configured with
# --with-max-cpus at least weft's slot count: docs/guide.md ("MPI from jobs") says how to
# build it). Defaults: 5 runs, a 1024 x 1024 grid, 200 iterations. Builds in
# build/heat-tampi. Ranks may outnumber the CPUs (--oversubscribe); each
# rank's default pool has $WEFT_NUM_THREADS workers if it is set, one per
# CPU otherwise. As root, Open MPI is told that this is meant.
# Exit status 1 if a run fails or differs from the serial solver.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
runs=5
size="1024 1024 200"
usage() {
    echo "usage: $0 [--runs N] [--size \"ROWS COLS ITERATIONS\"] TAMPI_DIR" >&2
    exit 2
}
while [ $# -gt 1 ]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
tampi=$(cd "$1" && pwd)
[ -f "$tampi/include/TAMPI.h" ] || { echo "$0: no include/TAMPI.h under $tampi" >&2; exit 2; }

build=$repo/build/heat-tampi
mkdir -p "$build"
if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF \
    -DWEFT_BUILD_EXAMPLES=ON -DTAMPI_DIR="$tampi" &&
    cmake --build "$build" -j"${JOBS:-2}" --target example_heat_mpi example_heat_tampi; } \
    >"$build/heat_tampi.log" 2>&1; then
    cat "$build/heat_tampi.log" >&2
    echo "$0: the build failed" >&2
    exit 1
fi

# Open MPI refuses root without both variables; its shared-memory transport's
# process_vm_readv may be forbidden in a container. TAMPI warns on every rank
# that weft has no ALPI suspension unless told to poll by blocking.
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export TAMPI_POLLING_MODE=blocking

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

status=0
declare -A times
# $size is three numbers: split on purpose.
# shellcheck disable=SC2086
for np in 2 4; do
    for run in $(seq "$runs"); do
        for variant in mpi tampi; do
            out=$(timeout 600 mpirun -np "$np" --oversubscribe \
                "$build/examples/example_heat_$variant" $size 2>&1) || {
                echo "np=$np $variant run $run: failed" >&2
                echo "$out" >&2
                status=1
                continue
            }
            line=$(echo "$out" | grep -E ' iterations: ' || true)
            case $line in
            *"equal to the serial run"*) ;;
            *)
                echo "np=$np $variant run $run: not equal to the serial run" >&2
                echo "$out" >&2
                status=1
                continue
                ;;
            esac
            t=$(echo "$line" | sed -E 's/.* iterations: ([0-9.]+) s,.*/\1/')
            times[$np.$variant]="${times[$np.$variant]:-} $t"
            echo "np=$np run $run $variant: $t s ($(echo "$line" | sed -E 's/^[^:]*: ([^,]*),.*/\1/'))"
        done
    done
done

echo
echo "grid and iterations: $size; $runs runs each; median seconds (every run equal to serial: $([ $status = 0 ] && echo yes || echo NO))"
printf '%-4s %12s %12s %10s\n' ranks blocking tampi tampi/blk
for np in 2 4; do
    b=$(echo "${times[$np.mpi]:-}" | tr ' ' '\n' | grep . | median || true)
    t=$(echo "${times[$np.tampi]:-}" | tr ' ' '\n' | grep . | median || true)
    ratio=$(awk -v b="${b:-0}" -v t="${t:-0}" 'BEGIN { if (b > 0) printf "%.2f", t / b; else print "-" }')
    printf '%-4s %12s %12s %10s\n' "$np" "${b:--}" "${t:--}" "$ratio"
done
exit $status

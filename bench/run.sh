#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and run weft's benchmark suite against its peers, in one run.
#
#   bench/run.sh [--smoke] [--runs N] [--lace DIR] BUILD_DIR
#
# BUILD_DIR is the CMake build of the project with -DWEFT_BUILD_BENCH=ON
# (configured here if it is not yet); its bench/ holds the programs CMake
# builds (serial_bench: serial and serial-noinline, weft_bench, gomp_bench,
# tbb_bench, gnu_parallel_bench). This script adds libomp_bench (clang -fopenmp=libomp) and
# rayon_bench (cargo, offline, against Debian's crate sources), then runs
# every system x workload x run, interleaved (run-major, the system order
# rotating from run to run), and writes
# bench/results/ (a smoke run: bench/results/smoke/): raw.jsonl, table.md
# (also printed), summary.csv, plots.
# A full run also refreshes the tables in docs/performance.md.
#
# --smoke: one run of tiny sizes: checks that everything builds and runs.
# --lace DIR (or LACE_DIR=DIR): also Lace (peers/lace.c, the fork-join
# workloads), built from the Lace source tree DIR (its CMake project, as
# Release); Lace is not packaged, so without it the peer is skipped.
# Exit status: 0, or 1 if a program failed or timed out (see
# results/failures.txt; the table is written anyway).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
smoke=0
runs=5
build=
lace_dir=${LACE_DIR:-}

usage() {
    echo "usage: $0 [--smoke] [--runs N] [--lace DIR] BUILD_DIR" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --smoke) smoke=1 ;;
    --runs)
        [ $# -ge 2 ] || usage
        runs=$2
        shift
        ;;
    --lace)
        [ $# -ge 2 ] || usage
        lace_dir=$2
        shift
        ;;
    -*) usage ;;
    *)
        [ -z "$build" ] || usage
        build=$1
        ;;
    esac
    shift
done
[ -n "$build" ] || usage
build=$(realpath -m "$build")
if [ $smoke = 1 ]; then
    runs=1
    limit=20 # seconds per program invocation (each takes < 2 s)
    size_args=(--smoke)
else
    limit=120 # the slowest invocation (gomp fib35) takes ~10 s
    size_args=()
fi
# A smoke run must not overwrite the full run's results (the SVGs are
# committed with docs/performance.md).
results=$here/results
if [ $smoke = 1 ]; then
    results=$here/results/smoke
fi
bin=$build/bench
log() { echo "$@" >&2; }

# ---- build -----------------------------------------------------------------

build_cmake() {
    if [ -f "$repo/CMakeLists.txt" ]; then
        if ! grep -q '^WEFT_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
            cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON >&2
        fi
        cmake --build "$build" --target bench_programs -j2 >&2
    else
        # No project yet: the peers alone (bench/CMakeLists.txt stands alone).
        log "no $repo/CMakeLists.txt: building the peers only"
        cmake -S "$here" -B "$bin" -DCMAKE_BUILD_TYPE=Release >&2
        cmake --build "$bin" -j2 >&2
    fi
}

newer_than() { # newer_than TARGET SOURCES...: is some source newer?
    local t=$1 s
    shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}

# The OpenMP source with clang and libomp. The driver (with the mergesort's
# sequential pieces) is compiled by gcc, as in every other program, so that
# the libomp column measures the runtime and not clang's code for the leaves.
build_libomp() {
    if ! command -v clang >/dev/null; then
        log "skip libomp: apt-get install clang libomp-dev"
        return
    fi
    local flags=(-std=c11 -O2 -falign-loops=64 -fopenmp-simd -I"$here") cc=gcc
    command -v gcc >/dev/null || cc=cc
    # The driver: driver.c and its workloads (wl_*.c), an object each in $obj.
    local driver=("$here/driver.c" "$here"/wl_*.c) obj=$bin/libomp_driver
    newer_than "$bin/libomp_bench" "${driver[@]}" "$here/driver.h" "$here/peers/omp.c" \
        "$here/bench.h" || return 0
    if ! {
        rm -rf "$obj" && mkdir "$obj" && (cd "$obj" && $cc "${flags[@]}" -c "${driver[@]}") &&
            clang "${flags[@]}" -fopenmp=libomp -DBENCH_OMP_NAME='"libomp"' "$here/peers/omp.c" \
                "$obj"/*.o -o "$bin/libomp_bench" -lpthread
    } 2>"$bin/libomp_build.log"; then
        log "skip libomp: apt-get install libomp-dev ($(head -n 1 "$bin/libomp_build.log"))"
        rm -f "$bin/libomp_bench"
    fi
}

build_rayon() {
    if ! command -v cargo >/dev/null; then
        log "skip rayon: apt-get install cargo librust-rayon-dev"
        return
    fi
    if ! ls -d /usr/share/cargo/registry/rayon-1.* >/dev/null 2>&1; then
        log "skip rayon: apt-get install librust-rayon-dev"
        return
    fi
    # The same loop alignment as the C programs where rustc's LLVM has it (the
    # driver's own loops are C, built by build.rs with -falign-loops=64).
    local rustflags=
    if rustc -C llvm-args=-align-loops=64 --print cfg >/dev/null 2>&1; then
        rustflags="-C llvm-args=-align-loops=64"
    else
        log "rayon: rustc $(rustc --version | cut -d' ' -f2) has no -align-loops; Rust code unaligned"
    fi
    # Cargo reads .cargo/config.toml (offline, Debian's crates) from the cwd.
    if (cd "$here/peers/rayon" && RUSTFLAGS="$rustflags" cargo build --release --offline --quiet \
        --target-dir "$bin/rayon-target") >"$bin/rayon_build.log" 2>&1; then
        ln -sf rayon-target/release/rayon_bench "$bin/rayon_bench"
    else
        log "skip rayon: cargo build failed (see $bin/rayon_build.log); apt-get install cargo librust-rayon-dev"
        tail -n 5 "$bin/rayon_build.log" >&2
        rm -f "$bin/rayon_bench"
    fi
}

# Lace from the source tree the user names: its library built by its own
# CMake project (Release: -O3 -march=native, as Lace builds itself), the
# driver by gcc as in every other program.
build_lace() {
    [ -n "$lace_dir" ] || return 0
    if [ ! -f "$lace_dir/src/lace.h" ] || [ ! -f "$lace_dir/CMakeLists.txt" ]; then
        log "skip lace: $lace_dir is not a Lace source tree (src/lace.h, CMakeLists.txt)"
        return
    fi
    local lb=$bin/lace-build cc=gcc
    command -v gcc >/dev/null || cc=cc
    if ! {
        cmake -S "$lace_dir" -B "$lb" -DCMAKE_BUILD_TYPE=Release -DLACE_BUILD_TESTS=OFF \
            -DLACE_BUILD_BENCHMARKS=OFF && cmake --build "$lb" --target lace -j2 &&
            $cc -std=gnu11 -O2 -falign-loops=64 -I"$here" -I"$lace_dir/src" -I"$lb" \
                "$here/driver.c" "$here"/wl_*.c "$here/peers/lace.c" \
                "$(find "$lb" -name liblace.a | head -n 1)" -o "$bin/lace_bench" -lpthread
    } >"$bin/lace_build.log" 2>&1; then
        log "skip lace: the build failed (see $bin/lace_build.log)"
        tail -n 5 "$bin/lace_build.log" >&2
        rm -f "$bin/lace_bench"
    fi
}

t_start=$(date +%s)
mkdir -p "$bin"
build_cmake
build_libomp
build_rayon
build_lace

# ---- systems -----------------------------------------------------------------

systems=()  # system names
programs=() # the program of each
add_program() { # add_program PROGRAM SKIP-MESSAGE
    local s
    if [ -x "$bin/$1" ]; then
        for s in $("$bin/$1" --systems); do
            systems+=("$s")
            programs+=("$bin/$1")
        done
    elif [ -n "$2" ]; then
        log "$2"
    fi
}
add_program serial_bench ""
[ ${#systems[@]} -gt 0 ] || {
    log "error: $bin/serial_bench was not built"
    exit 1
}
add_program weft_bench "skip weft: the library is not built (needs the project's CMakeLists.txt and src/)"
add_program weft_cpp_bench ""
add_program gomp_bench "skip gomp: apt-get install gcc (configure with CC=gcc)"
add_program libomp_bench ""
add_program tbb_bench "skip tbb: apt-get install libtbb-dev"
add_program gnu_parallel_bench "skip gnu-parallel: needs g++ with OpenMP (configure with CXX=g++)"
add_program rayon_bench ""
[ -n "$lace_dir" ] && add_program lace_bench ""
mapfile -t workloads < <("$bin/serial_bench" --list)

# The runtimes' own defaults are part of what is measured.
unset OMP_NUM_THREADS OMP_WAIT_POLICY OMP_PROC_BIND OMP_PLACES GOMP_SPINCOUNT \
    KMP_BLOCKTIME KMP_AFFINITY RAYON_NUM_THREADS WEFT_NUM_THREADS

mkdir -p "$results"
raw=$results/raw.jsonl
fails=$results/failures.txt
: >"$raw"
: >"$fails"

machine_info() {
    echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
    # The family and model too: a guest may name every host "AMD EPYC", and
    # the ratios between runtimes differ between its generations.
    echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')$(awk -F': *' '/^cpu family/ && !f {f=$2} /^model[^ ]*\t*:/ && !m {m=$2} END {if (f != "") printf " (family %s, model %s)", f, m}' /proc/cpuinfo), $(nproc) CPUs usable"
    # shellcheck source=/dev/null
    echo "os:       $(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)"
    echo "gcc:      $(gcc -dumpfullversion 2>/dev/null || echo none)"
    echo "clang:    $(clang -dumpversion 2>/dev/null || echo none)"
    echo "rustc:    $(rustc --version 2>/dev/null | cut -d' ' -f2 || echo none)"
    echo "oneTBB:   $(dpkg-query -W -f '${Version}' libtbb-dev 2>/dev/null || echo '?')"
    echo "rayon:    $(grep -m1 '^rayon = ' "$here/peers/rayon/Cargo.toml" | tr -d '"=' | awk '{print $2}') (Debian's librust-rayon-dev)"
    if [ -x "$bin/lace_bench" ] && [ -n "$lace_dir" ]; then
        echo "lace:     $(sed -n 's/^ *VERSION \([0-9.]*\).*/\1/p' "$lace_dir/CMakeLists.txt" | head -n 1) (from $lace_dir)"
    fi
    echo "weft:     $(awk '/define WEFT_VERSION_(MAJOR|MINOR|PATCH)/{printf "%s%s", s, $3; s="."}' "$repo/include/weft/version.h" 2>/dev/null)$(git -C "$repo" describe --always --dirty 2>/dev/null | sed 's/^/ @ /')"
    echo "mode:     $([ $smoke = 1 ] && echo smoke || echo full), $runs run(s) per figure"
    echo "load:     $1"
}
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- runs --------------------------------------------------------------------

n=${#systems[@]}
failed=0
for ((run = 0; run < runs; run++)); do
    log "run $((run + 1))/$runs"
    for wl in "${workloads[@]}"; do
        printf '  %-10s' "$wl" >&2
        for ((k = 0; k < n; k++)); do
            i=$(((k + run) % n))
            sys=${systems[$i]}
            args=(--system "$sys" --workload "$wl" --run "$run" "${size_args[@]}")
            # The serial references have no pool: one measurement serves
            # every pool size.
            case $sys in serial | serial-noinline) args+=(--threads 1) ;; esac
            status=0
            timeout -k 5 "$limit" "${programs[$i]}" "${args[@]}" >>"$raw" 2>"$results/last_stderr" || status=$?
            if [ $status -ne 0 ]; then
                why="exit $status"
                [ $status -eq 124 ] && why="timeout after ${limit}s"
                echo "$sys $wl run=$run: $why: $(tr '\n' ' ' <"$results/last_stderr" | cut -c1-300)" >>"$fails"
                printf ' %s:FAIL' "$sys" >&2
                failed=1
            else
                printf ' .' >&2
            fi
        done
        echo >&2
    done
done
rm -f "$results/last_stderr"

machine_info "load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    >"$results/machine.txt"

# ---- report --------------------------------------------------------------------

report=(python3 "$here/report.py" "$results")
if [ $smoke = 1 ]; then
    report+=(--smoke)
else
    report+=(--docs "$repo/docs/performance.md")
fi
"${report[@]}"
log "bench: $(($(date +%s) - t_start)) s; results in $results"
if [ $failed = 1 ]; then
    log "bench: some runs failed:"
    cat "$fails" >&2
    exit 1
fi

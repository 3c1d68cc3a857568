#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages a make target needs, and only the missing ones.
#
#   tools/deps.sh test         what `make test` and `make check` need
#   tools/deps.sh bench        what `make bench` needs (weft and its peers)
#   tools/deps.sh deb          what `make deb` and tools/check_deb.sh need
#   tools/deps.sh test bench deb   all three (.ci/run)
#
# Nothing missing: exit 0 without touching apt. As root: `apt-get update`
# once, then `apt-get install --no-install-recommends` the missing packages.
# Not root: print the one `sudo apt-get install ...` line and exit 1, so that
# the make target stops before a confusing build error. Not a dpkg system
# (another distribution, macOS): say which tools the set needs and exit 0;
# the build itself reports what it cannot find.
set -eu

# What each set uses, and where:
#   build-essential cmake   every build (gcc, make, libc headers)
#   g++                     tests/cpp, bench/peers/tbb.cpp
#   clang libclang-rt-dev   the TSan builds (clang's TSan runtime is only a
#                           Recommends of clang, which --no-install-recommends
#                           skips); clang++ in tests/cpp; libomp in bench
#   clang-format git        make format-check (git ls-files lists the sources)
#   python3                 tests/test_trace.c (tools/check_trace.py), bench/report.py
#   pkg-config              tests/install (the README's pkg-config line); bench's oneTBB;
#                           tools/check_deb.sh's pkg-config consumer
#   dpkg-dev file           make deb: CPack's DEB generator finds the runtime package's
#                           dependencies with dpkg-shlibdeps, and the files to give it
#                           with file (dpkg-dev also comes with build-essential, as do
#                           readelf and objcopy, for the shlibs file and the -dbgsym)
#   spin                    make verify (verify/run.sh)
#   doxygen                 the docs.doxygen test
#   abigail-tools           the install.abi test (abidiff)
#   libopenmpi-dev openmpi-bin
#                           examples/heat_mpi.c and its test mpi.heat (mpirun -np 4);
#                           without them the example is not built
#   libomp-dev libtbb-dev cargo librust-rayon-dev librust-rayon-core-dev
#                           the benchmark peers (bench/run.sh skips a missing one)
#   gnuplot-nox             bench/report.py's plots
test_pkgs="build-essential cmake g++ clang libclang-rt-dev clang-format git python3 pkg-config
spin doxygen abigail-tools libopenmpi-dev openmpi-bin"
bench_pkgs="build-essential cmake g++ clang python3 pkg-config libomp-dev libtbb-dev cargo
librust-rayon-dev librust-rayon-core-dev gnuplot-nox"
deb_pkgs="build-essential cmake dpkg-dev file pkg-config"

if [ $# -eq 0 ]; then
    echo "usage: $0 test|bench|deb..." >&2
    exit 2
fi
pkgs=
for set in "$@"; do
    case $set in
    test) pkgs="$pkgs $test_pkgs" ;;
    bench) pkgs="$pkgs $bench_pkgs" ;;
    deb) pkgs="$pkgs $deb_pkgs" ;;
    *)
        echo "$0: unknown set '$set' (test, bench, deb)" >&2
        exit 2
        ;;
    esac
done
wanted= # $pkgs without repeats, one space apart
for p in $pkgs; do
    case " $wanted " in *" $p "*) ;; *) wanted="${wanted:+$wanted }$p" ;; esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: not a Debian system; '$*' needs: $wanted (or their equivalents)" >&2
    exit 0
fi

installed() {
    case $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) in
    *" ok installed") return 0 ;;
    *) return 1 ;;
    esac
}

missing=
for p in $wanted; do
    installed "$p" || missing="$missing $p"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "deps: missing for '$*': $missing. Install them with:" >&2
    echo "  sudo apt-get install --no-install-recommends $missing" >&2
    exit 1
fi

echo "deps: installing $missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
# A name this release's archive lacks (libclang-rt-dev before Debian 12 and
# Ubuntu 23.04, where clang ships its runtimes itself) is skipped, not fatal.
available=
for p in $missing; do
    if apt-cache show "$p" >/dev/null 2>&1; then
        available="$available $p"
    else
        echo "deps: skipping $p: not in this system's archive" >&2
    fi
done
[ -z "$available" ] && exit 0
# $available is a list of package names: split on purpose.
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $available

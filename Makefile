# SPDX-License-Identifier: MIT
# weft: the two commands that matter are `make test` and `make bench`.
#   make check       the optimised suite only: the quick edit-test loop
#   make test        build and run the whole suite four times: optimised,
#                    ASan+UBSan, TSan, and TSan on the portable POSIX OS seam
#                    (each test case has a timeout); the stress tests in
#                    the random-yield build (test-yield); the library from
#                    POSIX interfaces only, and the suite on macOS's timed
#                    waits; the style check last
#   make test-yield  the stress-type tests built with -DWEFT_DEBUG_YIELD=ON
#                    (random yields and spins at every protocol step,
#                    src/os/atomics.h), once per seed in YIELD_SEEDS
#   make soak        tests/soak.c for SOAK_SECONDS (default 600), half under
#                    TSan and half in the random-yield build: everything at
#                    once, oversubscribed; checks exactly-once, aborts on a hang
#   make bench       build and run the benchmarks against the peers
#                    (LACE_DIR=<a Lace source tree>: Lace too, bench/run.sh)
#   make deps-test, make deps-bench
#                    install the Debian packages those need (tools/deps.sh);
#                    check, test and bench do it first
#   make bench-smoke the same, tiny sizes (CI keeps the peers building)
#   make bench-against REV=<commit> [PROGRAM=weft_bench] [ARGS="..."] [RUNS=10]
#                    this tree's library against REV's, on REV's benchmark
#                    program, built alike; interleaved (bench/against.sh)
#   make bench-layouts LACE_DIR=<a Lace source tree> [REV=<commit>] [RUNS=10]
#                    the typed fork-join suite against Lace at four code
#                    layouts, with REV's beside it (bench/layouts.sh)
#   make format      clang-format every C file; make format-check verifies
#   make install     build and install into $(PREFIX) (default /usr/local):
#                    headers, libweft.so and libweft.a, weft.pc, CMake package;
#                    as root into /usr or /usr/local, run ldconfig
#   make uninstall   remove what the last make install put there
#   make deb         Debian packages in build/deb: libweft<soversion> (the shared
#                    library) and libweft-dev (headers, libweft.a, weft.pc, CMake
#                    package, weft-trace2svg); tools/check_deb.sh installs and tests them
#   make abi-baseline record this ABI line's ABI (abi/libweft.abi) for install.abi
#   make examples    build examples/ (each also runs in the test suite)
#   make docs        the API reference from the headers: build/docs/html/
JOBS ?= 2
CMAKE ?= cmake
TSAN_CC ?= clang
PREFIX ?= /usr/local
YIELD_SEEDS ?= 1 2 3
SOAK_SECONDS ?= 600
SOAK_SEED ?= 1

.PHONY: all test test-release test-asan test-tsan test-posix test-yield soak bench bench-policy bench-smoke bench-against bench-layouts format format-check clean \
	install uninstall deb abi-baseline examples docs

all:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build build/release -j$(JOBS)

# The style check runs last, so that a misplaced space does not hide what the
# suite has to say (and stays last under make -j, being the recipe).
test: deps-test test-release test-asan test-tsan test-posix test-yield test-posix-strict verify
	@$(MAKE) --no-print-directory format-check format-check-tarball

.PHONY: check deps-test deps-bench deps-deb test-posix-strict format-check-tarball format-files
check: deps-test test-release

deps-test:
	tools/deps.sh test

deps-bench:
	tools/deps.sh bench

deps-deb:
	tools/deps.sh deb

test-release:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON
	$(CMAKE) --build build/release -j$(JOBS)
	cd build/release && ctest -j$(JOBS) --output-on-failure

# The install and docs checks build and install the library, its examples and
# consumers from scratch (install.three_ways alone took 36 s under ASan) and
# read the docs: what they check is the build's packaging, not the code's
# behaviour, so they run in the release suite only and a sanitizer suite
# leaves them out. So do the MPI runs (mpi.*): a sanitizer there would check
# Open MPI's allocations and threads, not weft's.
SANITIZED_ONLY = -E '^(install|docs|mpi)\.'

test-asan:
	$(CMAKE) -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=address
	$(CMAKE) --build build/asan -j$(JOBS)
	cd build/asan && ctest -j$(JOBS) --output-on-failure $(SANITIZED_ONLY)

# The suite under TSan in build dir $(1), with extra CMake flags $(2).
define tsan_suite
	CC=$(TSAN_CC) $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=thread $(2)
	$(CMAKE) --build $(1) -j$(JOBS)
	cd $(1) && TSAN_OPTIONS=halt_on_error=1 ctest -j$(JOBS) --output-on-failure $(SANITIZED_ONLY)
endef

test-tsan:
	$(call tsan_suite,build/tsan,)

# src/os/futex_posix.c (condition variables instead of futexes), which other
# systems build, under TSan: it checks the seam's locking as well as the rest.
test-posix:
	$(call tsan_suite,build/tsan-posix,-DWEFT_OS=posix)

# The tests that race the protocols, in the random-yield build: each seed is
# another set of interleavings (a failure names its seed; rerun it with
# WEFT_DEBUG_YIELD_SEED=n). Unit tests and the timing-watching ones (phase,
# stats) learn nothing from yields.
YIELD_TESTS = ^test_(stress|lifecycle|faults|fork|event|latch|sleep|deque|context|broadcast|graph|blocking)\.
# last_signal_wakes counts wake-ups over quiet intervals, as phase and stats do.
YIELD_SKIP = last_signal_wakes

test-yield:
	$(CMAKE) -S . -B build/yield -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_DEBUG_YIELD=ON
	$(CMAKE) --build build/yield -j$(JOBS)
	cd build/yield && for seed in $(YIELD_SEEDS); do \
		echo "test-yield: WEFT_DEBUG_YIELD_SEED=$$seed"; \
		WEFT_DEBUG_YIELD_SEED=$$seed ctest -j$(JOBS) -R '$(YIELD_TESTS)' -E '$(YIELD_SKIP)' --output-on-failure || exit 1; \
	done

# Not part of `make test`: it runs for SOAK_SECONDS. The time is split
# between the TSan build and the random-yield build.
soak:
	CC=$(TSAN_CC) $(CMAKE) -S . -B build/tsan -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=thread
	$(CMAKE) --build build/tsan -j$(JOBS) --target soak
	$(CMAKE) -S . -B build/yield -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_DEBUG_YIELD=ON
	$(CMAKE) --build build/yield -j$(JOBS) --target soak
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/soak $$(( $(SOAK_SECONDS) / 2 )) $(SOAK_SEED)
	WEFT_DEBUG_YIELD_SEED=$(SOAK_SEED) build/yield/tests/soak $$(( $(SOAK_SECONDS) - $(SOAK_SECONDS) / 2 )) $(SOAK_SEED)

# The library from POSIX.1-2008 interfaces only (WEFT_POSIX_STRICT), so that
# a Linux-only call in a portable source fails here: built as Linux builds the
# POSIX seam, then as macOS does (no pthread_condattr_setclock: timed waits on
# the wall clock, WEFT_NO_CONDATTR_SETCLOCK), whose suite runs.
STRICT = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON -DWEFT_OS=posix -DWEFT_POSIX_STRICT=ON
test-posix-strict:
	$(CMAKE) -S . -B build/posix-strict $(STRICT)
	$(CMAKE) --build build/posix-strict -j$(JOBS) --target weft weft_static
	$(CMAKE) -S . -B build/posix-wallclock $(STRICT) -DCMAKE_C_FLAGS=-DWEFT_NO_CONDATTR_SETCLOCK
	$(CMAKE) --build build/posix-wallclock -j$(JOBS)
	cd build/posix-wallclock && ctest -j$(JOBS) --output-on-failure -E '^(install|docs)\.'

bench: deps-bench
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	bench/run.sh build/bench

bench-policy:
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	$(CMAKE) --build build/bench -j$(JOBS) --target bench_ablation
	bench/policy.sh build/bench

bench-smoke: deps-bench
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	bench/run.sh --smoke build/bench

# PROGRAM, not TARGET: an environment's TARGET (a cross-compilation triple)
# would otherwise pick the program.
RUNS ?= 10
PROGRAM ?= weft_bench
bench-against: deps-bench
	@test -n "$(REV)" || { echo "make bench-against: REV=<commit> is required" >&2; exit 2; }
	bench/against.sh --runs $(RUNS) --target $(PROGRAM) $(REV) $(ARGS)

bench-layouts: deps-bench
	@test -n "$(LACE_DIR)" || { echo "make bench-layouts: LACE_DIR=<a Lace source tree> is required" >&2; exit 2; }
	bench/layouts.sh --lace $(LACE_DIR) --runs $(RUNS) $(if $(REV),--rev $(REV))

# install builds in a directory of its own configured for $(PREFIX), so that
# GNUInstallDirs picks the library directory the prefix calls for (Debian:
# lib/<multiarch> under /usr, lib under /usr/local or a private prefix), and
# so that a later `make check` does not inherit the prefix. After installing
# into /usr or /usr/local as root it runs ldconfig: without it, the dynamic
# linker's cache does not know libweft.so.0.3 and programs do not start. For
# another prefix it says what a program needs (README.md, "Installing").
INSTALL_BUILD ?= build/install
install:
	$(CMAKE) -S . -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX)) -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_EXAMPLES=OFF
	$(CMAKE) --build $(INSTALL_BUILD) -j$(JOBS)
	$(CMAKE) --install $(INSTALL_BUILD)
	@libdir=$(abspath $(PREFIX))/$$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' $(INSTALL_BUILD)/CMakeCache.txt); \
	case "$(abspath $(PREFIX))" in /usr|/usr/local) system=yes ;; *) system= ;; esac; \
	if [ -n "$$DESTDIR" ]; then \
	    :; \
	elif [ -n "$$system" ] && [ "$$(id -u)" = 0 ]; then \
	    echo ldconfig; ldconfig; \
	elif [ -n "$$system" ]; then \
	    echo "install: run ldconfig as root, or programs will not find libweft.so"; \
	else \
	    echo "install: programs find libweft.so in $$libdir only if linked with"; \
	    echo "  -Wl,-rpath,$$libdir, or run with LD_LIBRARY_PATH=$$libdir (README.md, Installing)"; \
	fi

# deb builds the packages in a directory of its own configured for the prefix
# /usr, for the reason install has one: GNUInstallDirs chooses the library
# directory (lib/<multiarch>) from the prefix when it configures, so the
# release build (prefix /usr/local, lib) cannot be repackaged for /usr. Only
# the libraries are built there, not the tests. The packages' layout and
# fields are cmake/deb.cmake's; their -dbgsym .ddeb holds the debug information.
# Packages of an earlier version are deleted first, so that build/deb/*.deb
# is what this tree makes (README.md, Installing).
DEB_BUILD ?= build/deb
deb: deps-deb
	$(CMAKE) -S . -B $(DEB_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
	    -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_EXAMPLES=OFF
	$(CMAKE) --build $(DEB_BUILD) -j$(JOBS)
	rm -f $(DEB_BUILD)/*.deb $(DEB_BUILD)/*.ddeb
	$(CMAKE) --build $(DEB_BUILD) --target package
	@ls -1 $(DEB_BUILD)/*.deb

# abi-baseline records the ABI of this version's line in abi/libweft.abi,
# from the release build (RelWithDebInfo: abidw reads the debug information),
# for the test install.abi. Only when a new ABI line starts (version.h).
abi-baseline:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build build/release -j$(JOBS) --target weft
	abidw --headers-dir include --headers-dir build/release/include --drop-private-types \
	    --no-show-locs --no-corpus-path build/release/libweft.so > abi/libweft.abi

# uninstall removes what the last `make install` from $(INSTALL_BUILD) put
# there (its install_manifest.txt; DESTDIR as it was then), and runs ldconfig
# as root for /usr or /usr/local, as install does.
uninstall:
	@test -f $(INSTALL_BUILD)/install_manifest.txt || { \
	    echo "uninstall: nothing installed from $(INSTALL_BUILD) (make install first)" >&2; exit 1; }
	$(CMAKE) --build $(INSTALL_BUILD) --target uninstall
	@case "$(abspath $(PREFIX))" in /usr|/usr/local) system=yes ;; *) system= ;; esac; \
	if [ -z "$$DESTDIR" ] && [ -n "$$system" ] && [ "$$(id -u)" = 0 ]; then echo ldconfig; ldconfig; fi

examples:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build build/release -j$(JOBS) --target examples

docs:
	doxygen Doxyfile
	@echo "API reference: build/docs/html/index.html"

# The C and C++ sources: git's list, or where there is no git repository (a
# release tarball) the same files found on disk. clang-format given no file
# reads standard input, which hangs or passes silently: an empty list is an
# error instead, and stdin is /dev/null regardless.
FORMAT_PATTERNS = '*.c' '*.h' '*.cpp' '*.hpp'
FORMAT_FILES = $(or $(shell git ls-files -- $(FORMAT_PATTERNS) 2>/dev/null),\
	$(shell find . \( -path ./build -o -path ./.git \) -prune -o -type f \
	        \( $(patsubst %,-name % -o,$(FORMAT_PATTERNS)) -false \) -print | sed 's|^\./||'))
CLANG_FORMAT = @files='$(FORMAT_FILES)'; \
	if [ -z "$$files" ]; then echo "$@: no C or C++ sources found" >&2; exit 1; fi; \
	clang-format </dev/null

format:
	$(CLANG_FORMAT) -i $$files

format-check:
	$(CLANG_FORMAT) --dry-run --Werror $$files

format-files:
	@printf '%s\n' $(FORMAT_FILES) | sort

# format-check in a copy of the tree without .git, as a release tarball
# unpacks: it must check the same files as here and not wait for stdin.
format-check-tarball:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && mkdir "$$tmp/tree" && \
	tar -cf - --exclude=./.git --exclude=./build . | tar -xf - -C "$$tmp/tree" && \
	$(MAKE) -s --no-print-directory format-files >"$$tmp/git" && \
	(cd "$$tmp/tree" && $(MAKE) -s --no-print-directory format-files) >"$$tmp/find" && \
	if ! diff -u "$$tmp/git" "$$tmp/find"; then \
	    echo "$@: without .git, FORMAT_FILES differs from git ls-files" >&2; exit 1; fi && \
	(cd "$$tmp/tree" && timeout 300 $(MAKE) -s --no-print-directory format-check </dev/null) && \
	echo "$@: ok, $$(wc -l <"$$tmp/find") files checked without .git"

clean:
	rm -rf build

# verify, verify-all: the spin model of the sleep protocol (verify/README.md)
include verify/verify.mk

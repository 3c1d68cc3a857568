# weft: the two commands that matter are `make test` and `make bench`.
#   make test        build and run the whole suite four times: optimised,
#                    ASan+UBSan, TSan, and TSan on the portable POSIX OS seam
#                    (each test case has a timeout), then the stress tests
#                    in the random-yield build (test-yield)
#   make test-yield  the stress-type tests built with -DWEFT_DEBUG_YIELD=ON
#                    (random yields and spins at every protocol step,
#                    src/debug_yield.h), once per seed in YIELD_SEEDS
#   make soak        tests/soak.c for SOAK_SECONDS (default 600), half under
#                    TSan and half in the random-yield build: everything at
#                    once, oversubscribed; checks exactly-once, aborts on a hang
#   make bench       build and run the benchmarks against the peers
#   make bench-smoke the same, tiny sizes (CI keeps the peers building)
#   make format      clang-format every C file; make format-check verifies
#   make install     build and install into $(PREFIX) (default /usr/local):
#                    headers, libweft.so and libweft.a, weft.pc, CMake package
#   make examples    build examples/ (each also runs in the test suite)
#   make docs        the API reference from the headers: build/docs/html/
JOBS ?= 2
CMAKE ?= cmake
TSAN_CC ?= clang
PREFIX ?= /usr/local
YIELD_SEEDS ?= 1 2 3
SOAK_SECONDS ?= 600
SOAK_SEED ?= 1

.PHONY: all test test-release test-asan test-tsan test-posix test-yield soak bench bench-policy bench-smoke format format-check clean \
	install examples docs

all:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build build/release -j$(JOBS)

test: format-check test-release test-asan test-tsan test-posix test-yield verify

test-release:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_WERROR=ON
	$(CMAKE) --build build/release -j$(JOBS)
	cd build/release && ctest -j$(JOBS) --output-on-failure

test-asan:
	$(CMAKE) -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=address
	$(CMAKE) --build build/asan -j$(JOBS)
	cd build/asan && ctest -j$(JOBS) --output-on-failure

# The suite under TSan in build dir $(1), with extra CMake flags $(2).
define tsan_suite
	CC=$(TSAN_CC) $(CMAKE) -S . -B $(1) -DCMAKE_BUILD_TYPE=Debug -DWEFT_WERROR=ON -DWEFT_SANITIZE=thread $(2)
	$(CMAKE) --build $(1) -j$(JOBS)
	cd $(1) && TSAN_OPTIONS=halt_on_error=1 ctest -j$(JOBS) --output-on-failure
endef

test-tsan:
	$(call tsan_suite,build/tsan,)

# src/os_posix.c (condition variables instead of futexes), which other
# systems build, under TSan: it checks the seam's locking as well as the rest.
test-posix:
	$(call tsan_suite,build/tsan-posix,-DWEFT_OS=posix)

# The tests that race the protocols, in the random-yield build: each seed is
# another set of interleavings (a failure names its seed; rerun it with
# WEFT_DEBUG_YIELD_SEED=n). Unit tests and the timing-watching ones (phase,
# stats) learn nothing from yields.
YIELD_TESTS = ^test_(stress|lifecycle|faults|fork|event|latch|sleep|deque|context|broadcast|graph)\.
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

bench:
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	bench/run.sh build/bench

bench-policy:
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	bench/policy.sh build/bench

bench-smoke:
	$(CMAKE) -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_BENCH=ON -DWEFT_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j$(JOBS)
	bench/run.sh --smoke build/bench

install: all
	$(CMAKE) --install build/release --prefix $(PREFIX)

examples:
	$(CMAKE) -S . -B build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build build/release -j$(JOBS) --target examples

docs:
	doxygen Doxyfile
	@echo "API reference: build/docs/html/index.html"

FORMAT_FILES = $(shell git ls-files '*.c' '*.h' '*.cpp' '*.hpp' 2>/dev/null)

format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf build

# verify, verify-all: the spin model of the sleep protocol (verify/README.md)
include verify/verify.mk

/* SPDX-License-Identifier: MIT */
/* gnu_parallel.cpp: libstdc++'s parallel mode, the algorithms only:
 * __gnu_parallel::sort (by default a multiway merge sort: each thread sorts
 * a part, then the parts are merged in parallel through a buffer) and
 * __gnu_parallel::partial_sum, over OpenMP (libgomp: g++ -fopenmp). At
 * `threads` threads the team has `threads` threads, the calling thread one
 * of them, as the other systems count them (omp_set_num_threads); the
 * library's own thresholds and algorithm choices are kept, as a user gets
 * them. */
#include "bench.h"

#include <parallel/algorithm>
#include <parallel/numeric>

#include <omp.h>

namespace {

/* Parallel mode has no pool: the thread count is the process's OpenMP
 * setting, made by create(). */
char no_pool;

bench_pool *create(const bench_system *, unsigned threads, unsigned flags) {
    (void)flags;
    omp_set_num_threads(static_cast<int>(threads));
    return reinterpret_cast<bench_pool *>(&no_pool);
}

void destroy(bench_pool *) {}

void sort(bench_pool *, uint64_t *a, size_t n) {
    __gnu_parallel::sort(a, a + n);
}

void scan(bench_pool *, const uint64_t *in, uint64_t *out, size_t n) {
    __gnu_parallel::partial_sum(in, in + n, out);
}

bench_system make_system() {
    bench_system s{}; /* every workload but the algorithms: skipped */
    s.name = "gnu-parallel";
    s.create = create;
    s.destroy = destroy;
    s.sort = sort;
    s.scan = scan;
    return s;
}

const bench_system gnu_parallel = make_system();

} // namespace

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &gnu_parallel : nullptr;
}

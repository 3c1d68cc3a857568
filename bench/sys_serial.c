/* SPDX-License-Identifier: MIT */
/* sys_serial.c: the sequential reference. Every workload's parallel shape
 * with the forks taken out, so T1/Ts of a scheduler is its overhead over the
 * same computation. It has no pool: no detached jobs, no round trips, no idle
 * pool. */
#include "bench.h"

/* The serial system needs no pool state; create() returns this token. */
static char no_pool;

static bench_pool *create(const bench_system *sys, unsigned threads, unsigned flags) {
    (void)sys;
    (void)threads;
    (void)flags;
    return (bench_pool *)&no_pool;
}

static void destroy(bench_pool *pool) {
    (void)pool;
}

static long fib_rec(int n) {
    return n < 2 ? n : fib_rec(n - 1) + fib_rec(n - 2);
}

static long fib(bench_pool *pool, int n) {
    (void)pool;
    return fib_rec(n);
}

static void loop(bench_pool *pool, int *a, size_t n) {
    (void)pool;
    bench_loop_kernel(a, 0, n);
}

static void range(bench_pool *pool, size_t n, bench_range_fn *fn, void *arg) {
    (void)pool;
    fn(0, n, arg);
}

static long nq_search(const bench_nq *s) {
    long total = 0;
    for (int i = 0; i < s->ncand; i++)
        total += bench_nq_place(s, i, nq_search);
    return total;
}

static long nqueens(bench_pool *pool, int n) {
    (void)pool;
    bench_nq root;
    bench_nq_root(&root, n);
    return nq_search(&root);
}

/* Lace's suite (bench.h), each walk in the parallel programs' shape. */
static long pi_rec(uint64_t start, long cnt) {
    if (cnt == 1)
        return bench_pi_sample(start);
    return pi_rec(start, cnt / 2) + pi_rec(start + (uint64_t)(cnt / 2), (cnt + 1) / 2);
}

static long pi(bench_pool *pool, long samples) {
    (void)pool;
    return pi_rec(0, samples);
}

static long knapsack(bench_pool *pool, const bench_knap *k) {
    (void)pool;
    return bench_knap_serial(k->items, k->capacity, k->n, 0);
}

static long uts_node(uint64_t state, int level, int depth);

/* The nodes under children [lo, hi) of a node of `state`, halved down to
 * one child. */
static long uts_kids(uint64_t state, int level, int depth, int lo, int hi) {
    if (hi - lo == 1)
        return uts_node(bench_uts_child(state, lo), level + 1, depth);
    int mid = lo + (hi - lo) / 2;
    return uts_kids(state, level, depth, mid, hi) + uts_kids(state, level, depth, lo, mid);
}

static long uts_node(uint64_t state, int level, int depth) {
    int k = bench_uts_children(state, level, depth);
    return 1 + (k ? uts_kids(state, level, depth, 0, k) : 0);
}

static long uts(bench_pool *pool, uint64_t root, int depth) {
    (void)pool;
    return uts_node(root, 0, depth);
}

/* The parallel programs' recursion, without the fork. */
static void msort_rec(int *a, int *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        bench_msort_leaf(a, tmp, n);
        return;
    }
    size_t h = n / 2;
    msort_rec(a, tmp, h, cutoff);
    msort_rec(a + h, tmp + h, n - h, cutoff);
    bench_merge(a, h, n, tmp);
}

static void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
    (void)pool;
    msort_rec(a, tmp, n, cutoff);
}

static void pieces(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
    (void)pool;
    for (size_t i = 0; i < n; i++)
        fn(i, arg);
}

/* Nodes in index order: a topological order of both shapes. */
static void graph(bench_pool *pool, int shape, size_t n, bench_piece_fn *fn, void *arg,
                  unsigned runs) {
    (void)pool, (void)shape;
    for (unsigned r = 0; r < runs; r++)
        for (size_t i = 0; i < n; i++)
            fn(i, arg);
}

/* The algorithms: std::sort and std::inclusive_scan, where the program is
 * built with a C++ compiler (bench/CMakeLists.txt). */
#ifdef BENCH_STD_ALGORITHMS
static void sort(bench_pool *pool, uint64_t *a, size_t n) {
    (void)pool;
    bench_std_sort(a, n);
}

static void scan(bench_pool *pool, const uint64_t *in, uint64_t *out, size_t n) {
    (void)pool;
    bench_std_scan(in, out, n);
}
#define STD_ALGORITHMS .sort = sort, .scan = scan
#else
#define STD_ALGORITHMS .sort = NULL, .scan = NULL
#endif

static const bench_system serial = {.name = "serial",
                                    BENCH_SYSTEM_COMMON,
                                    .jobs = pieces,
                                    .graph = graph,
                                    .range = range,
                                    .pi = pi,
                                    .knapsack = knapsack,
                                    .uts = uts,
                                    STD_ALGORITHMS};

/* serial-noinline: fib's second reference, of the parallel programs' shape:
 * one call per node, each node calling itself twice. fib_rec above is the
 * plain recursion as the compiler likes it: gcc inlines it into itself a few
 * levels deep and turns the second call into a loop, so it makes a fraction
 * of the calls. No parallel fib can be compiled that way (the join stands
 * between the calls), so T/Ts against it mixes the scheduler's cost with the
 * compiler's; against this one, (T - Ts) / forks is the forks' cost alone.
 * Only fib: the driver prints nothing for the NULL entries.
 *
 * noinline: no copy of the recursion inlined into itself. That alone is not
 * enough: gcc (tail recursion with an accumulator) and clang (TailCallElim)
 * would still turn the second call, whose result is only added to the
 * first's, into a loop. The empty asm makes y opaque between that call and
 * the addition, which both transformations need; it emits no instruction. */
__attribute__((noinline)) static long fib_rec_noinline(int n) {
    if (n < 2)
        return n;
    long x = fib_rec_noinline(n - 1);
    long y = fib_rec_noinline(n - 2);
    __asm__("" : "+r"(y));
    return x + y;
}

static long fib_noinline(bench_pool *pool, int n) {
    (void)pool;
    return fib_rec_noinline(n);
}

static const bench_system serial_noinline = {
    .name = "serial-noinline", .create = create, .destroy = destroy, .fib = fib_noinline};

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &serial : i == 1 ? &serial_noinline : NULL;
}

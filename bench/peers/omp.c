/* SPDX-License-Identifier: MIT */
/* omp.c: the OpenMP peer, one source for two runtimes: gcc + libgomp
 * ("gomp") and clang + LLVM's libomp ("libomp"). Forks are `omp task` +
 * `taskwait` (the first half is a task, the second runs inline, as a join);
 * loops are `omp for`; jobs are tasks created in a `single` region.
 *
 * OpenMP has no pool that a thread outside it can submit to, and no
 * "run this in the pool and wait" call. The most faithful equivalents:
 *  - sporadic (outside()/submit()): a parallel region of threads + 1 threads
 *    whose `single` thread plays the outside thread: it sleeps on absolute
 *    deadlines and creates one `omp task` per job; the other `threads`
 *    threads wait at the region's closing barrier, where they run the tasks
 *    (and spin or sleep as the runtime's wait policy decides, which is what
 *    we measure). The submitter never runs a job itself while sleeping, so
 *    `threads` threads serve the jobs, as with the other systems.
 *  - roundtrip: an empty `parallel` region of `threads` threads from the
 *    main thread: the cheapest way to get code run by the team and waited
 *    for. The main thread is the team's master, so it takes part, where the
 *    other systems hand the job to a pool thread and block.
 * The default wait policies are kept (run.sh unsets OMP_WAIT_POLICY,
 * GOMP_SPINCOUNT and KMP_BLOCKTIME): they are what a user gets.
 */
#include "bench.h"

#include <omp.h>

#ifndef BENCH_OMP_NAME
#ifdef __clang__
#define BENCH_OMP_NAME "libomp"
#else
#define BENCH_OMP_NAME "gomp"
#endif
#endif

/* LLVM's libomp 14 fails an assertion (kmp_alloc.cpp:2169) in about one run
 * in three when several threads each run parallel regions of their own at
 * once, as the pools workload does; libgomp does not. */
#ifdef __clang__
#define BENCH_OMP_ONE_CALLER 1
#else
#define BENCH_OMP_ONE_CALLER 0
#endif

struct bench_pool {
    int threads;
};

static bench_pool *create(const bench_system *sys, unsigned threads, unsigned flags) {
    (void)sys;
    (void)flags;
    bench_pool *pool = malloc(sizeof *pool);
    if (!pool)
        bench_die("malloc", "out of memory");
    pool->threads = (int)threads;
    return pool;
}

static void destroy(bench_pool *pool) {
    free(pool);
}

static long fib_rec(int n) {
    if (n < 2)
        return n;
    long x, y;
#pragma omp task shared(x) firstprivate(n)
    x = fib_rec(n - 1);
    y = fib_rec(n - 2);
#pragma omp taskwait
    return x + y;
}

static long fib(bench_pool *pool, int n) {
    long r = 0;
#pragma omp parallel num_threads(pool->threads)
#pragma omp single
    r = fib_rec(n);
    return r;
}

static void loop(bench_pool *pool, int *a, size_t n) {
#pragma omp parallel for simd num_threads(pool->threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] += 1;
}

/* The loop workload's static schedule, one index per call of fn. */
static void range(bench_pool *pool, size_t n, bench_range_fn *fn, void *arg) {
#pragma omp parallel for num_threads(pool->threads) schedule(static)
    for (size_t i = 0; i < n; i++)
        fn(i, i + 1, arg);
}

static long nq_range(const bench_nq *s, int lo, int hi);

static long nq_board(const bench_nq *s) {
    return nq_range(s, 0, s->ncand);
}

/* Solutions below candidates [lo, hi) of board s: halve, fork, sum. */
static long nq_range(const bench_nq *s, int lo, int hi) {
    if (hi - lo == 1)
        return bench_nq_place(s, lo, nq_board);
    int mid = lo + (hi - lo) / 2;
    long x, y;
#pragma omp task shared(x) firstprivate(s, lo, mid)
    x = nq_range(s, lo, mid);
    y = nq_range(s, mid, hi);
#pragma omp taskwait
    return x + y;
}

static long nqueens(bench_pool *pool, int n) {
    bench_nq root;
    bench_nq_root(&root, n);
    long r = 0;
#pragma omp parallel num_threads(pool->threads)
#pragma omp single
    r = root.ncand ? nq_board(&root) : 0;
    return r;
}

static void ms_rec(int *a, int *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        bench_msort_leaf(a, tmp, n);
        return;
    }
    size_t h = n / 2;
#pragma omp task firstprivate(a, tmp, h, cutoff)
    ms_rec(a, tmp, h, cutoff);
    ms_rec(a + h, tmp + h, n - h, cutoff);
#pragma omp taskwait
    bench_merge(a, h, n, tmp);
}

static void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
#pragma omp parallel num_threads(pool->threads)
#pragma omp single
    ms_rec(a, tmp, n, cutoff);
}

/* dynamic,1: one index per grab, the OpenMP spelling of "pieces of one". */
static void pieces(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
#pragma omp parallel for num_threads(pool->threads) schedule(dynamic, 1)
    for (size_t i = 0; i < n; i++)
        fn(i, arg);
}

static void jobs(bench_pool *pool, size_t n, bench_piece_fn *fn, void *arg) {
#pragma omp parallel num_threads(pool->threads)
#pragma omp single
    for (size_t i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
        fn(i, arg);
    }
}

static void outside(bench_pool *pool, bench_job_fn *fn, void *arg) {
#pragma omp parallel num_threads(pool->threads + 1)
#pragma omp single
    fn(arg);
}

/* Called by outside()'s single thread, inside the region. */
static void submit(bench_pool *pool, bench_job_fn *fn, void *arg) {
    (void)pool;
#pragma omp task firstprivate(fn, arg)
    fn(arg);
}

static void roundtrip(bench_pool *pool) {
#pragma omp parallel num_threads(pool->threads)
    { __asm__ volatile("" ::: "memory"); }
}

/* Tasks with depend clauses, created anew each run by one thread of a
 * parallel region (OpenMP has no graph to build once). The wide graph's sink
 * depends on every middle node through an iterator (OpenMP 5.0). */
static void graph(bench_pool *pool, int shape, size_t n, bench_piece_fn *fn, void *arg,
                  unsigned runs) {
    char *dep = calloc(n, 1);
    if (!dep)
        bench_die("calloc", "out of memory");
#pragma omp parallel num_threads(pool->threads)
#pragma omp single
    for (unsigned r = 0; r < runs; r++) {
#pragma omp task depend(out : dep[0]) firstprivate(fn, arg)
        fn(0, arg);
        for (size_t i = 1; i + 1 < n; i++) {
            if (shape == BENCH_GRAPH_DEEP) {
#pragma omp task depend(in : dep[i - 1]) depend(out : dep[i]) firstprivate(fn, arg, i)
                fn(i, arg);
            } else {
#pragma omp task depend(in : dep[0]) depend(out : dep[i]) firstprivate(fn, arg, i)
                fn(i, arg);
            }
        }
        size_t last = n - 1;
        if (shape == BENCH_GRAPH_DEEP) {
#pragma omp task depend(in : dep[last - 1]) firstprivate(fn, arg, last)
            fn(last, arg);
        } else {
#pragma omp task depend(iterator(j = 1 : last), in : dep[j]) firstprivate(fn, arg, last)
            fn(last, arg);
        }
#pragma omp taskwait
    }
    free(dep);
}

static const bench_system omp_system = {.name = BENCH_OMP_NAME,
                                        .one_caller = BENCH_OMP_ONE_CALLER,
                                        BENCH_SYSTEM_COMMON,
                                        .jobs = jobs,
                                        .outside = outside,
                                        .submit = submit,
                                        .roundtrip = roundtrip,
                                        .graph = graph,
                                        .range = range};

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &omp_system : NULL;
}

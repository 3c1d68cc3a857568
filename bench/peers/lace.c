/* SPDX-License-Identifier: MIT */
/* peers/lace.c: Lace (a C work-stealing library whose tasks pass their
 * arguments and results in registers), for the fork-join workloads only:
 * fib, nqueens, msort, pi, knapsack and uts, each fork a SPAWN, the other
 * half a CALL, then a SYNC, as Lace's own benchmarks write them. Not in the Debian archive:
 * bench/run.sh builds this program only when it is given a Lace source
 * tree (--lace DIR or LACE_DIR), against the library built from it.
 *
 * Threads: Lace runs its tasks on its workers and the thread that calls RUN
 * waits, so at T threads it has T workers (as weft's caller that waits at
 * one thread). Lace is one global runtime: create starts it, destroy stops
 * it, so workloads that keep several pools skip it (one_caller). */
#include "bench.h"

#include <lace.h>

static bench_pool *create(const struct bench_system *sys, unsigned threads, unsigned flags) {
    (void)sys;
    (void)flags;
    lace_start(threads, 0); /* default deque size */
    return (bench_pool *)1; /* one runtime per process: no handle */
}

static void destroy(bench_pool *pool) {
    (void)pool;
    lace_stop();
}

TASK_1(long, lace_fib, int, n) {
    if (n < 2)
        return n;
    SPAWN(lace_fib, n - 1);
    long k = CALL(lace_fib, n - 2);
    long m = SYNC(lace_fib);
    return m + k;
}

static long fib(bench_pool *pool, int n) {
    (void)pool;
    return RUN(lace_fib, n);
}

/* Solutions below candidates [lo, hi) of board s: halve, fork, sum. */
TASK_3(long, lace_nq, const bench_nq *, s, int, lo, int, hi) {
    if (hi - lo == 1) {
        bench_nq child;
        long k = bench_nq_leaf(s, lo, &child);
        return k >= 0 ? k : CALL(lace_nq, &child, 0, child.ncand);
    }
    int mid = lo + (hi - lo) / 2;
    SPAWN(lace_nq, s, mid, hi);
    long a = CALL(lace_nq, s, lo, mid);
    return a + SYNC(lace_nq);
}

static long nqueens(bench_pool *pool, int n) {
    (void)pool;
    bench_nq root;
    bench_nq_root(&root, n);
    return root.ncand > 0 ? RUN(lace_nq, &root, 0, root.ncand) : 0;
}

VOID_TASK_4(lace_ms, int *, a, int *, tmp, size_t, n, size_t, cutoff) {
    if (n <= cutoff) {
        bench_msort_leaf(a, tmp, n);
        return;
    }
    size_t h = n / 2;
    SPAWN(lace_ms, a + h, tmp + h, n - h, cutoff);
    CALL(lace_ms, a, tmp, h, cutoff);
    SYNC(lace_ms);
    bench_merge(a, h, n, tmp);
}

static void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
    (void)pool;
    RUN(lace_ms, a, tmp, n, cutoff);
}

/* Lace's suite (bench.h), as its own benchmarks write pi and knapsack, and
 * uts split as nqueens is. */
TASK_2(long, lace_pi, uint64_t, start, long, cnt) {
    if (cnt == 1)
        return bench_pi_sample(start);
    SPAWN(lace_pi, start, cnt / 2);
    long k = CALL(lace_pi, start + (uint64_t)(cnt / 2), (cnt + 1) / 2);
    return k + SYNC(lace_pi);
}

static long pi(bench_pool *pool, long samples) {
    (void)pool;
    return RUN(lace_pi, 0, samples);
}

TASK_4(long, lace_knap, const bench_item *, e, int, c, int, n, int, v) {
    long best;
    if (bench_knap_leaf(c, n, v, &best))
        return best;
    SPAWN(lace_knap, e + 1, c, n - 1, v);
    long with = CALL(lace_knap, e + 1, c - e->weight, n - 1, v + e->value);
    long without = SYNC(lace_knap);
    return with > without ? with : without;
}

static long knapsack(bench_pool *pool, const bench_knap *k) {
    (void)pool;
    return RUN(lace_knap, k->items, k->capacity, k->n, 0);
}

/* The nodes under children [lo, hi) of a node of `state` at `level`. */
TASK_5(long, lace_uts, uint64_t, state, int, level, int, depth, int, lo, int, hi) {
    if (hi - lo == 1) {
        uint64_t child = bench_uts_child(state, lo);
        int k = bench_uts_children(child, level + 1, depth);
        return 1 + (k ? CALL(lace_uts, child, level + 1, depth, 0, k) : 0);
    }
    int mid = lo + (hi - lo) / 2;
    SPAWN(lace_uts, state, level, depth, mid, hi);
    long k = CALL(lace_uts, state, level, depth, lo, mid);
    return k + SYNC(lace_uts);
}

static long uts(bench_pool *pool, uint64_t root, int depth) {
    (void)pool;
    int k = bench_uts_children(root, 0, depth);
    return 1 + (k ? RUN(lace_uts, root, 0, depth, 0, k) : 0);
}

static const bench_system systems[] = {
    {.name = "lace",
     .one_caller = 1,
     .create = create,
     .destroy = destroy,
     .fib = fib,
     .nqueens = nqueens,
     .msort = msort,
     .pi = pi,
     .knapsack = knapsack,
     .uts = uts},
};

const bench_system *bench_system_get(unsigned i) {
    return i < sizeof systems / sizeof systems[0] ? &systems[i] : NULL;
}

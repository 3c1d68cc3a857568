/* SPDX-License-Identifier: MIT */
/* sys_weft_cpp.cpp: weft through its C++ front end (include/weft.hpp), for
 * the fork-join workloads (every fork a weft::join of two lambdas that
 * return their results, as a C++ user writes it) and the algorithms
 * (weft::sort, weft::inclusive_scan); and fib as a typed task
 * (weft-cpp-task). The pool is weft's default
 * configuration ("weft" in sys_weft.c): at `threads` threads, threads - 1
 * workers and the calling thread in a caller slot; one worker, and a caller
 * that only waits, at one thread. */
#include "bench.h"

#include <cstring>

#include <weft.hpp>

namespace {

bench_pool *create(const bench_system *, unsigned threads, unsigned flags) {
    (void)flags;
    weft_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.threads = threads > 1 ? threads - 1 : 1;
    cfg.callers_wait = threads == 1;
    cfg.name = "bench";
    weft_pool *pool;
    if (int err = weft_pool_create(&pool, &cfg))
        bench_die("weft_pool_create", std::strerror(err));
    return reinterpret_cast<bench_pool *>(pool);
}

void destroy(bench_pool *pool) {
    if (int err = weft_pool_destroy(reinterpret_cast<weft_pool *>(pool)))
        bench_die("weft_pool_destroy", std::strerror(err));
}

long fib_rec(int n) {
    if (n < 2)
        return n;
    auto [x, y] = weft::join([&] { return fib_rec(n - 1); }, [&] { return fib_rec(n - 2); });
    return x + y;
}

long fib(bench_pool *pool, int n) {
    return weft::run(reinterpret_cast<weft_pool *>(pool), [n] { return fib_rec(n); });
}

/* fib as a typed task, which C++ shares with C: the worker passed along,
 * arguments and result in registers. */
#include "fib_task.h"

long fib_typed(bench_pool *pool, int n) {
    return weft::run(reinterpret_cast<weft_pool *>(pool), [n] { return fib_task(n); });
}

long nq_board(const bench_nq *s);

/* Solutions below candidates [lo, hi) of board s: halve, join, sum. */
long nq_span(const bench_nq *s, int lo, int hi) {
    if (hi - lo == 1)
        return bench_nq_place(s, lo, nq_board);
    int mid = lo + (hi - lo) / 2;
    auto [a, b] =
        weft::join([&] { return nq_span(s, lo, mid); }, [&] { return nq_span(s, mid, hi); });
    return a + b;
}

long nq_board(const bench_nq *s) {
    return nq_span(s, 0, s->ncand);
}

long nqueens(bench_pool *pool, int n) {
    bench_nq root;
    bench_nq_root(&root, n);
    if (root.ncand == 0)
        return 0;
    return weft::run(reinterpret_cast<weft_pool *>(pool), [&] { return nq_board(&root); });
}

void ms_rec(int *a, int *tmp, size_t n, size_t cutoff) {
    if (n <= cutoff) {
        bench_msort_leaf(a, tmp, n);
        return;
    }
    size_t h = n / 2;
    weft::join([&] { ms_rec(a, tmp, h, cutoff); }, [&] { ms_rec(a + h, tmp + h, n - h, cutoff); });
    bench_merge(a, h, n, tmp);
}

void msort(bench_pool *pool, int *a, int *tmp, size_t n, size_t cutoff) {
    weft::run(reinterpret_cast<weft_pool *>(pool), [&] { ms_rec(a, tmp, n, cutoff); });
}

/* The algorithms, as a C++ user calls them. */
void sort(bench_pool *pool, uint64_t *a, size_t n) {
    weft::sort(reinterpret_cast<weft_pool *>(pool), a, a + n);
}

void scan(bench_pool *pool, const uint64_t *in, uint64_t *out, size_t n) {
    weft::inclusive_scan(reinterpret_cast<weft_pool *>(pool), in, in + n, out);
}

bench_system make_system() {
    bench_system s{}; /* every workload this system lacks: skipped */
    s.name = "weft-cpp";
    s.create = create;
    s.destroy = destroy;
    s.fib = fib;
    s.nqueens = nqueens;
    s.msort = msort;
    s.sort = sort;
    s.scan = scan;
    return s;
}

const bench_system weft_cpp = make_system();

bench_system make_task_system() {
    bench_system s{};
    s.name = "weft-cpp-task";
    s.create = create;
    s.destroy = destroy;
    s.fib = fib_typed;
    return s;
}

const bench_system weft_cpp_task = make_task_system();

} // namespace

const bench_system *bench_system_get(unsigned i) {
    return i == 0 ? &weft_cpp : i == 1 ? &weft_cpp_task : nullptr;
}

/* SPDX-License-Identifier: MIT */
/* wl_fork.c: the fork-join workloads, fib30, fib35, nqueens12 and msort: one
 * timed call on a new pool, its result checked; and the mergesort's
 * sequential pieces every system calls (bench.h).
 */
#include "driver.h"

#define MSORT_SEED 0x9e3779b97f4a7c15ull

/* ---- mergesort pieces (bench.h) ---------------------------------------- */

#define INSERTION_MAX 16

static void insertion_sort(int *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        int v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

void bench_merge(int *a, size_t mid, size_t n, int *tmp) {
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        tmp[k++] = a[j] < a[i] ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

void bench_msort_leaf(int *a, int *tmp, size_t n) {
    if (n <= INSERTION_MAX) {
        insertion_sort(a, n);
        return;
    }
    size_t h = n / 2;
    bench_msort_leaf(a, tmp, h);
    bench_msort_leaf(a + h, tmp + h, n - h);
    bench_merge(a, h, n, tmp);
}

/* ---- fib, nqueens, msort ------------------------------------------------ */

long fib_value(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* On a new pool: a warm-up call fn(warm) checked against warm_ref, then one
 * timed call fn(n), whose result goes to *r. Wall seconds of the timed call. */
static double time_one_call(const run_ctx *c, long (*fn)(bench_pool *, int), int warm,
                            long warm_ref, int n, long *r) {
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    check(c, fn(pool, warm) == warm_ref, "wrong warm-up result");
    uint64_t t0 = bench_now_ns();
    *r = fn(pool, n);
    double wall = 1e-9 * (double)(bench_now_ns() - t0);
    c->sys->destroy(pool);
    return wall;
}

static void fib_run(const run_ctx *c, int n) {
    if (!c->sys->fib)
        return;
    int warm = n < 20 ? n : 20;
    long r;
    double wall = time_one_call(c, c->sys->fib, warm, fib_value(warm), n, &r);
    check(c, r == fib_value(n), "wrong fib value");
    emit_begin(c);
    bench_json_num("n", n);
    bench_json_num("wall_s", wall);
    bench_json_num("tasks", (double)(2 * fib_value(n + 1) - 1)); /* calls of fib() */
    bench_json_end();
}

void wl_fib30(const run_ctx *c) {
    fib_run(c, c->sz->fib30);
}

void wl_fib35(const run_ctx *c) {
    fib_run(c, c->sz->fib35);
}

static long nqueens_ref(int n) {
    static const long counts[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712};
    return n >= 0 && n < (int)(sizeof counts / sizeof counts[0]) ? counts[n] : -1;
}

void wl_nqueens(const run_ctx *c) {
    if (!c->sys->nqueens)
        return;
    int n = c->sz->nqueens;
    long r;
    double wall = time_one_call(c, c->sys->nqueens, 6, nqueens_ref(6), n, &r);
    check(c, r == nqueens_ref(n), "wrong number of solutions");
    emit_begin(c);
    bench_json_num("n", n);
    bench_json_num("wall_s", wall);
    bench_json_num("solutions", (double)r);
    bench_json_end();
}

static uint64_t fill_random(int *a, size_t n) {
    uint64_t x = MSORT_SEED, sum = 0;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (int)(x >> 33);
        sum += (uint64_t)a[i];
    }
    return sum;
}

static void check_sorted(const run_ctx *c, const int *a, size_t n, uint64_t sum) {
    uint64_t s = n ? (uint64_t)a[0] : 0;
    for (size_t i = 1; i < n; i++) {
        check(c, a[i - 1] <= a[i], "array not sorted");
        s += (uint64_t)a[i];
    }
    check(c, s == sum, "sorted array is not a permutation of the input");
}

void wl_msort(const run_ctx *c) {
    if (!c->sys->msort)
        return;
    size_t n = c->sz->msort_n, cutoff = c->sz->msort_cutoff;
    int *a = xmalloc(n * sizeof *a), *tmp = xmalloc(n * sizeof *tmp);
    memset(tmp, 0, n * sizeof *tmp);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    size_t warm = n < 100000 ? n : 100000;
    uint64_t sum = fill_random(a, warm);
    c->sys->msort(pool, a, tmp, warm, cutoff);
    check_sorted(c, a, warm, sum);
    sum = fill_random(a, n);
    uint64_t t0 = bench_now_ns();
    c->sys->msort(pool, a, tmp, n, cutoff);
    double wall = 1e-9 * (double)(bench_now_ns() - t0);
    c->sys->destroy(pool);
    check_sorted(c, a, n, sum);
    free(a);
    free(tmp);
    emit_begin(c);
    bench_json_num("n", (double)n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

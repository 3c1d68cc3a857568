/* SPDX-License-Identifier: MIT */
/* wl_lace.c: Lace's own fork-join benchmarks beside fib and nqueens: pi,
 * knapsack and uts (bench.h has their kernels). One timed call on a new
 * pool after a small warm-up call, its result checked against a serial
 * walk of the same tree, computed once per process and not timed.
 */
#include "driver.h"

/* ---- serial references ---------------------------------------------------- */

static long pi_serial(uint64_t start, long cnt) {
    long hits = 0;
    for (long i = 0; i < cnt; i++)
        hits += bench_pi_sample(start + (uint64_t)i);
    return hits;
}

long bench_knap_serial(const bench_item *e, int c, int n, int v) {
    long best;
    if (bench_knap_leaf(c, n, v, &best))
        return best;
    long without = bench_knap_serial(e + 1, c, n - 1, v);
    long with = bench_knap_serial(e + 1, c - e->weight, n - 1, v + e->value);
    return with > without ? with : without;
}

static long uts_serial(uint64_t state, int level, int depth) {
    long nodes = 1;
    int k = bench_uts_children(state, level, depth);
    for (int i = 0; i < k; i++)
        nodes += uts_serial(bench_uts_child(state, i), level + 1, depth);
    return nodes;
}

/* ---- the knapsack's items --------------------------------------------------- */

static int by_density(const void *a, const void *b) {
    const bench_item *x = a, *y = b;
    /* x before y when x's value per weight is higher: x.v / x.w > y.v / y.w */
    long lhs = (long)x->value * y->weight, rhs = (long)y->value * x->weight;
    return lhs > rhs ? -1 : lhs < rhs;
}

/* n items of value and weight 10..99, densest first (as Lace's input is
 * sorted), and a capacity of half their weight. */
static void knap_input(bench_knap *k, int n) {
    int total = 0;
    k->n = n;
    for (int i = 0; i < n; i++) {
        uint64_t h = bench_mix64(0x6b6e617073616b ^ (uint64_t)i);
        k->items[i].value = 10 + (int)(h % 90);
        k->items[i].weight = 10 + (int)((h >> 32) % 90);
        total += k->items[i].weight;
    }
    qsort(k->items, (size_t)n, sizeof k->items[0], by_density);
    k->capacity = total / 2;
}

/* ---- the workloads ---------------------------------------------------------- */

#define UTS_ROOT 0x75747331ull /* "uts1" */

enum lace_kind { PI, KNAPSACK, UTS };

typedef struct lace_call {
    const run_ctx *c;
    enum lace_kind kind;
    const bench_knap *knap; /* KNAPSACK */
    long n;                 /* PI: samples; UTS: depth */
} lace_call;

static long call_workload(bench_pool *pool, const lace_call *w) {
    const bench_system *s = w->c->sys;
    switch (w->kind) {
    case PI:
        return s->pi(pool, w->n);
    case KNAPSACK:
        return s->knapsack(pool, w->knap);
    default:
        return s->uts(pool, UTS_ROOT, (int)w->n);
    }
}

/* On a new pool: the warm-up call, checked, then one timed call, checked. */
static void timed_call(const lace_call *warm, long warm_ref, const lace_call *w, long ref,
                       const char *size_name) {
    const run_ctx *c = w->c;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    check(c, call_workload(pool, warm) == warm_ref, "wrong warm-up result");
    uint64_t t0 = bench_now_ns();
    long r = call_workload(pool, w);
    double wall = 1e-9 * (double)(bench_now_ns() - t0);
    c->sys->destroy(pool);
    check(c, r == ref, "wrong result");
    emit_begin(c);
    bench_json_num(size_name, (double)(w->knap ? w->knap->n : w->n));
    bench_json_num("wall_s", wall);
    bench_json_num("result", (double)r);
    bench_json_end();
}

void wl_pi(const run_ctx *c) {
    if (!c->sys->pi)
        return;
    static long ref = -1, warm_ref = -1;
    long n = c->sz->pi_samples, warm = n / 64 > 0 ? n / 64 : 1;
    if (ref < 0) {
        ref = pi_serial(0, n);
        warm_ref = pi_serial(0, warm);
    }
    lace_call wc = {c, PI, NULL, warm}, tc = {c, PI, NULL, n};
    timed_call(&wc, warm_ref, &tc, ref, "samples");
}

void wl_knapsack(const run_ctx *c) {
    if (!c->sys->knapsack)
        return;
    static bench_knap k, warm_k;
    static long ref = -1, warm_ref = -1;
    if (ref < 0) {
        knap_input(&k, c->sz->knap_items);
        knap_input(&warm_k, c->sz->knap_items - 6);
        ref = bench_knap_serial(k.items, k.capacity, k.n, 0);
        warm_ref = bench_knap_serial(warm_k.items, warm_k.capacity, warm_k.n, 0);
    }
    lace_call wc = {c, KNAPSACK, &warm_k, 0}, tc = {c, KNAPSACK, &k, 0};
    timed_call(&wc, warm_ref, &tc, ref, "items");
}

void wl_uts(const run_ctx *c) {
    if (!c->sys->uts)
        return;
    static long ref = -1, warm_ref = -1;
    int depth = c->sz->uts_depth, warm = depth - 3;
    if (ref < 0) {
        ref = uts_serial(UTS_ROOT, 0, depth);
        warm_ref = uts_serial(UTS_ROOT, 0, warm);
    }
    lace_call wc = {c, UTS, NULL, warm}, tc = {c, UTS, NULL, depth};
    timed_call(&wc, warm_ref, &tc, ref, "depth");
}

/* SPDX-License-Identifier: MIT */
/* wl_loop.c: the loop workloads, parallel loops with the system's default
 * partitioner timed over repeated calls on one pool: loop, trivial bodies;
 * uneven, an eighth of the indices holding most of the work.
 */
#include "driver.h"

void wl_loop(const run_ctx *c) {
    if (!c->sys->loop)
        return;
    size_t n = c->sz->loop_n;
    int *a = xmalloc(n * sizeof *a);
    memset(a, 0, n * sizeof *a);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    c->sys->loop(pool, a, n); /* warm-up: threads started, pages touched */
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < c->sz->loop_reps; r++)
        c->sys->loop(pool, a, n);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / c->sz->loop_reps;
    c->sys->destroy(pool);
    for (size_t i = 0; i < n; i++)
        check(c, a[i] == c->sz->loop_reps + 1, "an index was not visited exactly once per call");
    free(a);
    emit_begin(c);
    bench_json_num("n", (double)n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

typedef struct uneven {
    uint32_t *x;
    int *a;
    size_t n;
} uneven;

static void uneven_body(size_t begin, size_t end, void *arg) {
    const uneven *u = arg;
    bench_uneven_kernel(u->x, u->a, u->n, begin, end);
}

void wl_uneven(const run_ctx *c) {
    if (!c->sys->range)
        return;
    uneven u = {.n = c->sz->uneven_n};
    u.x = xmalloc(u.n * sizeof *u.x);
    u.a = xmalloc(u.n * sizeof *u.a);
    memset(u.a, 0, u.n * sizeof *u.a);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    c->sys->range(pool, u.n, uneven_body, &u); /* warm-up */
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < c->sz->uneven_reps; r++)
        c->sys->range(pool, u.n, uneven_body, &u);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / c->sz->uneven_reps;
    c->sys->destroy(pool);
    for (size_t i = 0; i < u.n; i++)
        check(c, u.a[i] == c->sz->uneven_reps + 1,
              "an index was not visited exactly once per call");
    free(u.x);
    free(u.a);
    emit_begin(c);
    bench_json_num("n", (double)u.n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

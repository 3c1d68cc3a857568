/* SPDX-License-Identifier: MIT */
/* wl_loop.c: the loop workloads, parallel loops with the system's default
 * partitioner timed over repeated calls on one pool: loop, trivial bodies;
 * uneven, an eighth of the indices holding most of the work.
 */
#include "driver.h"

/* One loop of a workload over a[0..n), which counts each index's visits. */
typedef struct loop_run {
    const run_ctx *c;
    int *a;
    size_t n;
    uint32_t *x; /* uneven: each index's chain end */
} loop_run;

typedef void loop_call(bench_pool *pool, loop_run *l);

/* reps calls of `call` on one pool after a warm-up (threads started, pages
 * touched); checks that every call visited each index once and prints the
 * wall time a call. */
static void time_calls(loop_run *l, int reps, loop_call *call) {
    const run_ctx *c = l->c;
    l->a = xmalloc(l->n * sizeof *l->a);
    memset(l->a, 0, l->n * sizeof *l->a);
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    call(pool, l);
    uint64_t t0 = bench_now_ns();
    for (int r = 0; r < reps; r++)
        call(pool, l);
    double wall = 1e-9 * (double)(bench_now_ns() - t0) / reps;
    c->sys->destroy(pool);
    for (size_t i = 0; i < l->n; i++)
        check(c, l->a[i] == reps + 1, "an index was not visited exactly once per call");
    free(l->a);
    emit_begin(c);
    bench_json_num("n", (double)l->n);
    bench_json_num("wall_s", wall);
    bench_json_end();
}

static void trivial_loop(bench_pool *pool, loop_run *l) {
    l->c->sys->loop(pool, l->a, l->n);
}

void wl_loop(const run_ctx *c) {
    if (!c->sys->loop)
        return;
    loop_run l = {.c = c, .n = c->sz->loop_n};
    time_calls(&l, c->sz->loop_reps, trivial_loop);
}

static void uneven_body(size_t begin, size_t end, void *arg) {
    const loop_run *l = arg;
    bench_uneven_kernel(l->x, l->a, l->n, begin, end);
}

static void uneven_loop(bench_pool *pool, loop_run *l) {
    l->c->sys->range(pool, l->n, uneven_body, l);
}

void wl_uneven(const run_ctx *c) {
    if (!c->sys->range)
        return;
    loop_run l = {.c = c, .n = c->sz->uneven_n};
    l.x = xmalloc(l.n * sizeof *l.x);
    time_calls(&l, c->sz->uneven_reps, uneven_loop);
    free(l.x);
}

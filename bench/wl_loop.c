/* SPDX-License-Identifier: MIT */
/* wl_loop.c: the loop workload, a parallel loop of trivial bodies (the
 * system's default partitioner), timed over repeated calls on one pool.
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

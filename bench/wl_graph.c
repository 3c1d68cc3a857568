/* SPDX-License-Identifier: MIT */
/* wl_graph.c: the graph workload, a wide and a deep task graph, each built
 * once and run many times.
 */
#include "driver.h"

#include <stdatomic.h>

#define GRAPH_NODES 256
#define GRAPH_RUNS  50

typedef struct graph_work {
    uint64_t ns;
    _Atomic unsigned long count;
} graph_work;

static void graph_node(size_t i, void *arg) {
    (void)i;
    graph_work *w = arg;
    bench_spin_ns(w->ns);
    atomic_fetch_add_explicit(&w->count, 1, memory_order_relaxed);
}

static void graph_shape(const run_ctx *c, bench_pool *pool, int shape, uint64_t node_ns,
                        const char *key) {
    graph_work w = {node_ns, 0};
    c->sys->graph(pool, shape, GRAPH_NODES, graph_node, &w, 2); /* warm-up */
    bench_span span = bench_span_start();
    c->sys->graph(pool, shape, GRAPH_NODES, graph_node, &w, GRAPH_RUNS);
    double wall, cpu;
    bench_span_stop(&span, &wall, &cpu);
    check(c, atomic_load(&w.count) == (unsigned long)GRAPH_NODES * (GRAPH_RUNS + 2),
          "a graph node did not run exactly once per run");
    bench_json_num(key, 1e6 * wall / GRAPH_RUNS);
}

void wl_graph(const run_ctx *c) {
    if (!c->sys->graph)
        return;
    bench_pool *pool = c->sys->create(c->sys, c->threads, 0);
    emit_begin(c);
    bench_json_num("nodes", GRAPH_NODES);
    graph_shape(c, pool, BENCH_GRAPH_WIDE, 20 * US, "wide_us_per_run"); /* 20 us nodes */
    graph_shape(c, pool, BENCH_GRAPH_DEEP, 2 * US, "deep_us_per_run");  /* 2 us nodes */
    bench_json_end();
    c->sys->destroy(pool);
}

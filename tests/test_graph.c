/* SPDX-License-Identifier: MIT */
/* Task graphs: every node once per run, after all its predecessors, many
 * runs of the same graph; wide, deep and random graphs; cycles; misuse. */
#include <errno.h>
#include <stdatomic.h>

#include "check.h"
#include "weft.h"

typedef struct record {
    _Atomic long clock; /* completion order */
    _Atomic long started[512], finished[512], runs[512];
} record;

typedef struct node_arg {
    record *rec;
    int id;
} node_arg;

static void visit(void *arg) {
    node_arg *a = arg;
    atomic_store(&a->rec->started[a->id], atomic_fetch_add(&a->rec->clock, 1) + 1);
    atomic_fetch_add(&a->rec->runs[a->id], 1);
    atomic_store(&a->rec->finished[a->id], atomic_fetch_add(&a->rec->clock, 1) + 1);
}

typedef struct built {
    weft_graph *g;
    weft_node *nodes[512];
    node_arg args[512];
    int n;
    int edges[4096][2];
    int nedges;
} built;

static void build(built *b, record *rec, int n) {
    CHECK_EQ(weft_graph_create(&b->g), 0);
    b->n = n;
    b->nedges = 0;
    for (int i = 0; i < n; i++) {
        b->args[i] = (node_arg){rec, i};
        CHECK_EQ(weft_graph_add(b->g, visit, &b->args[i], &b->nodes[i]), 0);
    }
}

static void edge(built *b, int from, int to) {
    CHECK_EQ(weft_graph_edge(b->g, b->nodes[from], b->nodes[to]), 0);
    b->edges[b->nedges][0] = from;
    b->edges[b->nedges][1] = to;
    b->nedges++;
}

/* Run `runs` times; after each, every node ran once more and finished before
 * each of its successors started. */
static void run_and_check(built *b, record *rec, weft_pool *pool, int runs) {
    for (int r = 1; r <= runs; r++) {
        CHECK_EQ(weft_graph_run(b->g, pool), 0);
        for (int i = 0; i < b->n; i++)
            CHECK_EQ(atomic_load(&rec->runs[i]), r);
        for (int k = 0; k < b->nedges; k++)
            CHECK(atomic_load(&rec->finished[b->edges[k][0]]) <
                  atomic_load(&rec->started[b->edges[k][1]]));
    }
}

TEST(diamond_runs_in_order_every_time) {
    static record rec;
    static built b;
    build(&b, &rec, 4);
    edge(&b, 0, 1), edge(&b, 0, 2), edge(&b, 1, 3), edge(&b, 2, 3);
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 3}), 0);
    run_and_check(&b, &rec, pool, scaled(200));
    CHECK_EQ(weft_pool_destroy(pool), 0);
    weft_graph_destroy(b.g);
}

TEST(wide_and_deep) {
    static record wide, deep;
    static built bw, bd;
    build(&bw, &wide, 500); /* independent: run in parallel */
    build(&bd, &deep, 300); /* a chain */
    for (int i = 0; i + 1 < 300; i++)
        edge(&bd, i, i + 1);
    run_and_check(&bw, &wide, NULL, scaled(40)); /* default pool, from outside */
    run_and_check(&bd, &deep, NULL, scaled(40));
    weft_graph_destroy(bw.g);
    weft_graph_destroy(bd.g);
}

static void run_random(void *arg) {
    built *b = arg;
    for (int r = 0; r < scaled(20); r++)
        CHECK_EQ(weft_graph_run(b->g, NULL), 0); /* NULL on a worker: its own pool */
}

TEST(random_dags_on_an_oversubscribed_pool) {
    static record rec;
    static built b;
    build(&b, &rec, 200);
    unsigned rng = 99;
    for (int k = 0; k < 1500; k++) {
        rng = rng * 1103515245u + 12345u;
        int from = (int)((rng >> 8) % 199);
        rng = rng * 1103515245u + 12345u;
        int to = from + 1 + (int)((rng >> 8) % (unsigned)(199 - from));
        edge(&b, from, to);
    }
    weft_pool *pool;
    CHECK_EQ(weft_pool_create(&pool, &(weft_config){.threads = 32}), 0);
    run_and_check(&b, &rec, pool, scaled(40));
    weft_run(pool, run_random, &b); /* run from a worker: it participates */
    CHECK_EQ(weft_pool_destroy(pool), 0);
    weft_graph_destroy(b.g);
}

TEST(cycles_run_nothing) {
    static record rec;
    static built b;
    build(&b, &rec, 3);
    edge(&b, 0, 1), edge(&b, 1, 2), edge(&b, 2, 1);
    CHECK_EQ(weft_graph_run(b.g, NULL), ELOOP);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(atomic_load(&rec.runs[i]), 0);
    weft_graph_destroy(b.g);
    static record rec2;
    static built self;
    build(&self, &rec2, 1);
    edge(&self, 0, 0);
    CHECK_EQ(weft_graph_run(self.g, NULL), ELOOP);
    CHECK_EQ(atomic_load(&rec2.runs[0]), 0);
    weft_graph_destroy(self.g);
}

static weft_graph *busy_graph;
static _Atomic int busy_result = -1;

static void run_self(void *arg) {
    (void)arg;
    weft_node *n;
    atomic_store(&busy_result, weft_graph_run(busy_graph, NULL) == EBUSY &&
                                   weft_graph_add(busy_graph, run_self, NULL, &n) == EBUSY);
}

TEST(misuse_gets_an_errno) {
    weft_graph *g, *other;
    weft_node *a, *x;
    CHECK_EQ(weft_graph_create(NULL), EINVAL);
    CHECK_EQ(weft_graph_create(&g), 0);
    CHECK_EQ(weft_graph_create(&other), 0);
    CHECK_EQ(weft_graph_run(g, NULL), 0); /* empty: nothing to do */
    CHECK_EQ(weft_graph_add(g, NULL, NULL, &a), EINVAL);
    CHECK_EQ(weft_graph_add(g, run_self, NULL, &a), 0);
    CHECK_EQ(weft_graph_add(other, run_self, NULL, &x), 0);
    CHECK_EQ(weft_graph_edge(g, a, x), EINVAL); /* x belongs to another graph */
    CHECK_EQ(weft_graph_edge(g, a, NULL), EINVAL);
    CHECK_EQ(weft_graph_run(NULL, NULL), EINVAL);
    busy_graph = g;
    CHECK_EQ(weft_graph_run(g, NULL), 0); /* its node tries to run it again */
    CHECK_EQ(atomic_load(&busy_result), 1);
    weft_graph_destroy(g);
    weft_graph_destroy(other);
    weft_graph_destroy(NULL);
}

/* SPDX-License-Identifier: MIT */
/* Task graphs (a context-based job system's): built once, run many times (a renderer runs the
 * same graph every frame).
 *
 * A node is a job with a list of successors and a count of predecessors. A
 * run resets every node's count of unfinished predecessors, submits the nodes
 * that have none, and each node, after its function returns, decrements its
 * successors' counts and submits those that reach zero. Every node owns its
 * job struct, so a run allocates nothing. The run waits on a count latch (one
 * count per node) owned by the thread that runs it: a worker keeps running
 * jobs, an outside caller runs the graph inside the pool (weft_run) and
 * blocks.
 *
 * Before a run, a graph changed since its last check is checked for cycles
 * (Kahn's algorithm); a graph with a cycle returns ELOOP and runs nothing,
 * and its message names a node on the cycle (node_on_cycle).
 *
 * A run is a cancellation group (group.h), made anew by each run: once it is
 * cancelled, the nodes that have not started are skipped but still counted
 * and still release their successors, so the run ends as usual, with nothing
 * but bookkeeping left to do.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/current.h"
#include "core/submit.h"
#include "core/task.h"
#include "core/latch_owner.h"
#include "os/error.h"

struct weft_node {
    weft__job job;     /* first: the job is the node */
    weft_fn *fn;       /* I */
    void *arg;         /* I */
    weft_graph *graph; /* I */
    size_t index;      /* I: its place in nodes, the order weft_graph_add made them in */
    weft_node **succ;  /* successors (built before runs) */
    size_t nsucc, succ_cap;
    unsigned preds;           /* predecessors (edges into this node) */
    _Atomic unsigned waiting; /* A: this run's unfinished predecessors */
};

struct weft_graph {
    weft_node **nodes;
    size_t n, cap;
    bool checked;           /* no change since the last cycle check */
    bool acyclic;           /* result of that check */
    size_t cycle_node;      /* if not acyclic: a node on a cycle (its index) */
    _Atomic bool running;   /* A: a run is in progress (EBUSY) */
    weft_pool *pool;        /* the current run's pool */
    weft__count_latch done; /* the current run: a count per node */
    weft__group group;      /* the current run's */
};

int weft_graph_create(weft_graph **graph) {
    if (!graph)
        return weft__error_set(EINVAL, "graph is NULL");
    weft_graph *g = calloc(1, sizeof *g);
    if (!g)
        return weft__error_set(ENOMEM, "out of memory for the graph");
    atomic_init(&g->running, false);
    *graph = g;
    return 0;
}

void weft_graph_destroy(weft_graph *graph) {
    if (!graph)
        return;
    for (size_t i = 0; i < graph->n; i++) {
        free(graph->nodes[i]->succ);
        free(graph->nodes[i]);
    }
    free(graph->nodes);
    free(graph);
}

/* Grow *array (of `size`-byte elements) to hold one more; 0 or ENOMEM. */
static int reserve(void **array, size_t *cap, size_t n, size_t size) {
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    void *p = realloc(*array, ncap * size);
    if (!p)
        return ENOMEM;
    *array = p;
    *cap = ncap;
    return 0;
}

static void node_execute(weft__job *job);

/* An edit's EBUSY. Relaxed: misuse detection only; edits and runs are not
 * concurrent. */
static int check_not_running(weft_graph *graph) {
    if (atomic_load_explicit(&graph->running, memory_order_relaxed))
        return weft__error_set(EBUSY, "the graph is running");
    return 0;
}

int weft_graph_add(weft_graph *graph, weft_fn *fn, void *arg, weft_node **node) {
    if (!graph || !fn || !node)
        return weft__error_set(EINVAL, "%s is NULL", !graph ? "graph" : !fn ? "fn" : "node");
    int err = check_not_running(graph);
    if (err)
        return err;
    weft_node *nd = NULL;
    if (reserve((void **)&graph->nodes, &graph->cap, graph->n, sizeof *graph->nodes) ||
        !(nd = calloc(1, sizeof *nd)))
        return weft__error_set(ENOMEM, "out of memory for node %zu", graph->n);
    *nd = (weft_node){
        .job.execute = node_execute, .fn = fn, .arg = arg, .graph = graph, .index = graph->n};
    graph->nodes[graph->n++] = nd;
    graph->checked = false;
    *node = nd;
    return 0;
}

int weft_graph_edge(weft_graph *graph, weft_node *before, weft_node *after) {
    if (!graph || !before || !after)
        return weft__error_set(EINVAL, "%s is NULL",
                               !graph    ? "graph"
                               : !before ? "before"
                                         : "after");
    if (before->graph != graph || after->graph != graph)
        return weft__error_set(EINVAL, "%s is a node of another graph",
                               before->graph != graph ? "before" : "after");
    int err = check_not_running(graph);
    if (err)
        return err;
    if (reserve((void **)&before->succ, &before->succ_cap, before->nsucc, sizeof *before->succ))
        return weft__error_set(ENOMEM, "out of memory for an edge from node %zu", before->index);
    before->succ[before->nsucc++] = after;
    after->preds++;
    graph->checked = false;
    return 0;
}

/* After Kahn's algorithm: a node on a cycle, given room for n pointers.
 * Every node left unsorted (waiting > 0) has an unsorted predecessor, so
 * walking from one to such a predecessor never stops, and after n steps
 * the walk is on a cycle (it has seen n + 1 nodes). The smallest index on
 * that cycle is the answer: the same however the walk entered it. */
static size_t node_on_cycle(const weft_graph *g, weft_node **pred) {
    weft_node *nd = NULL;
    /* Relaxed: the counts are the checking thread's alone (check_acyclic). */
    for (size_t i = 0; i < g->n; i++) {
        weft_node *p = g->nodes[i];
        if (!atomic_load_explicit(&p->waiting, memory_order_relaxed))
            continue;
        nd = p;
        for (size_t k = 0; k < p->nsucc; k++)
            pred[p->succ[k]->index] = p; /* an unsorted predecessor of each successor */
    }
    for (size_t i = 0; i < g->n; i++)
        nd = pred[nd->index];
    size_t first = nd->index;
    for (weft_node *m = pred[nd->index]; m != nd; m = pred[m->index])
        first = m->index < first ? m->index : first;
    return first;
}

/* Kahn's algorithm on the static counts: acyclic iff every node gets sorted.
 * 0 or ENOMEM. */
static int check_acyclic(weft_graph *g) {
    if (g->checked)
        return 0;
    weft_node **ready = malloc((g->n ? g->n : 1) * sizeof *ready);
    if (!ready)
        return weft__error_set(ENOMEM, "out of memory for the cycle check of %zu nodes", g->n);
    size_t head = 0, tail = 0;
    /* Relaxed below: one thread (the runner, holding `running`) uses the
     * counts here; a run resets them before any job sees them. */
    for (size_t i = 0; i < g->n; i++) {
        atomic_store_explicit(&g->nodes[i]->waiting, g->nodes[i]->preds, memory_order_relaxed);
        if (g->nodes[i]->preds == 0)
            ready[tail++] = g->nodes[i];
    }
    while (head < tail) {
        weft_node *nd = ready[head++];
        for (size_t k = 0; k < nd->nsucc; k++)
            if (atomic_fetch_sub_explicit(&nd->succ[k]->waiting, 1, memory_order_relaxed) == 1)
                ready[tail++] = nd->succ[k];
    }
    g->acyclic = tail == g->n;
    if (!g->acyclic)
        g->cycle_node = node_on_cycle(g, ready); /* ready's work is done */
    free(ready);
    g->checked = true;
    return 0;
}

/* Run a node; then, of the successors it made ready, run one here next and
 * queue the others (a chain stays on one thread, as a continuation would,
 * instead of bouncing through the deque to an idle thief). */
static void node_execute(weft__job *job) {
    weft_node *nd = (weft_node *)job;
    weft_graph *g = nd->graph;
    weft__worker *w = weft__current_worker(); /* NULL: no pool, the runner itself */
    weft__group *outer = weft__worker_enter(w, &g->group);
    if (w)
        weft__worker_trace_run(w); /* a running slice, named for the run */
    while (nd) {
        if (!weft__group_cancelled(&g->group)) {
            weft_task task; /* each node is a job, with its own events */
            weft_task *outer_task = weft__task_begin(w, &task);
            nd->fn(nd->arg);
            weft__task_end(w, &task, outer_task);
        }
        weft_node *next = NULL;
        for (size_t k = 0; k < nd->nsucc; k++) {
            weft_node *s = nd->succ[k];
            /* Acq_rel: the last predecessor to finish runs or queues s, after
             * all their writes; the job's publication carries them along. */
            if (atomic_fetch_sub_explicit(&s->waiting, 1, memory_order_acq_rel) == 1) {
                if (next)
                    weft__pool_submit(g->pool, &next->job);
                next = s;
            }
        }
        weft__count_latch_decrement(&g->done); /* nd is done; the run may end */
        nd = next;                             /* still counted: the run cannot end before it */
    }
    weft__worker_leave(w, outer); /* touches w only: g may be gone */
}

static void run_inside(void *arg) {
    weft_graph *g = arg;
    weft__worker *w = weft__current_worker();
    g->pool = w ? w->pool : NULL;
    weft__count_latch_init(&g->done, g->n + 1);         /* + one for this submitter */
    weft__group_init(&g->group, w ? w->h.group : NULL); /* entered by each node */
    for (size_t i = 0; i < g->n; i++)
        atomic_store_explicit(&g->nodes[i]->waiting, g->nodes[i]->preds, memory_order_relaxed);
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i]->preds == 0) {
            if (g->pool)
                weft__pool_submit(g->pool, &g->nodes[i]->job);
            else
                node_execute(&g->nodes[i]->job); /* no pool could be created */
        }
    weft__count_latch_decrement(&g->done);
    weft__latch_wait(&g->done.latch);
}

int weft_graph_run(weft_graph *graph, weft_pool *pool) {
    if (!graph)
        return weft__error_set(EINVAL, "graph is NULL");
    if (pool && weft__pool_is_stale(pool))
        return weft__pool_stale_error();
    bool idle = false;
    /* Acquire: the previous run's writes are visible. */
    if (!atomic_compare_exchange_strong_explicit(&graph->running, &idle, true, memory_order_acquire,
                                                 memory_order_relaxed))
        return weft__error_set(EBUSY, "the graph is already running");
    int err = check_acyclic(graph);
    if (!err && !graph->acyclic)
        err = weft__error_set(ELOOP,
                              "the graph has a cycle through node %zu (nodes are numbered "
                              "from 0 in the order weft_graph_add added them)",
                              graph->cycle_node);
    if (!err && graph->n) {
        weft_run(pool, run_inside, graph);
        if (weft__group_cancelled(&graph->group))
            err = weft__error_set(ECANCELED, "the run was cancelled: by weft_cancel in a node, "
                                             "or a group around it");
    } else if (!err && weft__group_cancelled(weft__current_group())) {
        /* an empty run in a cancelled group answers as a full one */
        err = weft__error_set(ECANCELED, "a group around the run was cancelled");
    }
    /* Release: pairs with the next run's acquire. */
    atomic_store_explicit(&graph->running, false, memory_order_release);
    return err;
}

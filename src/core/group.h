/* SPDX-License-Identifier: MIT */
/* Cancellation groups: what weft_cancel cancels and weft_cancelled asks about.
 *
 * A group is a scope, a loop (weft_for), a reduction, a graph run or a run
 * under a cancel source (weft_run_cancellable). It lives in the frame (or
 * the graph) of whoever waits for it, and so outlives every job of it. Each
 * group points at the group its creator was running in, so groups nest; a
 * group counts as cancelled when it or any group around it was cancelled,
 * and is never un-cancelled (a graph's next run makes a new one). A cancel
 * source is a group the caller owns, outside every nest: a run under it
 * points at it too, and its owner may reset it once nothing runs under it.
 *
 * Every worker knows the group of the job it runs now (weft__worker.h.group, include/weft/join.h).
 * A job carries the group it was queued in and sets it while it runs:
 *  - join's B and weft_run's injected job: the group of the thread that
 *    queued them (job.h); a B taken back by its own worker needs nothing,
 *    since the worker is still in that group;
 *  - a scope's jobs: the scope (spawn.c); detached jobs: none;
 *  - graph nodes: the run (graph.c); loop pieces: the loop (loop.c).
 *
 * What cancelling does is decided where work starts: a scope job, a graph
 * node or a loop piece that finds its group cancelled does not run (and a
 * scope spawn is refused). weft_join's two halves always run: they are the
 * running job's own code, which polls weft_cancelled to stop early.
 *
 * A group also names its work for the trace: it has its outer's name, or
 * its own when a call made under a name (weft_trace_name) gives its work a
 * group that only names (name_only, named.c): never cancelled, passed over
 * by weft_cancel and by the groups nested in it. A job's slices carry its
 * group's name.
 *
 * Memory order: the flag is a hint about work not yet started, never a
 * synchronisation point for the program's data: a job that reads a stale
 * false runs as it would have a moment earlier, which cancelling never
 * promised to prevent. But the flag lives in the waiter's frame (a scope's,
 * a loop's), and a canceller outside the group (weft_scope_cancel from
 * another thread) writes it there: the store is release and a load that
 * sees it acquire, so a job that stops, or a piece skipped, because of it
 * ends after the store, and the waiter, whose latch acquires that end,
 * reuses its frame after it too. Where a waiter reports a cancel
 * (weft_graph_run, weft_reduce), the same chain carries the store to it.
 */
#ifndef WEFT_GROUP_H
#define WEFT_GROUP_H

#include <stdbool.h>
#include <stddef.h>

#include "os/atomics.h"

typedef struct weft__group weft__group;

struct weft__group {
    _Atomic bool cancelled; /* A: relaxed (above) */
    weft__group *outer;     /* I: the group its creator ran in, NULL: none */
    /* I: a cancel source's group (weft_run_cancellable), NULL: none. A
     * second way out of the nest: a source may be shared by runs that
     * started in different groups, so it cannot be anyone's outer; its own
     * outer and source are NULL. */
    const weft__group *source;
    const char *name; /* I: the name of its work: its outer's, or its own (named.c) */
    bool name_only;   /* I: a group that only names (named.c) */
};

/* A group nested in a group that only names takes its name and nests in
 * the group around it instead: so no group points at one that only names,
 * which lives in a frame of the named call and may be gone before the
 * nested group's waiter last reads its nest (weft_reduce, weft_graph_run
 * after their run returned). */
static inline void weft__group_init(weft__group *g, weft__group *outer) {
    atomic_init(&g->cancelled, false);
    g->name = outer ? outer->name : NULL;
    g->outer = outer && outer->name_only ? outer->outer : outer;
    g->source = NULL;
    g->name_only = false;
}

/* The name of g's work (NULL: none); g NULL: no group, no name. */
static inline const char *weft__group_name(const weft__group *g) {
    return g ? g->name : NULL;
}

static inline void weft__group_cancel(weft__group *g) {
    atomic_store_explicit(&g->cancelled, true, memory_order_release); /* release: above */
}

/* Was g, or a group around it, or a source of one of them, cancelled?
 * NULL: no group, never. The source pointer shares the flag's line: a
 * group nobody cancels costs the same miss as before. */
static inline bool weft__group_cancelled(const weft__group *g) {
    for (; g; g = g->outer) {
        /* Acquire: pairs with weft__group_cancel's release (above). */
        if (WEFT__UNLIKELY(atomic_load_explicit(&g->cancelled, memory_order_acquire)))
            return true;
        if (WEFT__UNLIKELY(g->source != NULL) &&
            atomic_load_explicit(&g->source->cancelled, memory_order_acquire))
            return true;
    }
    return false;
}

#endif

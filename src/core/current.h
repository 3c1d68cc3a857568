/* SPDX-License-Identifier: MIT */
/* The calling thread's place in weft: the worker it runs as (NULL outside
 * every pool), and the group its work runs in, which the jobs it queues
 * join and which nested work enters and leaves. */
#ifndef WEFT_CURRENT_H
#define WEFT_CURRENT_H

#include "weft.h"

#include "core/group.h"
#include "core/pool.h"
#include "core/worker.h"

/* The worker running on this thread, or NULL outside every pool: the
 * thread-local head pointer of join.h (ABI), whose head is the worker's
 * first member. */
static inline weft__worker *weft__current_worker(void) {
    return (weft__worker *)weft__tls_worker;
}

/* Make w (NULL: none) the worker running on this thread. */
static inline void weft__set_current_worker(weft__worker *w) {
    weft__tls_worker = w ? &w->h : NULL;
}

/* The current worker if it belongs to pool, else NULL. */
static inline weft__worker *weft__worker_of(weft_pool *pool) {
    weft__worker *w = weft__current_worker();
    return w && w->pool == pool ? w : NULL;
}

/* w (NULL: not a worker) enters group for the work it is about to do; returns
 * the group to give back to weft__worker_leave when that work is done. */
static inline weft__group *weft__worker_enter(weft__worker *w, weft__group *group) {
    if (!w)
        return NULL;
    weft__group *outer = w->h.group;
    if (group != outer) {
        weft__worker_retag_begin(w);
        w->h.group = group;
    }
    return outer;
}

static inline void weft__worker_leave(weft__worker *w, weft__group *outer) {
    if (w && w->h.group != outer) {
        weft__worker_retag_begin(w);
        w->h.group = outer;
    }
}

/* w (NULL: not a worker) starts group g, nested in the group w is in now,
 * and enters it; returns that outer group for weft__worker_leave. */
static inline weft__group *weft__worker_enter_new(weft__worker *w, weft__group *g) {
    weft__group *outer = weft__worker_enter(w, g);
    weft__group_init(g, outer);
    return outer;
}

/* The group a job queued by the calling thread belongs to: the group of the
 * work that thread runs now (NULL outside every pool). */
static inline weft__group *weft__current_group(void) {
    weft__worker *w = weft__current_worker();
    return w ? w->h.group : NULL;
}

#endif

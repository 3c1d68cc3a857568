/* SPDX-License-Identifier: MIT */
/* Recording a timeline: one thread's event buffer, a pool's tracing state,
 * and the recorder every worker calls (trace_buf.c). What is done with the
 * events (weft_trace_start, _stop, the file) is trace.c's. */
#ifndef WEFT_TRACE_BUF_H
#define WEFT_TRACE_BUF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "os/atomics.h"

struct weft_pool;

typedef enum {
    WEFT__TRACE_SEARCH, /* the worker starts searching for work */
    WEFT__TRACE_RUN,    /* ...running jobs (name: the job's, NULL: none) */
    WEFT__TRACE_SLEEP,  /* ...sleeping */
    WEFT__TRACE_WAKE,   /* it woke another thread (arg: flow id) */
    WEFT__TRACE_WOKEN,  /* it was woken (arg: flow id) */
    WEFT__TRACE_WAIT,   /* a context or caller waits, with nothing of its own to run */
    WEFT__TRACE_LEAVE,  /* a context or caller leaves the pool: no slice follows */
} weft__trace_kind;

typedef struct weft__trace_event {
    uint64_t ns;
    uint32_t kind;
    uint32_t arg;
    const char *name; /* RUN: the job's name (weft_trace_name: static), NULL: none */
} weft__trace_event;

/* One thread's events; written by that thread only, while tracing is on (a
 * context's or caller slot's, which no thread of the pool owns, under the
 * tracing state's lock: weft__trace_shared). */
typedef struct weft__trace_buf {
    weft__trace_event *ev;
    size_t n, cap;
    uint64_t dropped; /* events lost to a failed allocation */
} weft__trace_buf;

/* A pool's tracing state. */
typedef struct weft__trace_state {
    _Atomic bool on;            /* A: recording */
    _Atomic uint32_t flow;      /* A: last flow id */
    pthread_mutex_t lock;       /* guards file, collected, outside, and the buffers of
                                   contexts and caller slots */
    pthread_mutex_t stop_lock;  /* start's and stop's changes of state (trace.c) */
    bool stopping;              /* L (stop_lock): a stop hands the buffers over */
    FILE *file;                 /* L: opened by start, written and closed by stop */
    weft__trace_buf *collected; /* L: every slot's buffer, handed over at stop */
    weft__trace_buf outside;    /* L: wake-ups by threads outside the pool */
    uint64_t started_ns;        /* L */
    /* Set by start (trace.c): weft_trace_stop for weft_pool_destroy once the
     * pool has drained, without the pending count a public stop takes. The
     * pool is below tracing, so tracing passes its stop in. */
    void (*stop_drained)(struct weft_pool *pool);
} weft__trace_state;

/* Append an event. A state event (SEARCH, RUN, SLEEP, WAIT, LEAVE) equal to
 * the last one recorded, name included, changes nothing and is dropped. */
WEFT__HIDDEN void weft__trace_append(weft__trace_buf *b, weft__trace_kind kind, uint32_t arg,
                                     const char *name);
WEFT__HIDDEN void weft__trace_buf_free(weft__trace_buf *b);

/* Append to b, a buffer that a stop hands over from another thread (a
 * context's or caller slot's), under t's lock, if t still traces. */
WEFT__HIDDEN void weft__trace_shared(weft__trace_state *t, weft__trace_buf *b,
                                     weft__trace_kind kind, const char *name);

/* A thread woke a worker of the pool whose tracing state is t: record the
 * flow's start in `own` (the waker's buffer, if it is a worker of that
 * pool), in `shared` (a context's or caller slot's, under t's lock) or in
 * t->outside, and return the flow's id; 0 (no flow) if a stop turned
 * tracing off before a record under the lock could be made. */
WEFT__HIDDEN uint32_t weft__trace_wake(weft__trace_state *t, weft__trace_buf *own,
                                       weft__trace_buf *shared);

/* Record an event if tracing is on. Relaxed: a flag that turns recording on
 * and off; the buffers are handed over on their owners' threads (trace.c). */
static inline void weft__trace(const _Atomic bool *on, weft__trace_buf *b, weft__trace_kind kind,
                               uint32_t arg) {
    if (WEFT__UNLIKELY(atomic_load_explicit(on, memory_order_relaxed)))
        weft__trace_append(b, kind, arg, NULL);
}

#endif

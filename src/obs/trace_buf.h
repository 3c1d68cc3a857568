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
    WEFT__TRACE_RUN,    /* ...running jobs */
    WEFT__TRACE_SLEEP,  /* ...sleeping */
    WEFT__TRACE_WAKE,   /* it woke another thread (arg: flow id) */
    WEFT__TRACE_WOKEN,  /* it was woken (arg: flow id) */
} weft__trace_kind;

typedef struct weft__trace_event {
    uint64_t ns;
    uint32_t kind;
    uint32_t arg;
} weft__trace_event;

/* One thread's events; written by that thread only, while tracing is on. */
typedef struct weft__trace_buf {
    weft__trace_event *ev;
    size_t n, cap;
    uint64_t dropped; /* events lost to a failed allocation */
} weft__trace_buf;

/* A pool's tracing state. */
typedef struct weft__trace_state {
    _Atomic bool on;            /* A: recording */
    _Atomic uint32_t flow;      /* A: last flow id */
    pthread_mutex_t lock;       /* guards file, collected, outside */
    pthread_mutex_t stop_lock;  /* start's and stop's changes of state (trace.c) */
    bool stopping;              /* L (stop_lock): a stop hands the buffers over */
    FILE *file;                 /* L: opened by start, written and closed by stop */
    weft__trace_buf *collected; /* L: workers' buffers, handed over at stop */
    weft__trace_buf outside;    /* L: wake-ups by threads outside the pool */
    uint64_t started_ns;        /* L */
    /* Set by start (trace.c): weft_trace_stop for weft_pool_destroy once the
     * pool has drained, without the pending count a public stop takes. The
     * pool is below tracing, so tracing passes its stop in. */
    void (*stop_drained)(struct weft_pool *pool);
} weft__trace_state;

WEFT__HIDDEN void weft__trace_append(weft__trace_buf *b, weft__trace_kind kind, uint32_t arg);
WEFT__HIDDEN void weft__trace_buf_free(weft__trace_buf *b);

/* A thread woke a worker of the pool whose tracing state is t: record the
 * flow's start in `own` (the waker's buffer, if it is a worker of that pool)
 * or in t->outside, and return the flow's id; 0 (no flow) if a stop turned
 * tracing off before the outside record could be made. */
WEFT__HIDDEN uint32_t weft__trace_wake(weft__trace_state *t, weft__trace_buf *own);

/* Record an event if tracing is on. Relaxed: a flag that turns recording on
 * and off; the buffers are handed over on their owners' threads (trace.c). */
static inline void weft__trace(const _Atomic bool *on, weft__trace_buf *b, weft__trace_kind kind,
                               uint32_t arg) {
    if (WEFT__UNLIKELY(atomic_load_explicit(on, memory_order_relaxed)))
        weft__trace_append(b, kind, arg);
}

#endif

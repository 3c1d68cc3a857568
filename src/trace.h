/* SPDX-License-Identifier: MIT */
/* Timeline tracing: per-worker event buffers written to Chrome's trace-event
 * JSON. See trace.c. */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "atomics.h"

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
    pthread_mutex_t stop_lock;  /* one weft_trace_start or _stop at a time */
    FILE *file;                 /* L: opened by start, written and closed by stop */
    weft__trace_buf *collected; /* L: workers' buffers, handed over at stop */
    weft__trace_buf outside;    /* L: wake-ups by threads outside the pool */
    uint64_t started_ns;        /* L */
} weft__trace_state;

typedef struct weft_pool weft_pool;

/* A thread woke a worker of pool: record the flow's start, return its id. */
WEFT__HIDDEN uint32_t weft__trace_wake(weft_pool *pool);
/* At pool creation: start tracing if WEFT_TRACE says so. */
WEFT__HIDDEN void weft__trace_from_env(weft_pool *pool);
/* In a fork child (pool.c's atfork handler): WEFT_TRACE files get names of
 * their own, so that the child does not overwrite its parent's. */
WEFT__HIDDEN void weft__trace_fork_child(void);

WEFT__HIDDEN void weft__trace_append(weft__trace_buf *b, weft__trace_kind kind, uint32_t arg);
WEFT__HIDDEN void weft__trace_buf_free(weft__trace_buf *b);

/* Record an event if tracing is on. Relaxed: a flag that turns recording on
 * and off; the buffers are handed over on their owners' threads (trace.c). */
static inline void weft__trace(const _Atomic bool *on, weft__trace_buf *b, weft__trace_kind kind,
                               uint32_t arg) {
    if (WEFT__UNLIKELY(atomic_load_explicit(on, memory_order_relaxed)))
        weft__trace_append(b, kind, arg);
}

#endif

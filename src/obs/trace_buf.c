/* SPDX-License-Identifier: MIT */
/* Recording a timeline (trace_buf.h): each thread appends to its own buffer,
 * which grows by doubling; an event lost to a failed allocation is counted,
 * never fatal. */
#include <stdlib.h>

#include "obs/trace_buf.h"

#include "os/clock.h"

/* Does an event of kind with name change nothing after b's last one? */
static bool repeats(const weft__trace_buf *b, weft__trace_kind kind, const char *name) {
    if (b->n == 0 || kind == WEFT__TRACE_WAKE || kind == WEFT__TRACE_WOKEN)
        return false;
    const weft__trace_event *last = &b->ev[b->n - 1];
    return last->kind == kind && last->name == name;
}

void weft__trace_append(weft__trace_buf *b, weft__trace_kind kind, uint32_t arg, const char *name) {
    if (repeats(b, kind, name))
        return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        weft__trace_event *ev = realloc(b->ev, cap * sizeof *ev);
        if (!ev) {
            b->dropped++;
            return;
        }
        b->ev = ev;
        b->cap = cap;
    }
    b->ev[b->n++] = (weft__trace_event){weft__now_ns(), kind, arg, name};
}

void weft__trace_buf_free(weft__trace_buf *b) {
    free(b->ev);
    *b = (weft__trace_buf){0};
}

/* Append under t's lock, if t still traces; false if it does not. The flag
 * again, under the lock: a stop turns it off before it takes the lock to
 * hand over or free the buffers it guards, so a thread that read it on
 * before the stop, and comes here after, records nothing (its event would
 * land in the next trace, before that trace began). */
static bool append_locked(weft__trace_state *t, weft__trace_buf *b, weft__trace_kind kind,
                          uint32_t arg, const char *name) {
    pthread_mutex_lock(&t->lock);
    /* Relaxed: the lock orders it against the stop's write. */
    bool on = atomic_load_explicit(&t->on, memory_order_relaxed);
    if (on)
        weft__trace_append(b, kind, arg, name);
    pthread_mutex_unlock(&t->lock);
    return on;
}

void weft__trace_shared(weft__trace_state *t, weft__trace_buf *b, weft__trace_kind kind,
                        const char *name) {
    (void)append_locked(t, b, kind, 0, name);
}

uint32_t weft__trace_wake(weft__trace_state *t, weft__trace_buf *own, weft__trace_buf *shared) {
    /* Relaxed: ids only need to be distinct. */
    uint32_t flow = atomic_fetch_add_explicit(&t->flow, 1, memory_order_relaxed) + 1;
    if (own)
        weft__trace_append(own, WEFT__TRACE_WAKE, flow, NULL);
    else if (!append_locked(t, shared ? shared : &t->outside, WEFT__TRACE_WAKE, flow, NULL))
        return 0; /* no flow: the woken worker records no end */
    return flow;
}

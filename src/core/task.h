/* SPDX-License-Identifier: MIT */
/* The running job as a weft_task (weft.h, "Jobs that wait"): each place
 * that runs a job brackets it with weft__task_begin/end, which cost two
 * stores and a load when nobody asks for the task; what a task does is
 * api/task.c's. */
#ifndef WEFT_TASK_H
#define WEFT_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "core/worker.h"
#include "idle/latch.h"
#include "os/atomics.h"

/* A job's task record, on the stack of the code that runs the job: it
 * lives exactly as long as the job, events included (weft__task_end waits
 * for them before it returns). Set up by weft_task_self only: `used` tells
 * whether the rest is. */
struct weft_task {
    bool used;               /* O: weft_task_self gave it out; the fields below are set */
    _Atomic uint32_t permit; /* A: WEFT__TASK_IDLE, _PERMIT or _BLOCKED (task.c) */
    weft__latch *blocked;    /* while BLOCKED: what the block sleeps on (its stack) */
    _Atomic uint64_t events; /* A: events outstanding << 1, | 1 until the job returns */
    weft__latch done;        /* set by the decrease that completes a returned job */
};

enum { WEFT__TASK_IDLE = 0, WEFT__TASK_PERMIT, WEFT__TASK_BLOCKED };

/* The job ran with events outstanding: wait for them (task.c). */
WEFT__HIDDEN WEFT__COLD void weft__task_finish(weft__worker *w, weft_task *t);

/* w starts a job whose record is t; returns the record of the job it ran
 * before (the one a participating wait interrupts, or NULL). w NULL (no
 * pool: the job runs on an outside thread): no record. */
static inline weft_task *weft__task_begin(weft__worker *w, weft_task *t) {
    t->used = false;
    if (!w)
        return NULL;
    weft_task *outer = w->task;
    w->task = t;
    return outer;
}

/* The job's function returned: before its completion is signalled (a latch
 * set, a count dropped), its events, if any; then w goes back to outer. */
static inline void weft__task_end(weft__worker *w, weft_task *t, weft_task *outer) {
    if (!w)
        return;
    if (WEFT__UNLIKELY(t->used))
        weft__task_finish(w, t);
    w->task = outer;
}

/* fn(arg) as a job of w's. */
static inline void weft__task_call(weft__worker *w, weft_fn *fn, void *arg) {
    weft_task t;
    weft_task *outer = weft__task_begin(w, &t);
    fn(arg);
    weft__task_end(w, &t, outer);
}

#endif

/* SPDX-License-Identifier: MIT */
/* What a job is.
 *
 * A job is a struct whose first member is a weft__job header: the function that
 * executes it and a link for the injector's and free lists. Deques and the
 * injector hold weft__job pointers; execute() casts back to the containing
 * struct. Two kinds exist:
 *  - stack jobs (weft_run's injected job; a join frame, frame.h, is one of
 *    its own kind): live in the waiting caller's frame, which outlives them
 *    because the caller waits on a latch that execute() sets last;
 *  - heap jobs (weft_spawn, weft_scope_spawn): taken from the spawning
 *    worker's free list (malloc only when it is empty) and given back to the
 *    executing worker's list after they ran. */
#ifndef WEFT_JOB_H
#define WEFT_JOB_H

#include <stddef.h>

#include "os/atomics.h"
#include "core/group.h"
#include "idle/latch.h"

typedef struct weft__job weft__job;
typedef void weft__exec(weft__job *job);

struct weft__job {
    weft__exec *execute; /* I: set before the job is published */
    weft__job *next;     /* injector list (its lock), free list (owner) */
};

static inline void weft__job_execute(weft__job *job) {
    job->execute(job);
}

/* weft__job_execute with the weft_fn signature, for helpers that call a
 * function with an argument (weft__worker_call_at). */
static inline void weft__job_call(void *job) {
    weft__job_execute(job);
}

typedef struct weft__pending weft__pending;

/* A stack job: weft_run's injected job. Its owner initialises the latch
 * and waits on it before the frame goes. */
typedef struct weft__stack_job {
    weft__job job;
    void (*fn)(void *arg);
    void *arg;
    weft__latch done;
} weft__stack_job;

/* A heap job: weft_spawn and event follow-ups (counted in the pool's pending
 * work) or weft_scope_spawn (counted in the scope). Exactly one of counter and
 * pending is set. */
typedef struct weft__heap_job {
    weft__job job;
    void (*fn)(void *arg);
    void *arg;
    weft__count_latch *counter; /* a scope's: decremented after fn returns */
    weft__pending *pending;     /* the pool's: released after fn returns */
    weft__group *group;         /* a scope's (NULL: detached): fn is skipped once
                                   it is cancelled */
    void (*release)(void *arg); /* called instead of a skipped fn (NULL: none) */
    const char *name;           /* for the trace: the spawner's name in force (named.h) */
} weft__heap_job;

#endif

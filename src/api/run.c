/* SPDX-License-Identifier: MIT */
/* weft_run: run a function inside a pool and wait for it (Rayon's install).
 *
 * Outside any pool the caller takes a caller slot and runs the function
 * itself, as a member of the pool (callers.c); with no slot free, the job
 * is injected and the caller blocks on a latch it owns; on a worker of another pool the caller owns
 * the latch as a worker and keeps running its own pool's jobs while it waits; on a worker of the
 * pool itself the function just runs. The job lives in the caller's frame, which outlives it
 * because the caller waits for the latch the job sets last.
 */
#include <assert.h>
#include <errno.h>

#include "core/current.h"
#include "api/spawn.h"
#include "core/worker.h"
#include "core/priority.h"
#include "core/submit.h"
#include "core/task.h"
#include "core/latch_owner.h"

#include "core/callers.h"
#include "core/named.h"
#include "core/pending.h"

/* The injected job: a stack job whose job.next the injector uses, so the
 * group it runs in, the caller's, is kept beside it. */
typedef struct run_job {
    weft__stack_job s;
    weft__group *group;
} run_job;

static void run_job_execute(weft__job *job) {
    run_job *r = (run_job *)job;
    weft__stack_job_run(&r->s, r->group);
}

int weft_run_priority(weft_pool *pool, weft_fn *fn, void *arg, weft_priority priority) {
    /* Before anything else: priority indexes the injectors and, once it is a
     * worker's priority, the deques its forks are pushed on. */
    int err = weft__spawn_check_args(fn, priority);
    if (err)
        return err;
    /* Under a name its work does not have yet (weft_trace_name): fn runs in
     * a group that names it, wherever it runs (named.c). */
    weft__named named;
    const char *name = weft__name_to_give(weft__current_worker());
    if (WEFT__UNLIKELY(name != NULL)) {
        named = (weft__named){.fn = fn, .arg = arg, .name = name};
        fn = weft__named_call, arg = &named;
    }
    pool = weft__pool_resolve(pool);
    weft__worker *w = pool ? weft__worker_of(pool) : NULL;
    if (w) {
        weft_task task; /* fn is a job, with its own events */
        weft_task *outer_task = weft__task_begin(w, &task);
        weft__worker_call_at(w, priority, fn, arg); /* what fn forks inherits priority */
        weft__task_end(w, &task, outer_task);
        if (WEFT__UNLIKELY(name != NULL))
            weft__worker_trace_run(w); /* back to the caller's own work */
        return 0;
    }
    if (!pool) { /* no pool to run in: run here */
        fn(arg);
        return 0;
    }
    weft__worker *caller = weft__current_worker(); /* of another pool, or NULL */
    weft__worker *slot = caller ? NULL : weft__caller_take(pool);
    if (slot) {
        /* fn counts as a job, as it does when it is injected: the pool's
         * jobs are the same whether the caller took part or waited. */
        weft__stat_add(&slot->stats.jobs, 1);
        weft_task task;
        weft_task *outer_task = weft__task_begin(slot, &task);
        weft__worker_call_at(slot, priority, fn, arg);
        weft__task_end(slot, &task, outer_task);
        weft__caller_give_back(slot);
        return 0;
    }
    /* The injected job counts as the pool's pending work until the caller is
     * done with the pool: weft_pool_destroy, which may have started meanwhile,
     * runs it before it stops the workers, and frees nothing this call still
     * touches. A pool already closed (a call that raced destroy) has no worker
     * left to count on: the function runs here, as in a fork child. */
    if (!weft__pending_hold(&pool->pending)) {
        fn(arg);
        return 0;
    }
    run_job r = {.s = {.job.execute = run_job_execute, .fn = fn, .arg = arg},
                 .group = caller ? caller->h.group : NULL};
    weft__latch_init(&r.s.done);
    weft__guest guest;
    if (caller)
        weft__pool_serve_begin(pool, caller->pool, &guest); /* pool now works for caller's pool */
    weft__sleep_arrival(&pool->sleep); /* work a thread waits for: the pool's rhythm */
    weft__pool_inject(pool, &r.s.job, priority);
    weft__latch_wait(&r.s.done);
    if (caller)
        weft__pool_serve_end(pool, &guest);
    weft__pending_release(&pool->pending); /* last: destroy may free the pool now */
    return 0;
}

void weft_run(weft_pool *pool, weft_fn *fn, void *arg) {
    if (!fn) {
        assert(!"weft_run: fn is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    weft__worker *w = weft__current_worker();
    /* Inside a pool, keep the caller's priority; from outside, normal. */
    (void)weft_run_priority(pool, fn, arg, w ? w->h.prio : WEFT_PRIORITY_NORMAL);
}

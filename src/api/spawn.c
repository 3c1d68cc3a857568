/* SPDX-License-Identifier: MIT */
/* Detached jobs: weft_spawn and the heap jobs behind weft_scope_spawn.
 *
 * A heap job is counted (in the pool's pending work, pending.h, or in its
 * scope's count latch) from before it is queued until after its function
 * returned, so that weft_pool_destroy and weft_scope_run wait for it. Once
 * weft_pool_destroy has closed the pool, weft_spawn answers ESHUTDOWN instead
 * of queueing a job nothing would run. Heap jobs are recycled
 * through the executing worker's free list; steady-state spawning does not
 * call malloc.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/current.h"
#include "core/named.h"
#include "core/submit.h"
#include "core/task.h"
#include "core/latch_owner.h"
#include "os/error.h"

/* Per-worker cap on recycled jobs: absorbs bursts of spawns; beyond it memory
 * goes back to malloc, so a worker that only executes others' spawns does not
 * hoard it. */
#define FREE_JOBS_MAX 256

weft__heap_job *weft__heap_job_alloc(void) {
    weft__worker *w = weft__current_worker();
    if (w && w->free_jobs) {
        weft__heap_job *h = w->free_jobs;
        w->free_jobs = (weft__heap_job *)h->job.next;
        w->free_count--;
        return h;
    }
    return malloc(sizeof(weft__heap_job));
}

void weft__heap_job_free(weft__heap_job *h) {
    weft__worker *w = weft__current_worker();
    if (w && w->free_count < FREE_JOBS_MAX) {
        h->job.next = (weft__job *)w->free_jobs; /* job is the first member */
        w->free_jobs = h;
        w->free_count++;
        return;
    }
    free(h);
}

/* The count that keeps the job's waiter waiting ends after fn returned. */
static void heap_job_done(const weft__heap_job *h) {
    if (h->pending)
        weft__pending_release(h->pending);
    else
        weft__count_latch_decrement(h->counter);
}

static void heap_job_execute(weft__job *job) {
    weft__heap_job h = *(weft__heap_job *)job;
    /* Recycle first: a spawn inside fn can reuse this very job. */
    weft__heap_job_free((weft__heap_job *)job);
    if (WEFT__UNLIKELY(weft__group_cancelled(h.group))) { /* its scope was cancelled */
        if (h.release)
            h.release(h.arg);
    } else {
        weft__worker *w = weft__current_worker();
        weft__group *outer = weft__worker_enter(w, h.group);
        weft_task task;
        weft_task *outer_task = weft__task_begin(w, &task);
        weft__named_run(w, h.name, h.fn, h.arg);
        weft__task_end(w, &task, outer_task); /* before the job counts as done */
        weft__worker_leave(w, outer);
    }
    heap_job_done(&h);
}

void weft__heap_job_init(weft__heap_job *h, weft__count_latch *counter, weft__pending *pending,
                         weft_fn *fn, void *arg) {
    *h = (weft__heap_job){.job.execute = heap_job_execute,
                          .fn = fn,
                          .arg = arg,
                          .counter = counter,
                          .pending = pending,
                          .name = weft__name_in_force(weft__current_worker())};
}

/* Queue h, already counted; undo the count and free h if it cannot be. */
static int submit_counted(weft_pool *pool, weft__heap_job *h, weft_priority prio) {
    int err = h->pending ? weft__pool_submit_detached(pool, &h->job, prio)
                         : weft__pool_submit_prio(pool, &h->job, prio);
    if (err) { /* ENOMEM: a full deque that could not grow */
        heap_job_done(h);
        weft__heap_job_free(h);
        weft__error_set(err, "out of memory growing the calling worker's deque");
    }
    return err;
}

int weft__spawn_counted(weft_pool *pool, const weft__heap_job *job, weft_priority prio) {
    weft__heap_job *h = weft__heap_job_alloc();
    if (!h)
        return weft__error_set(ENOMEM, "out of memory for the job");
    weft__count_latch_increment(job->counter);
    *h = *job;
    h->job.execute = heap_job_execute;
    h->name = weft__name_in_force(weft__current_worker());
    return submit_counted(pool, h, prio);
}

int weft__spawn_detached(weft_pool *pool, weft_fn *fn, void *arg, weft_priority prio) {
    weft__heap_job *h = weft__heap_job_alloc();
    if (!h)
        return weft__error_set(ENOMEM, "out of memory for the job");
    if (!weft__pending_hold(&pool->pending)) {
        weft__heap_job_free(h);
        return weft__pool_closed_error();
    }
    weft__heap_job_init(h, NULL, &pool->pending, fn, arg);
    return submit_counted(pool, h, prio);
}

int weft__spawn_check_args(weft_fn *fn, weft_priority priority) {
    if (!fn)
        return weft__error_set(EINVAL, "fn is NULL");
    if ((unsigned)priority > WEFT_PRIORITY_HIGH)
        return weft__error_set(EINVAL, "priority %d is not a weft_priority enumerator",
                               (int)priority);
    return 0;
}

int weft_spawn_priority(weft_pool *pool, weft_fn *fn, void *arg, weft_priority priority) {
    int err = weft__spawn_check_args(fn, priority);
    if (!err)
        err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    return weft__spawn_detached(pool, fn, arg, priority);
}

int weft_spawn(weft_pool *pool, weft_fn *fn, void *arg) {
    return weft_spawn_priority(pool, fn, arg, WEFT_PRIORITY_NORMAL);
}

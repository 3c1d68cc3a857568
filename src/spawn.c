/* Detached jobs: weft_spawn and the heap jobs behind weft_scope_spawn.
 *
 * A heap job is counted in a count latch (the pool's pending work, or the
 * scope) from before it is queued until after its function returned, so that
 * weft_pool_destroy and weft_scope_run wait for it. Heap jobs are recycled
 * through the executing worker's free list; steady-state spawning does not
 * call malloc.
 */
#include <errno.h>
#include <stdlib.h>

#include "pool.h"

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

static void heap_job_execute(weft__job *job) {
    weft__heap_job h = *(weft__heap_job *)job;
    /* Recycle first: a spawn inside fn can reuse this very job. */
    weft__heap_job_free((weft__heap_job *)job);
    h.fn(h.arg);
    weft__count_latch_decrement(h.counter);
}

void weft__heap_job_init(weft__heap_job *h, weft__count_latch *counter, weft_fn *fn, void *arg) {
    *h =
        (weft__heap_job){.job.execute = heap_job_execute, .fn = fn, .arg = arg, .counter = counter};
    weft__count_latch_increment(counter);
}

int weft__spawn_counted(weft_pool *pool, weft__count_latch *counter, weft_fn *fn, void *arg,
                        weft_priority prio, bool detached) {
    weft__heap_job *h = weft__heap_job_alloc();
    if (!h)
        return ENOMEM;
    weft__heap_job_init(h, counter, fn, arg);
    int err = detached ? weft__pool_submit_detached(pool, &h->job, prio)
                       : weft__pool_submit_prio(pool, &h->job, prio);
    if (err) {
        weft__heap_job_free(h);
        weft__count_latch_decrement(counter);
    }
    return err;
}

int weft_spawn_priority(weft_pool *pool, weft_fn *fn, void *arg, weft_priority priority) {
    if (!fn || (unsigned)priority > WEFT_PRIORITY_HIGH)
        return EINVAL;
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err;
    return weft__spawn_counted(pool, &pool->pending, fn, arg, priority, true);
}

int weft_spawn(weft_pool *pool, weft_fn *fn, void *arg) {
    return weft_spawn_priority(pool, fn, arg, WEFT_PRIORITY_NORMAL);
}

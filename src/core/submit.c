/* SPDX-License-Identifier: MIT */
/* Submitting (submit.h): a worker of the pool pushes onto its own deque,
 * every other thread injects; both wake a worker for the job. */
#include "core/priority.h"
#include "core/submit.h"
#include "core/current.h"
#include "core/worker.h"

void weft__pool_inject(weft_pool *pool, weft__job *job, weft_priority prio) {
    /* Once pushed, the job may run and end before we have woken anyone, and
     * its end may let weft_pool_destroy return: our reference keeps the
     * injector's lock and the sleep state alive until we are done with them. */
    weft__pool_ref(pool);
    weft__phase_new_work(&pool->phase);
    weft__injector *q = &pool->injectors[prio];
    if (prio == WEFT_PRIORITY_HIGH)
        weft__pool_note_high_seen(pool);
    bool was_empty = weft__injector_is_empty(q);
    weft__injector_push(q, job, job, 1);
    weft__debug_yield();
    weft__sleep_new_injected_jobs(&pool->sleep, 1, was_empty);
    weft__debug_yield();
    weft__pool_unref(pool);
}

int weft__pool_submit_prio(weft_pool *pool, weft__job *job, weft_priority prio) {
    weft__worker *w = weft__worker_of(pool);
    if (w) {
        if (prio == WEFT_PRIORITY_HIGH)
            weft__pool_note_high(pool);
        return weft__worker_push_prio(w, job, prio);
    }
    weft__pool_inject(pool, job, prio);
    return 0;
}

int weft__pool_submit_detached(weft_pool *pool, weft__job *job, weft_priority prio) {
    weft__worker *w = weft__worker_of(pool);
    if (w && w->is_context) {
        weft__pool_inject(pool, job, prio);
        return 0;
    }
    return weft__pool_submit_prio(pool, job, prio);
}

void weft__pool_submit(weft_pool *pool, weft__job *job) {
    weft__worker *w = weft__worker_of(pool);
    weft_priority prio = w ? w->h.prio : WEFT_PRIORITY_NORMAL;
    if (weft__pool_submit_prio(pool, job, prio) != 0)
        weft__pool_inject(pool, job, prio); /* a full deque: the injector never is */
}

/* SPDX-License-Identifier: MIT */
/* Private work: no job stays private while workers idle (private_work.c
 * argues the rule; deque.c and frame.c the two places private jobs live). */
#ifndef WEFT_PRIVATE_WORK_H
#define WEFT_PRIVATE_WORK_H

#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "core/deque.h"
#include "core/job.h"
#include "core/pool.h"

/* A worker's forced sweep: set by its sleepers' second look, spent by the
 * next search (owner only). */
typedef struct weft__forced_sweep {
    bool armed;        /* the final check saw private jobs: the next sweep may take one */
    bool raced;        /* the last forced sweep lost a race: it is not spent */
    uint64_t spent_in; /* 1 + the sleeps count when a forced sweep was spent (0: none) */
    uint32_t answers;  /* the pool's answer count before that sweep */
} weft__forced_sweep;

/* How many requests the owners of the pool's deques and frames have answered
 * so far: a sum that wraps, whose changes end a spent forced sweep. */
WEFT__HIDDEN uint32_t weft__pool_answers(weft_pool *pool);

/* The sleepers' second look (idle.h's private_check) of the worker in slot
 * index, after its SleepFence: private jobs or frames on another slot whose
 * owner has not shared them; arms that worker's next sweep to take one. */
WEFT__HIDDEN bool weft__private_check(weft_pool *pool, unsigned index);

/* A leaving searcher's look (idle.h's queued_check): jobs on another slot's
 * deques, public or private, or private frames. */
WEFT__HIDDEN bool weft__private_queued(weft_pool *pool, unsigned index);

/* A forced steal from victim's deque of priority prio, then (normal work
 * only) its join frames, by w whose sweep is armed and who found nothing
 * public there: as weft__deque_steal_private / weft__frame_steal, counted
 * in w's statistics; a lost race leaves the sweep unspent. */
WEFT__HIDDEN WEFT__COLD weft__steal_result weft__private_take(weft__worker *w, weft__worker *victim,
                                                              weft_priority prio, weft__job **job,
                                                              bool *more, weft_priority *run_prio);

/* Around one search of w's wait: whether its sweep is armed, and the answer
 * count read before the sweep's barriers (an answer after it ends the spent
 * sweep); then whether the search found a job. */
static inline bool weft__forced_sweep_begin(weft__forced_sweep *f, weft_pool *pool,
                                            uint32_t *answers) {
    *answers = f->armed ? weft__pool_answers(pool) : 0;
    return f->armed;
}

static inline void weft__forced_sweep_end(weft__forced_sweep *f, bool armed, uint32_t answers,
                                          bool found, uint64_t sleeps) {
    if (armed) { /* one sweep per final check that asked for it */
        f->armed = false;
        if (!found && !f->raced) {
            f->spent_in = 1 + sleeps;
            f->answers = answers;
        }
        f->raced = false;
    }
    if (found)
        f->spent_in = 0;
}

#endif

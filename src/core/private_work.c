/* SPDX-License-Identifier: MIT */
/* No job stays private while workers idle.
 *
 * weft keeps a worker's newest work private: jobs below the split of its
 * deque (deque.c) and B halves in its join frames (frame.c) are touched by
 * no other thread, so a fork and its pop cost no fence. The price is a rule
 * this file owns: a worker may sleep only when no job it could run is kept
 * from it, and a wait never depends on another thread for work the waiting
 * thread owns. Private work leaves its owner in four ways, each argued
 * where its protocol lives:
 *
 *  1. Shared when wanted. A push or fork that sees an idle worker (a
 *     searcher or a sleeper, weft__sleep_wants_work) or a thief's request
 *     shares its private work and wakes a sleeper if none searches
 *     (worker.h, weft__worker_push_prio; frame.c, the fork's cold path).
 *  2. Requested, then answered. A thief that finds nothing public raises a
 *     request (the deque's `movesplit`, the frames' REQUEST bit); the
 *     owner's next push, pop or fork answers it by sharing (deque.c,
 *     frame.c), and counts the answer.
 *  3. Taken by force. An owner inside one long job answers nothing until it
 *     returns. So a worker about to sleep takes a second look, after its
 *     SleepFence, at every other slot's private work (weft__private_check);
 *     seen, it does not sleep, and its next sweep takes the oldest private
 *     job or frame of a victim that shows nothing public, paying a
 *     process-wide barrier instead of the owner's fast path
 *     (weft__private_take; deque.c and frame.c argue the race with the
 *     owner's pop).
 *  4. Published by a waiting owner. An owner that waits inside weft (a
 *     join, a scope, an event, a context's call) with nothing of its own
 *     public runs its own private frames itself: it publishes them all and
 *     pops the newest (frame.c, weft__frame_publish_own), so no wait hangs
 *     on a frame only the waiter could run.
 *
 * Why a sleeper cannot miss private work that nobody shares. The first
 * private job of an episode (a deque's, a frame list's) is followed by a
 * seq-cst fence before the owner reads the sleep counters; a sleeper
 * counts itself, makes its SleepFence, then looks (idle.h's final check,
 * then this file's second look). Either the owner sees the sleeper and
 * shares (1), or the sleeper sees the private work and does not sleep (3).
 * A searcher the owner saw, leaving as the last searcher while someone
 * sleeps, makes a fence and looks again (weft__private_queued; idle.h,
 * weft__idle_left_behind).
 *
 * One spent sweep per sleep. A forced sweep that found nothing leaves its
 * request standing (raised before its barrier): the owner's next push or
 * pop answers it and wakes the sleeper, and an owner that never runs again
 * lost its jobs to that sweep, or to a thief that hands the rest over. So
 * after a spent sweep the second look lets the worker sleep, unless the
 * sweep lost a race (the owner answered, or moved the deque under its CAS:
 * it may have pushed again since, keeping work private beside us), or some
 * owner answered a request since (what it shared may have gone to another
 * thief, and a job pushed after the answer saw no request: verify/deque.pml
 * with 3 jobs). A sleep since allows another sweep.
 *
 * verify/deque.pml and verify/frames.pml check the rule under x86-TSO: no
 * thief asleep while an owner that stopped for good holds a job or a frame,
 * and no owner waiting for ever; without the episode fences, the sleepers'
 * look at private work or the last searcher's hand-over they find the
 * counterexample. */
#include "core/frame.h"
#include "core/private_work.h"
#include "core/worker.h"

uint32_t weft__pool_answers(weft_pool *pool) {
    uint32_t sum = 0;
    weft__victims vs = weft__pool_victims(pool);
    for (unsigned k = 0; k < vs.n; k++)
        for (int p = 0; p < WEFT__PRIORITIES; p++) /* frames' answers count in deques[0] */
            sum += weft__deque_answers(&pool->workers[weft__victim_slot(&vs, k)].deques[p]);
    return sum;
}

/* Does a deque of a slot other than `index` show private jobs (or, with
 * !private_jobs, public ones)? Hints, read after the caller's fence. */
static bool other_deques_show(weft_pool *pool, unsigned index, bool private_jobs) {
    weft__victims vs = weft__pool_victims(pool);
    /* Relaxed: see weft__pool_note_high. */
    int prios = atomic_load_explicit(&pool->high_pushed, memory_order_relaxed) ? 2 : 1;
    for (unsigned k = 0; k < vs.n; k++) {
        unsigned v = weft__victim_slot(&vs, k);
        if (v == index)
            continue;
        if (private_jobs && weft__frame_private_in_view(&pool->workers[v]))
            return true;
        for (int p = 0; p < prios; p++) {
            weft__deque *d = &pool->workers[v].deques[p];
            if (private_jobs ? weft__deque_private_count(d) > 0 : !weft__deque_public_empty(d))
                return true;
        }
    }
    return false;
}

bool weft__private_check(weft_pool *pool, unsigned index) {
    weft__forced_sweep *f = &pool->workers[index].forced; /* the caller's */
    /* A spent sweep, and no answer since: sleep (the file's comment). */
    if (f->spent_in == 1 + weft__stat_get(&pool->workers[index].stats.sleeps) &&
        weft__pool_answers(pool) == f->answers)
        return false;
    f->armed = other_deques_show(pool, index, true);
    return f->armed;
}

bool weft__private_queued(weft_pool *pool, unsigned index) {
    return other_deques_show(pool, index, false) || other_deques_show(pool, index, true);
}

/* A forced steal's result, counted. */
static weft__steal_result count_forced(weft__worker *w, weft__steal_result r) {
    if (r == WEFT__STEAL_OK) {
        weft__stat_add(&w->stats.steals, 1);
        weft__stat_add(&w->stats.forced_steals, 1);
    }
    return r;
}

weft__steal_result weft__private_take(weft__worker *w, weft__worker *victim, weft_priority prio,
                                      weft__job **job, bool *more, weft_priority *run_prio) {
    weft__steal_result r =
        count_forced(w, weft__deque_steal_private(&victim->deques[prio], job, more));
    if (r == WEFT__STEAL_EMPTY && prio == WEFT_PRIORITY_NORMAL)
        r = count_forced(w, weft__frame_steal(victim, job, more, run_prio));
    w->forced.raced |= r == WEFT__STEAL_RETRY;
    return r;
}

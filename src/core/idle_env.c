/* SPDX-License-Identifier: MIT */
/* The pool's side of the idle interface (idle.h, weft__idle_env): the looks
 * the sleep protocols take at the pool's queues before a worker sleeps,
 * while it searches and once it is woken, and the count of answered
 * requests a spent forced sweep waits for. worker.c runs the search loop
 * these looks guard. */
#include "core/frame.h"
#include "core/current.h"
#include "core/worker.h"

uint32_t weft__pool_answers(weft_pool *pool) {
    uint32_t sum = 0;
    for (unsigned v = 0, n = weft__pool_victims(pool); v < n; v++)
        for (int p = 0; p < WEFT__PRIORITIES; p++) /* frames' answers count in deques[0] */
            sum += weft__deque_answers(&pool->workers[v].deques[p]);
    return sum;
}

/* The sleep protocols' final check (idle.h), after a SleepFence: outside
 * work a worker must not sleep on, a queued job or a broadcast it has not
 * run. */
static bool final_check(void *ctx, unsigned index) {
    weft_pool *pool = ctx;
    return !weft__injector_is_empty(&pool->injectors[WEFT_PRIORITY_HIGH]) ||
           !weft__injector_is_empty(&pool->injectors[WEFT_PRIORITY_NORMAL]) ||
           weft__broadcast_pending(&pool->broadcasts, pool->workers[index].broadcast_seen);
}

/* Does a deque of a slot other than `index` show private jobs (or, with
 * !private_jobs, public ones)? Hints, read after the caller's fence. */
static bool other_deques_show(weft_pool *pool, unsigned index, bool private_jobs) {
    unsigned n = weft__pool_victims(pool);
    /* Relaxed: see weft__pool_note_high. */
    int prios = atomic_load_explicit(&pool->high_pushed, memory_order_relaxed) ? 2 : 1;
    for (unsigned v = 0; v < n; v++) {
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

/* The sleepers' second look (idle.h), after the SleepFence: another deque's
 * private jobs, whose owner a search's requests have not moved to share them;
 * then the next sweep may take one by force (deque.c, "the episode"). */
static bool private_check(void *ctx, unsigned index) {
    weft_pool *pool = ctx;
    weft__worker *w = &pool->workers[index]; /* the caller */
    /* One spent forced sweep per sleep: after it found nothing, our request
     * stands (raised before its barrier) and the owner's next push or pop
     * answers it and wakes us; an owner that never runs again lost its jobs
     * to that sweep, or to a thief that hands the rest over (deque.c). A
     * sweep that lost a race (the owner answered, or ts moved under its CAS)
     * is not spent: the owner may have pushed again since, keeping its jobs
     * private beside us as a searcher (weft__sleep_wants_work), so we look
     * again. Nor is one whose request an owner has answered since: what it
     * shared may have gone to another thief, and a job pushed after the
     * answer, which saw no request, stays private (verify/deque.pml with 3
     * jobs). A sleep since (a wake-up, maybe that hand-over) allows another. */
    if (w->forced_in == 1 + weft__stat_get(&w->stats.sleeps) &&
        weft__pool_answers(pool) == w->forced_answers)
        return false;
    w->force_steal = other_deques_show(pool, index, true);
    return w->force_steal;
}

/* A woken worker's look (idle.h): high-priority work injected, or public on
 * a deque? Hints, as a search would see them. */
static bool high_queued(void *ctx) {
    return weft__pool_high_queued(ctx);
}

/* A leaving searcher's look (idle.h): jobs on another deque, public or
 * private (a pusher that saw a searcher kept them private). */
static bool queued_check(void *ctx, unsigned index) {
    return other_deques_show(ctx, index, false) || other_deques_show(ctx, index, true);
}

/* A waker woke one of our workers while tracing is on (idle.h): a worker
 * of the pool records the flow in its own buffer, anyone else in the pool's
 * buffer for outside threads. */
static uint32_t trace_wake(void *ctx) {
    weft_pool *pool = ctx;
    weft__worker *w = weft__worker_of(pool);
    return weft__trace_wake(&pool->trace, w && !w->is_context ? &w->stats.trace : NULL);
}

weft__idle_env weft__worker_idle_env(weft_pool *pool) {
    return (weft__idle_env){.final_check = final_check,
                            .private_check = private_check,
                            .queued_check = queued_check,
                            .high_queued = high_queued,
                            .trace_wake = trace_wake,
                            .tracing = &pool->trace.on,
                            .phase = &pool->phase,
                            .ctx = pool};
}

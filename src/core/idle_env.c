/* SPDX-License-Identifier: MIT */
/* The pool's side of the idle interface (idle.h, weft__idle_env): the looks
 * the sleep protocols take at the pool's queues before a worker sleeps,
 * while it searches and once it is woken; the looks at private work are
 * private_work.c's. worker.c runs the search loop these looks guard. */
#include "core/private_work.h"
#include "core/current.h"
#include "core/worker.h"

/* The sleep protocols' final check (idle.h), after a SleepFence: outside
 * work a worker must not sleep on, a queued job or a broadcast it has not
 * run. */
static bool final_check(void *ctx, unsigned index) {
    weft_pool *pool = ctx;
    return !weft__injector_is_empty(&pool->injectors[WEFT_PRIORITY_HIGH]) ||
           !weft__injector_is_empty(&pool->injectors[WEFT_PRIORITY_NORMAL]) ||
           weft__worker_broadcast_pending(&pool->workers[index]);
}

/* The sleepers' second look (idle.h): private_work.c's. */
static bool private_check(void *ctx, unsigned index) {
    return weft__private_check(ctx, index);
}

/* A woken worker's look (idle.h): high-priority work injected, or public on
 * a deque? Hints, as a search would see them. */
static bool high_queued(void *ctx) {
    return weft__pool_high_queued(ctx);
}

/* A leaving searcher's look (idle.h): jobs on another deque, public or
 * private (a pusher that saw a searcher kept them private). */
static bool queued_check(void *ctx, unsigned index) {
    return weft__private_queued(ctx, index);
}

/* A waker woke one of our workers while tracing is on (idle.h): a worker
 * of the pool records the flow in its own buffer, a context or caller of
 * the pool in its slot's (its row), anyone else in the pool's buffer for
 * outside threads; a spare records nothing (weft.h: no trace collects a
 * spare's buffer), so its wakes draw no arrow. */
static uint32_t trace_wake(void *ctx) {
    weft_pool *pool = ctx;
    weft__worker *w = weft__worker_of(pool);
    if (w && weft__spares_has(&pool->spares, w->index))
        return 0;
    weft__trace_buf *own = w && !w->is_context ? &w->stats.trace : NULL;
    return weft__trace_wake(&pool->trace, own, w && w->is_context ? &w->stats.trace : NULL);
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

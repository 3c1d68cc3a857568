/* SPDX-License-Identifier: MIT */
/* Parallel phases (oneTBB's start/end_parallel_phase, in C).
 *
 * A phase tells the pool that parallel work will keep coming for a while
 * (the stages of a frame, the iterations of a solver, separated by serial
 * code). weft_phase_begin is a warm-up: it wakes every sleeping worker now,
 * so the first parallel region starts without wake latency. While a phase is
 * active, idle workers keep searching, backing off from pauses to yields,
 * instead of sleeping (leave.c). The last weft_phase_end returns to the
 * pool's leave policy, or, with fast_leave, makes idle workers sleep at once
 * until new work is submitted (oneTBB's one-time fast leave): the way to
 * hand the cores to another runtime (an OpenMP stage) right away.
 *
 * The bound: inside a phase a worker with no work at all searches for at most
 * WEFT__PHASE_RETAIN_NS = 10 ms, then sleeps anyway (it is woken like any
 * sleeper when work comes). Retaining a worker only pays while the gap it
 * bridges is short next to a wake-up: at 10 ms a futex wake-up (tens of
 * microseconds here) is under 1% of the gap, so searching longer buys nothing,
 * and a phase whose end was forgotten stops burning cores after 10 ms.
 *
 * Phases nest and may begin and end concurrently on several threads: a
 * reference count decides. An end without a begin is ignored (an assertion in
 * debug builds). weft_pool_destroy ends all phases implicitly.
 */
#include <assert.h>

#include "core/pool.h"

void weft_phase_begin(weft_pool *pool) {
    pool = weft__pool_resolve(pool);
    if (!pool)
        return;
    weft__phase *p = &pool->phase;
    /* Relaxed: a counter of hints; workers read it with relaxed loads. */
    atomic_fetch_add_explicit(&p->active, 1, memory_order_relaxed);
    atomic_store_explicit(&p->fast_once, 0, memory_order_relaxed);
    /* Release: a worker that sees this begin sees `active` above (leave.h).
     * The warm-up below takes every worker's slot lock after it, and a worker
     * on its way to sleep compares it under that lock (sleep.c). */
    atomic_fetch_add_explicit(&p->begins, 1, memory_order_release);
    weft__sleep_wake_sleepers(&pool->sleep);
}

void weft_phase_end(weft_pool *pool, bool fast_leave) {
    pool = weft__pool_resolve(pool);
    if (!pool)
        return;
    weft__phase *p = &pool->phase;
    /* Relaxed: the count is a hint to workers (phase.h); the CAS below keeps
     * it exact. */
    uint32_t n = atomic_load_explicit(&p->active, memory_order_relaxed);
    do {
        assert(n > 0 && "weft_phase_end without weft_phase_begin");
        if (n == 0)
            return; /* ignored in release builds, as documented */
        /* Relaxed: the count itself is all that matters (see above). */
    } while (!atomic_compare_exchange_weak_explicit(&p->active, &n, n - 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    if (n == 1 && fast_leave)
        atomic_store_explicit(&p->fast_once, 1, memory_order_relaxed);
}

/* SPDX-License-Identifier: MIT */
/* Latches that know their owner thread (Rayon's sleep RFC).
 *
 * Overview: a latch is set once by any thread and waited for by exactly one
 * owner. Because the owner is known, setting a latch wakes at most that one
 * thread, and only if it sleeps on this very latch.
 *
 * States (the RFC's Appendix A), one atomic word:
 *   UNSET --owner getting sleepy--> SLEEPY --owner, under its sleep lock-->
 *   SLEEPING --owner woke up--> UNSET;  any state --set--> SET (final).
 * The owner moves UNSET->SLEEPY->SLEEPING with CAS, so a CAS that fails means
 * the latch was set and the owner must not sleep. The setter swaps in SET and
 * wakes the owner only if it saw SLEEPING.
 *
 * Owners:
 *  - a worker: sleeps through the pool's sleep module (sleep.c), which takes
 *    the owner's sleep lock, so a setter that saw SLEEPING finds the owner
 *    either asleep (and wakes it) or already on its way back.
 *  - an outside thread: the state word itself is its futex word; it blocks
 *    while the word is SLEEPING.
 *
 * Lifetime: the owner may return and free the latch as soon as it sees SET,
 * so the setter copies pool and owner first and never touches the latch
 * after the swap. A setter from outside the owner's pool holds a reference on
 * that pool across the wake-up, because the owner, once it returns, may
 * destroy its pool.
 *
 * This file has the protocol and outside owners; a worker's latch (init,
 * set, wait) is its pool's business, in worker.c, so that this module needs
 * nothing of the pool.
 */
#include "idle/latch.h"

#include "idle/leave.h"
#include "os/futex.h"
#include "os/clock.h"
#include "obs/stats.h"

void weft__latch_set_outside(weft__latch *l) {
    _Atomic uint32_t *word = &l->state;
    weft__debug_yield();
    /* Release: publishes the job's writes to the owner's acquire probe. */
    uint32_t old = atomic_exchange_explicit(word, WEFT__LATCH_SET, memory_order_release);
    weft__debug_yield();
    if (old == WEFT__LATCH_SLEEPING)
        weft__os_wake_one(word); /* safe even if the owner already freed it */
}

bool weft__latch_get_sleepy(weft__latch *l) {
    weft__debug_yield();
    uint32_t expected = WEFT__LATCH_UNSET;
    /* Relaxed: only the state matters; a set latch is re-probed with acquire. */
    return atomic_compare_exchange_strong_explicit(&l->state, &expected, WEFT__LATCH_SLEEPY,
                                                   memory_order_relaxed, memory_order_relaxed);
}

bool weft__latch_fall_asleep(weft__latch *l) {
    weft__debug_yield();
    uint32_t expected = WEFT__LATCH_SLEEPY;
    /* Relaxed: made under the owner's sleep lock, which a setter that sees
     * SLEEPING takes before it wakes us: the lock orders the rest. */
    return atomic_compare_exchange_strong_explicit(&l->state, &expected, WEFT__LATCH_SLEEPING,
                                                   memory_order_relaxed, memory_order_relaxed);
}

void weft__latch_wake_up(weft__latch *l) {
    weft__debug_yield();
    uint32_t expected = WEFT__LATCH_SLEEPING;
    /* Relaxed: failure means SET, which the owner re-probes with acquire. */
    atomic_compare_exchange_strong_explicit(&l->state, &expected, WEFT__LATCH_UNSET,
                                            memory_order_relaxed, memory_order_relaxed);
}

bool weft__latch_poll_until(weft__latch *l, bool (*stop)(void *arg), void *arg,
                            uint64_t budget_ns) {
    uint64_t start = weft__now_ns();
    do {
        for (int i = 0; i < 64; i++) {
            /* Acquire: pairs with the setter's release exchange. */
            if (atomic_load_explicit(&l->state, memory_order_acquire) == WEFT__LATCH_SET)
                return true;
            weft__cpu_relax();
        }
    } while (!(stop && stop(arg)) && weft__now_ns() - start < budget_ns);
    return false;
}

/* The owner of an outside latch (an outside thread; a pool's creator
 * waiting for its new workers to start, worker.c) with nothing left to run
 * meets an idle worker's choice (leave.c): poll, or block and pay for a
 * wake-up. It polls for as long as blocking would cost it (its futex wait
 * and both context switches): a job that ends within that is met at once,
 * and a longer one costs the owner at most twice what blocking at once
 * would. Not for the waker's share of the round trip too, as a worker
 * searches: a poller holds a CPU that the job it waits for may need, which
 * that sum does not count (docs/performance.md measures it). A context,
 * which waits inside its own call, polls longer (context.c). */
void weft__latch_wait_outside(weft__latch *l) {
    if (weft__latch_poll_until(l, NULL, NULL, weft__leave_block_cpu_ns()))
        return;
    /* Acquire: pairs with the setter's release exchange. */
    uint32_t s = atomic_load_explicit(&l->state, memory_order_acquire);
    while (s != WEFT__LATCH_SET) {
        weft__debug_yield();
        if (s == WEFT__LATCH_UNSET) {
            /* Announce that we block; a failed CAS reloads s (maybe SET). */
            if (!atomic_compare_exchange_weak_explicit(&l->state, &s, WEFT__LATCH_SLEEPING,
                                                       memory_order_acquire, memory_order_acquire))
                continue;
            s = WEFT__LATCH_SLEEPING;
        }
        weft__os_wait(&l->state, WEFT__LATCH_SLEEPING);
        /* Acquire: pairs with the setter's release exchange. */
        s = atomic_load_explicit(&l->state, memory_order_acquire);
    }
}

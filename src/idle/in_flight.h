/* SPDX-License-Identifier: MIT */
/* Wake-ups in flight: workers a waker has woken that have not yet counted
 * themselves searching again (sleep.c, invariant 2), and the wake-ups that
 * posters left to them.
 *
 * The problem. A poster that finds a sleeper and nobody searching wakes one
 * (sleep.c, new_jobs). A woken worker is not counted idle until it runs, so
 * every post of a burst that comes before the first woken worker runs finds
 * nobody searching and wakes another sleeper, though the first, once it
 * runs, would have taken the jobs in the time the others take to wake: the
 * later wake-ups find the queue empty and sleep again, each costing a futex
 * call and a time slice.
 *
 * The rule. A post onto a non-empty queue (the idle workers already have a
 * job in front of them) while the newest wake-up in flight is not yet due
 * leaves its wake-ups to that worker (`owed`): when it arrives it wakes them
 * if work is still waiting. A wake-up is due once it has taken as long as
 * its worker's wake-ups take lately (the leave policy measures each
 * worker's); one overdue is a worker that waits for a CPU (on a busy or
 * virtualised machine, for milliseconds): nothing is left to it, and the
 * post wakes as before. A post onto an empty queue always wakes: the worker
 * in flight has the first job to take.
 *
 * Why no job is lost. The poster read the counters (seq-cst) and saw nobody
 * searching, then read `waking` (seq-cst) non-zero: a worker W was woken
 * (its waker's increment precedes the AWAKE store that W acquires) and has
 * not arrived (W decrements after it counts itself searching). Had W counted
 * itself searching before the poster's counter read, the poster would have
 * seen it searching: a woken worker that counts itself back before its waker
 * uncounts it is, for that moment, counted inactive twice and sleeping once
 * (invariant 1), so one more searcher. So W's count follows the poster's read
 * in the single total order: W is a searcher that the poster could have
 * seen, and is bound as every searcher is (the SleepFence and final check
 * before it sleeps, the hand-over when it leaves last). `owed` only restores
 * the parallelism the posters asked for; progress does not depend on it. */
#ifndef WEFT_IN_FLIGHT_H
#define WEFT_IN_FLIGHT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "os/clock.h"

typedef struct weft__in_flight {
    /* Written on every wake-up and arrival: a line of its own. */
    alignas(WEFT__CACHELINE) _Atomic unsigned waking; /* A: woken by a waker, not yet arrived */
    _Atomic unsigned owed;                            /* A: wake-ups posters left to them */
    _Atomic uint64_t due_ns; /* A: when the newest of them is due to arrive */
} weft__in_flight;

static inline void weft__in_flight_init(weft__in_flight *f) {
    atomic_init(&f->waking, 0);
    atomic_init(&f->owed, 0);
    atomic_init(&f->due_ns, 0);
}

/* A waker woke, at `now`, a worker whose wake-ups take `latency_ns` lately,
 * before its AWAKE store (sleep.c). */
static inline void weft__in_flight_woken(weft__in_flight *f, uint64_t now, uint64_t latency_ns) {
    /* Relaxed: a hint; an earlier value only makes a poster wake. */
    atomic_store_explicit(&f->due_ns, now + latency_ns, memory_order_relaxed);
    /* Seq-cst: the proof above orders it with the counters; the AWAKE store
     * after it (release) makes it precede the worker's arrival, so `waking`
     * never counts an arrival before its wake-up. */
    atomic_fetch_add_explicit(&f->waking, 1, memory_order_seq_cst);
}

/* A post onto a non-empty queue, whose counter read found nobody searching,
 * would wake `want`: leave them to a wake-up in flight not yet due? */
static inline bool weft__in_flight_defer(weft__in_flight *f, unsigned want) {
    /* Seq-cst: after the poster's counter read in the total order (above). */
    if (atomic_load_explicit(&f->waking, memory_order_seq_cst) == 0)
        return false;
    /* Relaxed: a hint (above). */
    if (weft__now_ns() >= atomic_load_explicit(&f->due_ns, memory_order_relaxed))
        return false; /* it waits for a CPU: wake as before */
    /* Relaxed: the arrival's exchange takes it whenever it lands; one that
     * lands after it waits for the next arrival, which progress allows. */
    atomic_fetch_add_explicit(&f->owed, want, memory_order_relaxed);
    return true;
}

/* A woken worker counted itself searching again. Returns the wake-ups left
 * to it. */
static inline unsigned weft__in_flight_arrive(weft__in_flight *f) {
    /* Seq-cst: after our count in the total order (above). */
    atomic_fetch_sub_explicit(&f->waking, 1, memory_order_seq_cst);
    /* Relaxed: what it reads decides parallelism, not progress. */
    return atomic_exchange_explicit(&f->owed, 0, memory_order_relaxed);
}

#endif

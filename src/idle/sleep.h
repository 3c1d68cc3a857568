/* SPDX-License-Identifier: MIT */
/* The sleep module: when an idle worker sleeps, and whom a new job or a set
 * latch wakes. The interface of both protocols (weft_config.wake): targeted
 * (Rayon's sleep RFC and module, sleep.c) and wake-all (the legacy Rayon
 * sleep, wake_all.c); each entry point dispatches once. How long a worker
 * searches first is the leave policy's decision (leave.c). docs/sleep.md. */
#ifndef WEFT_SLEEP_H
#define WEFT_SLEEP_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "idle/idle.h"
#include "idle/in_flight.h"
#include "idle/latch.h"
#include "idle/leave.h"
#include "os/clock.h"
#include "os/thread.h"
#include "idle/wake_all.h"

/* A sleep slot (one per worker and per context): its futex word and the lock
 * a waker takes to be sure a counted sleeper has reached the word (the sleep
 * RFC's is_blocked mutex). */
enum { WEFT__SLOT_AWAKE = 0, WEFT__SLOT_DROWSY, WEFT__SLOT_ASLEEP };

typedef struct weft__sleep_slot {
    alignas(WEFT__CACHELINE) pthread_mutex_t lock;
    _Atomic uint32_t word; /* A: written under lock; futex word while ASLEEP */
    uint64_t woken_at_ns;  /* L: when a waker woke it; 0: not since it last ran */
    uint64_t wake_ns;      /* L: its wake-ups' latency lately (its leave.wake_ns), for wakers */
    bool sampled;          /* L: this sleep's CPU is measured, and so is its wake call */
    uint32_t flow;         /* L: trace flow id of the wake-up (trace.c) */
    weft__leave leave;     /* O: the worker's history, for the leave policy */
} weft__sleep_slot;

typedef struct weft__sleep {
    /* Targeted protocol: JEC (bits 32-63) | inactive (16-31) | sleeping (0-15). */
    alignas(WEFT__CACHELINE) _Atomic uint64_t counters; /* A */
    /* Set before the pool is published. */
    alignas(WEFT__CACHELINE) weft__sleep_slot *slots; /* I */
    unsigned threads;                                 /* I: workers (slots 0..threads-1) */
    unsigned spares_first;                            /* I: spare workers: slots from here */
    unsigned nslots;                                  /* I: workers, contexts, callers, spares */
    bool wake_all;                                    /* I: WEFT_WAKE_ALL */
    const weft__idle_env *env;                        /* I: what the pool provides */
    weft__leave_pool leave;    /* the leave policy's pool-wide state (leave.c) */
    weft__wake_all all;        /* the wake-all protocol's state (wake_all.c) */
    weft__in_flight in_flight; /* wake-ups in flight, and those left to them (in_flight.h) */
} weft__sleep;

/* threads workers, slots sleepers in all (contexts and callers too), the
 * slots from spares_first spare workers (core/spare.c), which search and
 * sleep as workers do while they run; cpus: the CPUs the process may use,
 * for the leave policy's test of oversubscription. */
WEFT__HIDDEN int weft__sleep_init(weft__sleep *s, const weft__idle_env *env, unsigned threads,
                                  unsigned spares_first, unsigned slots, unsigned cpus,
                                  bool wake_all, bool leave_fast);

/* Does slot i search and sleep as a worker, counted in the counters: a
 * worker's or a spare's, not a context's or caller's? */
static inline bool weft__sleep_slot_searches(const weft__sleep *s, unsigned i) {
    return i < s->threads || i >= s->spares_first;
}
WEFT__HIDDEN void weft__sleep_destroy(weft__sleep *s);
/* weft__sleep_destroy in a fork child, for a parent's pool: frees the memory
 * without destroying the locks, which threads that did not survive the fork
 * may have held. */
WEFT__HIDDEN void weft__sleep_abandon(weft__sleep *s);

/* A worker starts searching for work (before its first search, and after
 * each job). */
WEFT__HIDDEN void weft__sleep_start_looking(weft__sleep *s, weft__idle *idle, unsigned index,
                                            weft__stats *stats);
/* The search found a job. `more`: the place it took its job from still had
 * work, so another idle thread is worth having. */
WEFT__HIDDEN void weft__sleep_work_found(weft__sleep *s, weft__idle *idle, bool more);

/* The search loop ends because its latch is set (not because work was
 * found); hands over to a sleeper if it was the last searcher (see sleep.c). */
WEFT__HIDDEN void weft__sleep_stop_looking(weft__sleep *s, weft__idle *idle);

/* A search found nothing: search again, get sleepy, or sleep until woken
 * (new work, or latch set). Returns when the caller should search again. */
WEFT__HIDDEN void weft__sleep_no_work_found(weft__sleep *s, weft__idle *idle, weft__latch *latch);

/* The targeted protocol's counter word (JEC bits 32-63, inactive 16-31,
 * sleeping 0-15), decoded: every reader goes through these, and sleep.c's
 * ONE_* constants are the only other code that knows the layout. */
static inline unsigned weft__counters_sleeping(uint64_t c) {
    return (unsigned)(c & 0xffff);
}

static inline unsigned weft__counters_inactive(uint64_t c) {
    return (unsigned)((c >> 16) & 0xffff);
}

static inline uint32_t weft__counters_jec(uint64_t c) {
    return (uint32_t)(c >> 32);
}

/* An even JEC: a worker got sleepy and no job was posted since. */
static inline bool weft__counters_jec_sleepy(uint64_t c) {
    return (weft__counters_jec(c) & 1) == 0;
}

/* c with its JEC replaced by jec (the debug hook that tests wrap-around). */
static inline uint64_t weft__counters_with_jec(uint64_t c, uint32_t jec) {
    return ((uint64_t)jec << 32) | (c & 0xffffffffu);
}

/* n jobs were pushed on a worker's deque (and shared): update the JEC and
 * wake sleepers if too few workers search. No fence: a missed wake-up here
 * costs parallelism, never progress, since the pusher runs its own deque. */
WEFT__HIDDEN WEFT__COLD void weft__sleep_new_jobs_cold(weft__sleep *s, unsigned n,
                                                       bool queue_was_empty);

/* new_jobs_cold's early exit, inline: nobody sleepy (odd JEC) and nobody
 * asleep means nobody to warn or wake. */
static inline void weft__sleep_new_jobs(weft__sleep *s, unsigned n, bool queue_was_empty) {
    if (WEFT__LIKELY(!s->wake_all)) {
        /* Seq-cst, like every counter access (sleep.c). */
        uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
        if (weft__counters_sleeping(c) == 0 && !weft__counters_jec_sleepy(c))
            return;
    }
    weft__sleep_new_jobs_cold(s, n, queue_was_empty);
}

/* Should a pusher share its private jobs unasked? Targeted: when a worker
 * sleeps and none searches: then the share's post wakes one (new_jobs). A
 * searcher needs no share: it asks the deques it finds empty (movesplit),
 * takes a job by force before it sleeps (deque.c), and hands over to a
 * sleeper if it leaves last while a job is queued, private ones included
 * (weft__idle_left_behind); sharing for it cost a CAS on every fork of a
 * pool with more workers than CPUs, whose idle workers search without a CPU
 * to run on. Wake-all: is any worker sleepy or asleep? Checked on every
 * push, so it is one load of a line that is written only when workers go
 * idle or busy. Seq-cst, like every access to these words (sleep.c); a stale
 * answer costs parallelism, never progress. */
static inline bool weft__sleep_wants_work(weft__sleep *s) {
    if (WEFT__UNLIKELY(s->wake_all))
        return weft__wake_all_wants_work(&s->all);
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    unsigned sleepers = weft__counters_sleeping(c);
    return sleepers != 0 && weft__counters_inactive(c) == sleepers;
}

/* An outside thread is about to submit work it waits for (weft_run): the
 * end of a quiet period of the pool's rhythm (leave.c). */
static inline void weft__sleep_arrival(weft__sleep *s) {
    if (WEFT__LIKELY(!s->wake_all))
        weft__rhythm_arrival(&s->leave.rhythm, weft__now_ns());
}

/* An outside caller begins and ends a call it takes part in (callers.c):
 * its rhythm counts the caller as one of the pool's threads meanwhile. */
static inline void weft__sleep_call_begin(weft__sleep *s) {
    if (WEFT__LIKELY(!s->wake_all))
        weft__rhythm_call_begin(&s->leave.rhythm, weft__now_ns());
}

static inline void weft__sleep_call_end(weft__sleep *s) {
    if (WEFT__UNLIKELY(s->wake_all) || !weft__rhythm_call_end(&s->leave.rhythm))
        return;
    /* Seq-cst, like every counter access, and after the call's end: either
     * we see the last worker inactive, or it sees no call (rhythm.c). */
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    if (weft__counters_inactive(c) == s->threads)
        weft__rhythm_quiet(&s->leave.rhythm, weft__now_ns());
}

/* A worker thread starts: how it waits and wakes on the OS. Its timers fire
 * without slack (the leave policy's timed waits), and in the targeted
 * protocol it runs as batch work (os/thread.h). Not under wake-all, whose tickle
 * wakes every sleeper and leaves those that find nothing searching: a woken
 * worker that may not preempt them waits out their time slices
 * (docs/sleep.md). */
static inline void weft__sleep_thread_start(const weft__sleep *s) {
    weft__os_precise_timers();
    if (!s->wake_all)
        weft__os_batch_policy();
}

/* n jobs were pushed into the injector (includes the PushFence). */
WEFT__HIDDEN void weft__sleep_new_injected_jobs(weft__sleep *s, unsigned n, bool queue_was_empty);

/* Wake every sleeping worker (a phase's warm-up). */
WEFT__HIDDEN void weft__sleep_wake_sleepers(weft__sleep *s);

/* Set latch l, owned by a worker or a context of this pool, and wake its
 * owner if it sleeps on it. l may be freed by its owner as soon as it reads
 * SET: it is not touched after the swap. */
WEFT__HIDDEN void weft__sleep_set_latch(weft__sleep *s, weft__latch *l);

/* l's owner, a context of this pool asleep on it (context.c), is woken
 * without l being set: the job it waits for shared work it may take back. A
 * no-op unless it sleeps on l now; one that falls asleep meanwhile sleeps on
 * (a hint). The caller checked that l is a context's of this pool
 * (weft__latch_owned_by_context): its owner indexes this pool's slots. */
WEFT__HIDDEN void weft__sleep_nudge_context(weft__sleep *s, weft__latch *l);

/* Test hooks: read the counters; force the jobs event counter (to test
 * wrap-around). Seq-cst, like every counter access. */
static inline uint64_t weft__sleep_debug_counters(weft__sleep *s) {
    return atomic_load_explicit(&s->counters, memory_order_seq_cst);
}

static inline void weft__sleep_debug_set_jec(weft__sleep *s, uint32_t jec) {
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    while (!atomic_compare_exchange_weak_explicit(&s->counters, &c, weft__counters_with_jec(c, jec),
                                                  memory_order_seq_cst, memory_order_seq_cst)) {
    }
}

#endif

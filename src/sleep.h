/* SPDX-License-Identifier: MIT */
/* The sleep module: when idle workers search, sleep, and whom to wake.
 * Two protocols (weft_config.wake): targeted (Rayon's sleep RFC and module) and
 * wake-all (the legacy Rayon sleep). See sleep.c and docs/sleep.md. */
#ifndef WEFT_SLEEP_H
#define WEFT_SLEEP_H

#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "latch.h"
#include "leave.h"
#include "phase.h"
#include "stats.h"

typedef struct weft_pool weft_pool;

/* A worker's sleep slot: its futex word and the lock a waker takes to be sure
 * a counted sleeper has reached the word (the sleep RFC's is_blocked mutex). */
enum { WEFT__SLOT_AWAKE = 0, WEFT__SLOT_DROWSY, WEFT__SLOT_ASLEEP };

typedef struct weft__sleep_slot {
    alignas(WEFT__CACHELINE) pthread_mutex_t lock;
    _Atomic uint32_t word; /* A: written under lock; futex word while ASLEEP */
    weft__leave leave;     /* the worker's history for the leave policy */
    uint32_t flow;         /* L: trace flow id of the wake-up (trace.c) */
} weft__sleep_slot;

typedef struct weft__sleep {
    /* Targeted protocol: JEC (bits 32-63) | inactive (16-31) | sleeping (0-15). */
    alignas(WEFT__CACHELINE) _Atomic uint64_t counters; /* A */
    /* Wake-all protocol: sleepy worker + 1 (bits 1..) | anyone asleep (bit 0). */
    alignas(WEFT__CACHELINE) _Atomic uint64_t legacy_state; /* A */
    alignas(WEFT__CACHELINE) pthread_mutex_t legacy_lock;
    _Atomic uint32_t legacy_epoch; /* A: written under legacy_lock; futex word */
    /* Set before the pool is published. */
    alignas(WEFT__CACHELINE) weft__sleep_slot *slots; /* I */
    unsigned threads;                                 /* I: workers (slots 0..threads-1) */
    unsigned nslots;                                  /* I: workers + contexts */
    bool wake_all;                                    /* I: WEFT_WAKE_ALL */
    bool leave_fast;                                  /* I: WEFT_LEAVE_FAST */
    unsigned cpus;                                    /* I: CPUs this process may use */
    unsigned legacy_rounds;                           /* I: wake-all: rounds before sleepy */
    weft_pool *pool;                                  /* I: for the final injector check */
    weft__phase phase;                                /* parallel phases (phase.c) */
    alignas(WEFT__CACHELINE) weft__rhythm rhythm;     /* the pool's idle periods (leave.c) */
    _Atomic uint64_t wake_call_cpu_ns; /* running median of a waker's CPU across a sampled
                                          wake call; 0: none measured (leave.c) */
} weft__sleep;

/* A worker's search state, local to one search loop. */
struct weft__idle {
    unsigned index;     /* the searching worker */
    bool sleepy;        /* targeted: announced in the JEC; one more search, then sleep */
    bool spent;         /* targeted: get sleepy after the next fruitless search */
    unsigned backoff;   /* pauses before the next round (leave.c) */
    unsigned rounds;    /* wake-all: fruitless searches so far (legacy Rayon) */
    uint32_t jec;       /* targeted: the JEC seen when we got sleepy */
    weft__stats *stats; /* the worker's statistics */
    uint64_t search_ns; /* the current search began (statistics); 0: none */
    uint64_t idle_ns;   /* this idle period's first fruitless search; 0: none */
};

WEFT__HIDDEN int weft__sleep_init(weft__sleep *s, weft_pool *pool, unsigned threads, unsigned slots,
                                  bool wake_all, bool leave_fast);
WEFT__HIDDEN void weft__sleep_destroy(weft__sleep *s);
/* weft__sleep_destroy in a fork child, for a parent's pool: frees the memory
 * without destroying the slots' locks, which threads that did not survive
 * the fork may have held. */
WEFT__HIDDEN void weft__sleep_abandon(weft__sleep *s);

/* A worker starts / stops searching for work. `more`: the place it took its
 * job from still had work, so another idle thread is worth having. */
WEFT__HIDDEN void weft__sleep_start_looking(weft__sleep *s, weft__idle *idle, unsigned index,
                                            weft__stats *stats);
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
    if (!s->wake_all) {
        /* Seq-cst, like every counter access (sleep.c). */
        uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
        if (weft__counters_sleeping(c) == 0 && !weft__counters_jec_sleepy(c))
            return;
    }
    weft__sleep_new_jobs_cold(s, n, queue_was_empty);
}

/* Could another worker use a new job now? Targeted: is any worker inactive
 * (searching, sleepy or asleep)? Wake-all: is any worker sleepy or asleep?
 * Checked on every push, so it is one load of a line that is written only
 * when workers go idle or busy. Seq-cst, like every access to these words
 * (sleep.c); a stale answer costs parallelism, never progress. */
static inline bool weft__sleep_wants_work(weft__sleep *s) {
    if (!s->wake_all)
        return weft__counters_inactive(atomic_load_explicit(&s->counters, memory_order_seq_cst)) !=
               0;
    return atomic_load_explicit(&s->legacy_state, memory_order_seq_cst) != 0;
}

/* n jobs were pushed into the injector (includes the PushFence). */
WEFT__HIDDEN void weft__sleep_new_injected_jobs(weft__sleep *s, unsigned n, bool queue_was_empty);

/* A context (slot index >= threads) sleeps until its latch is set. */
WEFT__HIDDEN void weft__sleep_owner_wait(weft__sleep *s, unsigned index, weft__latch *latch);

/* Wake every sleeping worker (a phase's warm-up). */
WEFT__HIDDEN void weft__sleep_wake_sleepers(weft__sleep *s);

/* A latch owned by worker `owner` was set; `was_sleeping`: its owner had
 * marked it SLEEPING. */
WEFT__HIDDEN void weft__sleep_latch_set(weft__sleep *s, unsigned owner, bool was_sleeping);

/* Test hooks. weft__sleep_debug_hook, when set, is called on the sleeping
 * worker's thread at these points of the (cold) falling-asleep path, so tests
 * can inject interleavings or random yields there (liburcu's debug-yield). */
typedef enum {
    WEFT__DEBUG_BEFORE_LOCK,  /* targeted: sleepy, searched once more, about to lock its slot */
    WEFT__DEBUG_BEFORE_COUNT, /* targeted: sleepy, about to check the JEC and count */
    WEFT__DEBUG_BEFORE_FINAL_CHECK,   /* targeted: counted, before the SleepFence */
    WEFT__DEBUG_LEGACY_BEFORE_ASLEEP, /* wake-all: sleepy, about to mark itself asleep */
    WEFT__DEBUG_WOKEN,                /* targeted: woken, before it counts itself searching */
    WEFT__DEBUG_LEAVING,              /* its latch is set: about to stop searching */
} weft__debug_point;
WEFT__HIDDEN extern void (*_Atomic weft__sleep_debug_hook)(weft__sleep *s, weft__debug_point p);

/* Test hook: force the jobs event counter (to test wrap-around). */
WEFT__HIDDEN void weft__sleep_debug_set_jec(weft__sleep *s, uint32_t jec);
WEFT__HIDDEN uint64_t weft__sleep_debug_counters(weft__sleep *s);

#endif

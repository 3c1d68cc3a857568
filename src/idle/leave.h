/* SPDX-License-Identifier: MIT */
/* The leave policy: how long an idle worker searches before it sleeps, and
 * when a sleeping worker should wake itself. Decisions only: it reads no
 * counter and wakes nobody; the sleep protocols (sleep.c, wake_all.c) pass
 * in what it needs and do what it says. See the table at the top of leave.c. */
#ifndef WEFT_LEAVE_H
#define WEFT_LEAVE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "idle/rhythm.h"

/* ---- Parallel phases (oneTBB's; the public calls are in phase.c) ---------
 *
 * A pool's phase state. Any thread writes it (phase.c, and submissions end a
 * one-time fast leave); idle workers read it on every search round. Relaxed
 * throughout: hints, whose staleness makes a worker search a little longer
 * or sleep a little sooner, never loses a wake-up (the sleep protocols do not
 * depend on it). */
typedef struct weft__phase {
    alignas(WEFT__CACHELINE) _Atomic uint32_t active; /* A: phases begun and not ended */
    _Atomic uint32_t fast_once;                       /* A: the last end asked for a fast leave */
    _Atomic uint32_t begins; /* A: phases begun so far (wrapping): tells a worker that got
                                sleepy before a warm-up that it missed it (sleep.c) */
} weft__phase;

/* How long a worker inside a phase searches with no work at all before it
 * sleeps anyway: a forgotten weft_phase_end stops burning cores after it, and
 * at 10 ms a wake-up (tens of microseconds) is under 1% of the gap a search
 * would bridge, so searching longer buys nothing. */
#define WEFT__PHASE_RETAIN_NS ((uint64_t)10 * 1000 * 1000)

static inline void weft__phase_init(weft__phase *p) {
    atomic_init(&p->active, 0);
    atomic_init(&p->fast_once, 0);
    atomic_init(&p->begins, 0);
}

static inline bool weft__phase_active(const weft__phase *p) {
    return atomic_load_explicit(&p->active, memory_order_relaxed) != 0;
}

/* Acquire: pairs with weft_phase_begin's release increment, so a worker that
 * sees a begin also sees that phase active (sleep.c takes its snapshot before
 * the leave policy reads `active`). */
static inline uint32_t weft__phase_begins(const weft__phase *p) {
    return atomic_load_explicit(&p->begins, memory_order_acquire);
}

static inline bool weft__phase_fast_leave(const weft__phase *p) {
    return atomic_load_explicit(&p->fast_once, memory_order_relaxed) != 0;
}

/* New work arrived: a one-time fast leave is over (oneTBB: "restored when
 * new work is submitted"). Called on the cold submission paths only. */
static inline void weft__phase_new_work(weft__phase *p) {
    if (WEFT__UNLIKELY(weft__phase_fast_leave(p)))
        atomic_store_explicit(&p->fast_once, 0, memory_order_relaxed);
}

/* weft_pool_destroy: a pool destroyed inside a phase ends it (as oneTBB). */
static inline void weft__phase_end_all(weft__phase *p) {
    atomic_store_explicit(&p->active, 0, memory_order_relaxed);
}

/* Benchmark builds only (bench/CMakeLists.txt builds the library again with
 * it): idle workers never sleep (the "always search" column of the policy
 * table). */
#ifndef WEFT__LEAVE_ALWAYS_SEARCH
#define WEFT__LEAVE_ALWAYS_SEARCH 0
#endif

/* The idle policy's rules that an ablation can switch off, one at a time
 * (leave.c's table says what each does). Benchmark builds only:
 * bench/CMakeLists.txt builds the library once per rule with
 * WEFT__POLICY_OFF set to its name, and `make bench-policy` measures each
 * against the whole policy in interleaved runs. */
enum {
    WEFT__OFF_NONE,
    WEFT__OFF_SPENT,    /* A: a search after a posted job's back-out is the last */
    WEFT__OFF_WANTED,   /* B: the CPU budget wants the slot: sleep */
    WEFT__OFF_DUE,      /* 4: the pool's work is due: search */
    WEFT__OFF_IMPLICIT, /* 5: an implicit phase: search */
    WEFT__OFF_GAIN,     /* 6: searching lost more than it saved: sleep */
    WEFT__OFF_SEARCH,   /* 7: search for up to the budget (off: sleep at once) */
    WEFT__OFF_SELFWAKE, /* a sleeper wakes itself when the pool's work is due */
    WEFT__OFF_DEFER,    /* a poster leaves wake-ups to a worker on its way (in_flight.h) */
    WEFT__OFF_BACKOFF,  /* spin before yielding between search rounds */
};
#ifndef WEFT__POLICY_OFF
#define WEFT__POLICY_OFF WEFT__OFF_NONE
#endif
/* Is rule r (SPENT, WANTED, ...) on? A constant: the compiler drops what a
 * switched-off rule guards. */
#define WEFT__RULE(r) (WEFT__POLICY_OFF != WEFT__OFF_##r)

/* Test hook, relaxed: when nonzero, every sleep of a worker under the
 * automatic policy is timed to end this many ns later (races timed wake-ups
 * against wakers on purpose). */
WEFT__HIDDEN extern _Atomic uint64_t weft__leave_debug_wake_after_ns;

/* What the policy says. */
typedef enum {
    WEFT__LEAVE_SLEEP,     /* get sleepy now (then sleep, maybe until a time) */
    WEFT__LEAVE_SEARCH,    /* search again, after a back-off */
    WEFT__LEAVE_UNDECIDED, /* weft__leave_phase_verdict only: no phase decides */
} weft__leave_verdict;

/* A phase's word, the one rule both protocols share: inside a phase, search
 * for up to WEFT__PHASE_RETAIN_NS since this search began (the last work, or
 * the last wake-up); after a phase ended with a fast leave, sleep at once. */
static inline weft__leave_verdict weft__leave_phase_verdict(const weft__phase *p,
                                                            uint64_t search_ns, uint64_t now) {
    if (weft__phase_active(p))
        return now - search_ns < WEFT__PHASE_RETAIN_NS ? WEFT__LEAVE_SEARCH : WEFT__LEAVE_SLEEP;
    return weft__phase_fast_leave(p) ? WEFT__LEAVE_SLEEP : WEFT__LEAVE_UNDECIDED;
}

/* ---- The automatic policy's state ------------------------------------------ */

/* One worker's history. Owner only. */
typedef struct weft__leave {
    uint64_t wake_ns;      /* moving average: a waker's call to this worker running */
    uint64_t late_ns;      /* moving average: how late a timed wake-up ran */
    uint64_t sleep_cpu_ns; /* running median: the CPU a sampled sleep cost this
                              worker (its wait, both context switches); 0: none yet */
    uint32_t sleeps;       /* sleeps so far, to sample one in SLEEP_SAMPLE */
    int64_t gain_ns;       /* moving average: the CPU a search for the budget saved
                              over each idle period, against sleeping at once */
} weft__leave;

/* The pool's: its rhythm (rhythm.h) and its wakers' share of a sleep's cost. */
typedef struct weft__leave_pool {
    /* Read on every search round: a line of their own, not the rhythm's. */
    alignas(WEFT__CACHELINE) unsigned threads; /* I: workers */
    unsigned cpus;                             /* I: CPUs this process may use */
    bool fast;                                 /* I: WEFT_LEAVE_FAST */
    weft__rhythm rhythm;                       /* its own lines (rhythm.h) */
    _Atomic uint64_t wake_call_ns;             /* running median of a waker's CPU across a sampled
                                                  wake call; 0: none yet. Any thread, relaxed: a hint */
} weft__leave_pool;

/* What a worker with nothing to do knows now. */
typedef struct weft__leave_now {
    uint64_t now;
    uint64_t search_ns;       /* this search began: the last work, or the last wake-up */
    const weft__phase *phase; /* the pool's phases */
    bool spent;               /* this search followed a back-out for a posted job (sleep.c) */
    bool wanted;              /* a thread waits for this worker's CPU budget slot (budget.h) */
} weft__leave_now;

/* How a sleep ended (weft__leave_woke). */
typedef struct weft__leave_wake {
    uint64_t now;      /* running again */
    uint64_t woken_ns; /* a waker woke it then; 0: its own deadline did */
    uint64_t deadline; /* the deadline it slept with; 0: none */
    uint64_t cpu_ns;   /* the sleep's CPU cost, if sampled; 0: not sampled */
} weft__leave_wake;

WEFT__HIDDEN void weft__leave_pool_init(weft__leave_pool *lp, unsigned threads, unsigned cpus,
                                        bool fast);
WEFT__HIDDEN void weft__leave_init(weft__leave *lv);

/* Should this worker search again, or get sleepy? When it says sleep,
 * *wake_at is a time to wake up by itself (0: sleep until woken) and
 * *sampled whether to measure the sleep's CPU cost. (owner) */
WEFT__HIDDEN weft__leave_verdict weft__leave_decide(weft__leave_pool *lp, weft__leave *lv,
                                                    const weft__leave_now *in, uint64_t *wake_at,
                                                    bool *sampled);
/* An idle period of `ns` ended with work found (0: found at once); the pool
 * is busy (rhythm.h). (owner) */
WEFT__HIDDEN void weft__leave_found(weft__leave_pool *lp, weft__leave *lv, uint64_t ns);
/* A sleep ended: learn its costs, and a self-wake's lateness. (owner) */
WEFT__HIDDEN void weft__leave_woke(weft__leave *lv, const weft__leave_wake *w);
/* A waker's sampled wake call cost it `ns` of CPU (any thread). */
WEFT__HIDDEN void weft__leave_wake_call(weft__leave_pool *lp, uint64_t ns);

/* The CPU a block costs the thread that blocks, as last measured by any
 * worker in the process (before any: an unmeasured wake-up's). (any thread) */
WEFT__HIDDEN uint64_t weft__leave_block_cpu_ns(void);

/* The latency of a wake-up, from the waker's call to the sleeper running, as
 * last averaged by any worker in the process (before any: an unmeasured
 * wake-up's); like every measured one, at most WAKE_MAX_NS, a 50th of a
 * phase's bound (leave.c). (any thread) */
WEFT__HIDDEN uint64_t weft__leave_wake_latency_ns(void);

/* Test hook, relaxed: when nonzero, weft__leave_wake_latency_ns returns it. */
WEFT__HIDDEN extern _Atomic uint64_t weft__leave_debug_wake_latency_ns;

/* Pause before the next search round: a few spins, then yields. (owner) */
WEFT__HIDDEN void weft__leave_backoff(unsigned *rounds);

#endif

/* SPDX-License-Identifier: MIT */
/* Leave policies: how long an idle worker keeps searching before it sleeps.
 * See leave.c. */
#ifndef WEFT_LEAVE_H
#define WEFT_LEAVE_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"

/* One worker's history, for the adaptive (automatic) policy. */
typedef struct weft__leave {
    uint64_t wake_cost_ns; /* O: moving average of wake-up to running */
    uint64_t sleep_cpu_ns; /* O: running median of the CPU a sampled sleep cost this
                              worker (its wait's system call, both context
                              switches); 0: none measured */
    uint32_t sleeps;       /* O: sleeps so far, to sample one in SLEEP_SAMPLE */
    bool sampled;          /* L (slot lock): this sleep is sampled, so its waker
                              measures its wake call too */
    uint32_t hit_rate;     /* O: moving average, out of 256, of idle periods that
                              ended within the search budget (leave.c) */
    uint64_t woken_at_ns;  /* L (slot lock): when the waker woke this worker; 0: not
                              since the last record */
    /* Prediction of the idle periods a search does not bridge (leave.c). */
    uint64_t gap_ns;     /* O: moving average of idle periods longer than the budget */
    uint64_t gap_dev_ns; /* O: moving average of their distance from gap_ns */
    uint32_t gaps;       /* O: how many were seen, saturating */
    uint64_t late_ns;    /* O: moving average of how late a timed wake-up ran */
} weft__leave;

/* The pool's rhythm: idle periods of the whole pool (every worker inactive)
 * that end with work an outside thread waits for (leave.c). Written by any
 * thread; relaxed atomics, since they are hints: a lost update costs a
 * prediction, never a job. */
typedef struct weft__rhythm {
    _Atomic uint64_t quiet_ns;   /* when the pool last went quiet; 0: it is not */
    _Atomic uint64_t gap_ns;     /* moving average of those idle periods */
    _Atomic uint64_t gap_dev_ns; /* moving average of their distance from gap_ns */
    _Atomic uint32_t gaps;       /* how many were seen, saturating */
    _Atomic uint32_t joined;     /* workers that found work since the pool was quiet,
                                    saturating at the worker count */
    _Atomic uint32_t width;      /* moving average of joined per busy period, in
                                    1/WEFT__RHYTHM_WIDTH_ONE workers; 0: none seen */
} weft__rhythm;

/* Fixed point of weft__rhythm.width, in 1/256 workers: the moving average
 * stops up to 7 units short of its samples (in 1/16ths that was 0.44
 * workers). */
#define WEFT__RHYTHM_WIDTH_ONE 256

typedef struct weft__idle weft__idle;
typedef struct weft__sleep weft__sleep;

/* Benchmark hooks, relaxed flags: never sleep when idle (the "always search"
 * column of the policy table); no searcher cap. */
WEFT__HIDDEN extern _Atomic bool weft__leave_bench_always_search;
WEFT__HIDDEN extern _Atomic bool weft__leave_bench_no_cap;

/* Test hook, relaxed: when nonzero, every sleep of a worker under the
 * adaptive policy is timed to end this many ns later (races timed wake-ups
 * against wakers on purpose). */
WEFT__HIDDEN extern _Atomic uint64_t weft__leave_debug_wake_after_ns;

WEFT__HIDDEN void weft__leave_init(weft__leave *lv);
/* The worker ran again, woken at lv->woken_at_ns (owner). */
WEFT__HIDDEN void weft__leave_record_wake(weft__leave *lv, uint64_t now);
/* The worker ran again after a timed wait for deadline ran out (owner). */
WEFT__HIDDEN void weft__leave_record_timed_wake(weft__leave *lv, uint64_t deadline, uint64_t now);
/* An idle period of worker `index` lasting `ns` ended with work found (owner). */
WEFT__HIDDEN void weft__leave_record_idle(weft__sleep *s, unsigned index, uint64_t ns);
/* Worker's next sleep: is it sampled for its CPU cost? Sets lv->sampled
 * (owner, under the slot lock). */
WEFT__HIDDEN bool weft__leave_sample_sleep(weft__leave *lv);
/* A sampled sleep cost the sleeper `ns` of CPU (owner). */
WEFT__HIDDEN void weft__leave_record_sleep_cpu(weft__leave *lv, uint64_t ns);
/* A sampled wake call cost its waker `ns` of CPU (any thread). */
WEFT__HIDDEN void weft__leave_record_wake_call(weft__sleep *s, uint64_t ns);
/* Should this worker search again rather than get sleepy? (owner) */
WEFT__HIDDEN bool weft__leave_keep_searching(weft__sleep *s, const weft__idle *idle, uint64_t now);
/* When a worker about to sleep should wake up by itself because work is
 * predicted to return soon after: a CLOCK_MONOTONIC time, or 0 to sleep until
 * woken (owner). */
WEFT__HIDDEN uint64_t weft__leave_wake_at(weft__sleep *s, const weft__idle *idle, uint64_t now);
/* The pool went quiet: the last active worker became inactive (a no-op
 * unless a worker found work since it was last quiet). */
WEFT__HIDDEN void weft__leave_pool_quiet(weft__sleep *s);
/* A worker found work: the pool is no longer quiet, and one more worker
 * joined its busy period. */
WEFT__HIDDEN void weft__leave_pool_busy(weft__sleep *s);
/* An outside thread submits work it will wait for (weft_run). */
WEFT__HIDDEN void weft__leave_pool_arrival(weft__sleep *s);
/* How many workers the pool's busy periods engage, rounded up (0: unknown). */
WEFT__HIDDEN unsigned weft__leave_pool_width(weft__sleep *s);
/* Is the pool's predicted arrival window open (worker `index`'s view)? */
WEFT__HIDDEN bool weft__leave_pool_due(weft__sleep *s, unsigned index, uint64_t now);
/* At most this many workers search at once (UINT_MAX: no cap). */
WEFT__HIDDEN unsigned weft__leave_searcher_cap(weft__sleep *s);
/* Pause before the next search round (owner): a few spins, then yields. */
WEFT__HIDDEN void weft__leave_backoff(weft__idle *idle);

#endif

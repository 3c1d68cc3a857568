/* SPDX-License-Identifier: MIT */
/* The pool's rhythm: the quiet periods of a whole pool (every worker idle,
 * no outside caller in a call) that end with work an outside thread waits
 * for, and how many threads its busy periods engage. The leave policy (leave.c) predicts from it
 * when work that needs every worker will return. See rhythm.c. */
#ifndef WEFT_RHYTHM_H
#define WEFT_RHYTHM_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"

/* Any thread. Relaxed atomics throughout: hints, where a lost or torn update
 * only skews one prediction, never loses a job. */
typedef struct weft__rhythm {
    alignas(WEFT__CACHELINE) _Atomic uint64_t quiet_ns; /* the pool went quiet; 0: it is not */
    _Atomic uint64_t gap_ns;                            /* moving average of its quiet periods */
    _Atomic uint64_t gap_dev_ns; /* moving average of their distance from gap_ns */
    _Atomic uint32_t gaps;       /* quiet periods seen, saturating */
    _Atomic uint32_t joined;     /* workers that found work since the pool was quiet */
    _Atomic uint32_t width;      /* moving average of joined per busy period, in
                                    1/WEFT__RHYTHM_ONE workers; 0: none seen */
    _Atomic uint32_t calls;      /* outside callers' calls running (callers.c) */
    _Atomic uint32_t called;     /* calls begun since the pool was quiet */
    _Atomic uint32_t callers;    /* moving average of called per busy period, as width */
    _Atomic uint64_t idle_ns;    /* every worker went inactive while a call ran (0: not since
                                    the pool was last busy or had an arrival) */
} weft__rhythm;

/* Fixed point of weft__rhythm.width. */
#define WEFT__RHYTHM_ONE 256
/* Averages weigh the last 2^WEFT__RHYTHM_HISTORY events (leave.c uses the
 * same weight for its own): enough to ride out one odd sample, few enough to
 * follow a program that changes pace within a few of its periods. */
#define WEFT__RHYTHM_HISTORY 3

/* Moving average: *avg moves 1/2^WEFT__RHYTHM_HISTORY of the way to sample. */
static inline void weft__moving_average(uint64_t *avg, uint64_t sample) {
    *avg += ((int64_t)sample - (int64_t)*avg) / (1 << WEFT__RHYTHM_HISTORY);
}

WEFT__HIDDEN void weft__rhythm_init(weft__rhythm *r);

/* A worker of `threads` found work: the pool is busy, one more joined. */
WEFT__HIDDEN void weft__rhythm_busy(weft__rhythm *r, unsigned threads);
/* The pool went quiet (every worker inactive); a no-op if nobody found work
 * since it last was. */
WEFT__HIDDEN void weft__rhythm_quiet(weft__rhythm *r, uint64_t now);
/* An outside thread submits work it will wait for (weft_run): the end of a
 * quiet period. */
WEFT__HIDDEN void weft__rhythm_arrival(weft__rhythm *r, uint64_t now);

/* An outside caller begins a call it takes part in (callers.c): work it
 * waits for arrives, and one more thread joined the busy period. */
WEFT__HIDDEN void weft__rhythm_call_begin(weft__rhythm *r, uint64_t now);
/* The call ended; true if it was the last one running: then the caller
 * reads the workers' counters and, if none is active, the pool went quiet
 * (weft__rhythm_quiet). */
WEFT__HIDDEN bool weft__rhythm_call_end(weft__rhythm *r);

/* Do the pool's busy periods engage more than `threads` (in
 * 1/WEFT__RHYTHM_ONE), workers and callers together? */
static inline bool weft__rhythm_wider_than(const weft__rhythm *r, uint64_t threads) {
    return (uint64_t)atomic_load_explicit(&r->width, memory_order_relaxed) +
               atomic_load_explicit(&r->callers, memory_order_relaxed) >
           threads;
}

/* Is the rhythm trusted, for a worker whose wake-up costs `wake_ns`, where
 * `loose` (busy periods wider than the CPUs) accepts a deviation within one
 * wake-up as regular? If so and the pool is quiet, [*lo, *hi) is the window
 * in which work should end the quiet period, hi late by one wake-up (lo is
 * not early by one: how early to be there is the sleeper's, leave.c); *lo =
 * *hi = 0 while the pool is busy. With `tail`, a pool whose workers all ran
 * out while a call still ran counts as quiet since then (idle_ns), until the
 * call's end is recorded: the earliest its quiet period can begin, so a
 * window from it is never late. */
WEFT__HIDDEN bool weft__rhythm_window(const weft__rhythm *r, uint64_t wake_ns, bool loose,
                                      bool tail, uint64_t *lo, uint64_t *hi);

#endif

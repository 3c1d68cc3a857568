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
    uint32_t hit_rate;     /* O: moving average, out of 256, of idle periods that
                              ended within wake_cost_ns */
    uint64_t woken_at_ns;  /* L (slot lock): when the waker woke this worker */
} weft__leave;

typedef struct weft__idle weft__idle;
typedef struct weft__sleep weft__sleep;

/* Benchmark hooks, relaxed flags: never sleep when idle (the "always search"
 * column of the policy table); no searcher cap. */
WEFT_HIDDEN extern _Atomic bool weft__leave_bench_always_search;
WEFT_HIDDEN extern _Atomic bool weft__leave_bench_no_cap;

WEFT_HIDDEN void weft__leave_init(weft__leave *lv);
/* The worker ran again, woken at lv->woken_at_ns (owner). */
WEFT_HIDDEN void weft__leave_record_wake(weft__leave *lv, uint64_t now);
/* An idle period of `ns` ended with work found (owner). */
WEFT_HIDDEN void weft__leave_record_idle(weft__leave *lv, uint64_t ns);
/* Should this worker search again rather than get sleepy? (owner) */
WEFT_HIDDEN bool weft__leave_keep_searching(weft__sleep *s, const weft__idle *idle, uint64_t now);
/* Pause before the next search round (owner): a few spins, then yields. */
WEFT_HIDDEN void weft__leave_backoff(weft__idle *idle);

#endif

/* SPDX-License-Identifier: MIT */
/* Statistics of idle workers (idle.h), kept alike by both sleep protocols.
 * Owner only; relaxed stores, as every statistic (stats.h). */
#include "idle/idle.h"
#include "os/clock.h"

void (*_Atomic weft__idle_debug_hook)(void *pool, weft__debug_point p);

static void search_begin(weft__idle *idle, uint64_t now) {
    idle->search_ns = now;
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&idle->stats->search_since, now, memory_order_relaxed);
}

uint64_t weft__idle_missed(weft__idle *idle) {
    uint64_t now = weft__now_ns();
    if (!idle->search_ns)
        search_begin(idle, now);
    if (!idle->idle_ns)
        idle->idle_ns = now;
    return now;
}

void weft__idle_search_end(weft__idle *idle, uint64_t now) {
    if (idle->search_ns) {
        weft__stat_add(&idle->stats->search_ns, now - idle->search_ns);
        /* Relaxed: statistics only (stats.h). */
        atomic_store_explicit(&idle->stats->search_since, 0, memory_order_relaxed);
    }
    idle->search_ns = 0;
}

uint64_t weft__idle_sleep_begin(weft__idle *idle, const _Atomic bool *tracing) {
    weft__stats *st = idle->stats;
    uint64_t now = weft__now_ns();
    weft__idle_search_end(idle, now);
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&st->asleep_since, now, memory_order_relaxed);
    weft__stat_add(&st->sleeps, 1);
    if (st->woken_without_job)
        weft__stat_add(&st->futile_wakeups, 1);
    weft__trace(tracing, &st->trace, WEFT__TRACE_SLEEP, 0);
    weft__budget_block();
    return now;
}

uint64_t weft__idle_sleep_end(weft__idle *idle, uint64_t slept_at) {
    weft__stats *st = idle->stats;
    uint64_t now = weft__now_ns();
    weft__stat_add(&st->sleep_ns, now - slept_at);
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&st->asleep_since, 0, memory_order_relaxed);
    weft__stat_add(&st->wakeups, 1);
    st->woken_without_job = true;
    search_begin(idle, now);
    return now;
}

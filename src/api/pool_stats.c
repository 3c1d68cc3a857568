/* SPDX-License-Identifier: MIT */
/* weft_pool_stats: what a pool's workers did, summed from their per-worker
 * counters (stats.h), and the jobs that contexts and callers ran in their
 * slots (each slot has the counters of a worker; its holder, one thread at
 * a time, counts jobs and steals in them). The times are the workers':
 * a slot has no thread of the pool's, and counts none. */
#include <assert.h>
#include <string.h>

#include "core/worker.h"

/* A worker's counts; a spare's too (weft_config.spares), but not its times:
 * a spare's life is mostly parked, neither busy nor the pool's sleep. */
static void stats_add_counts(weft_stats *out, const weft__worker *w) {
    const weft__stats *st = &w->stats;
    out->jobs += weft__stat_get(&st->jobs);
    out->steals += weft__stat_get(&st->steals);
    out->forced_steals += weft__stat_get(&st->forced_steals);
    out->injected += weft__stat_get(&st->injected);
    out->sleeps += weft__stat_get(&st->sleeps);
    out->wakeups += weft__stat_get(&st->wakeups);
    out->futile_wakeups += weft__stat_get(&st->futile_wakeups);
    out->early_wakeups += weft__stat_get(&st->early_wakeups);
}

static void stats_add_worker(weft_stats *out, const weft__worker *w, uint64_t now) {
    const weft__stats *st = &w->stats;
    stats_add_counts(out, w);
    /* A search or sleep in progress counts up to now. */
    uint64_t searching = weft__stat_get(&st->search_since);
    uint64_t asleep = weft__stat_get(&st->asleep_since);
    double search = 1e-9 * (double)(weft__stat_get(&st->search_ns) +
                                    (searching && now > searching ? now - searching : 0));
    double sleep = 1e-9 * (double)(weft__stat_get(&st->sleep_ns) +
                                   (asleep && now > asleep ? now - asleep : 0));
    /* started_ns is written before the worker thread starts running jobs;
     * a worker not yet started counts as having lived 0 s. */
    double life =
        st->started_ns && now > st->started_ns ? 1e-9 * (double)(now - st->started_ns) : 0;
    out->search_seconds += search;
    out->sleep_seconds += sleep;
    out->busy_seconds += life > search + sleep ? life - search - sleep : 0;
}

/* A context's or caller slot's jobs and steals (the take-back, context.c). */
static void stats_add_slot(weft_stats *out, const weft__worker *slot) {
    uint64_t jobs = weft__stat_get(&slot->stats.jobs);
    out->jobs += jobs;
    out->caller_jobs += jobs;
    out->steals += weft__stat_get(&slot->stats.steals);
}

void weft_pool_stats_sized(const weft_pool *pool, weft_stats *stats, size_t stats_size) {
    assert(stats && "weft_pool_stats: stats is NULL"); /* release builds: a no-op (weft.h) */
    if (!stats)
        return;
    weft_stats all = {0};
    const weft_pool *p = weft__pool_resolve((weft_pool *)pool);
    if (p) {
        uint64_t now = weft__now_ns();
        for (unsigned i = 0; i < p->threads; i++)
            stats_add_worker(&all, &p->workers[i], now);
        for (unsigned i = p->threads; i < p->spares.first; i++)
            stats_add_slot(&all, &p->workers[i]);
        for (unsigned i = p->spares.first; i < weft__pool_slots_all(p); i++)
            stats_add_counts(&all, &p->workers[i]);
    }
    /* Exactly the caller's bytes: an older, smaller struct ends earlier; a
     * newer, larger one reads 0 in the fields we do not know. */
    size_t known = stats_size < sizeof all ? stats_size : sizeof all;
    memcpy(stats, &all, known);
    memset((unsigned char *)stats + known, 0, stats_size - known);
}

void(weft_pool_stats)(const weft_pool *pool, weft_stats *stats) {
    weft_pool_stats_sized(pool, stats, sizeof(weft_stats));
}

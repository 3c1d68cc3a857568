/* SPDX-License-Identifier: MIT */
/* The pool's rhythm (rhythm.h).
 *
 * A program that alternates parallel loops with serial code leaves its whole
 * pool quiet for about the same time between loops. A quiet period runs from
 * the moment the last active worker becomes inactive (sleep.c,
 * count_searching) to the next weft_run from outside: work somebody waits
 * for. A detached spawn teaches nothing, since nobody waits for its start. A
 * quiet period begins only once some worker found work since the last one,
 * so a woken worker that counts itself back before finding any does not
 * start a new one. The pool also keeps its width: how many workers found work
 * in each busy period (each one that leaves the search counts once more).
 *
 * An outside caller that takes part in its own call (callers.c) is one of
 * the pool's threads for that long: its call is an arrival, it counts among
 * the threads a busy period engages (callers, beside the workers' width),
 * and the pool is not quiet while it works, only from the end of its call
 * (or later, when the last worker that helped stops), however early its
 * workers ran out of jobs. Otherwise a caller that keeps one worker busy
 * would look like one job at a time, which the policy does not follow, and
 * its quiet periods would begin anywhere inside its calls. But the workers
 * usually run out a little before the call ends (the caller finishes its
 * last piece), and a worker that goes to sleep then, the pool not yet
 * quiet, would have no window to wake for: it would sleep through the gap
 * and be woken by the next call's first push, a wake-up on the critical
 * path. So the moment every worker went inactive during a call (idle_ns)
 * stands in for the quiet period's start in a sleeper's window, until the
 * call's end is recorded (also between the caller's count of its end and
 * its record, when the worker that ran the call's last job decides): the
 * earliest it can be, so the sleeper wakes early, never late; if the call
 * outlasts that window, the sleeper finds the window past and sleeps
 * without a deadline (one early wake-up a call, at most).
 *
 * Who records the quiet period when a call ends as its last worker stops:
 * the caller decrements calls and then reads the workers' counters, the
 * worker counts itself inactive and then reads calls, all seq-cst, so in
 * their total order at least one of them sees the other done (a second
 * record finds nothing joined and changes nothing).
 */
#include "idle/rhythm.h"

/* The window spans one mean deviation either side of the mean quiet period,
 * the spread the averages themselves measure (a wider one was tried and
 * bought nothing: docs/performance.md). A rhythm is regular when that window
 * is no wider than the period itself, trusted once half a history of
 * periods were seen, and worth following while a period lasts at most
 * PREDICT_MAX_WAKES wake-ups (beyond, a wake-up loses under 1/16 of it, less
 * than a search through the window would cost). */
#define PREDICT_MAX_WAKES 16

void weft__rhythm_init(weft__rhythm *r) {
    atomic_init(&r->quiet_ns, 0);
    atomic_init(&r->gap_ns, 0);
    atomic_init(&r->gap_dev_ns, 0);
    atomic_init(&r->gaps, 0);
    atomic_init(&r->joined, 0);
    atomic_init(&r->width, 0);
    atomic_init(&r->calls, 0);
    atomic_init(&r->called, 0);
    atomic_init(&r->callers, 0);
    atomic_init(&r->idle_ns, 0);
}

void weft__rhythm_busy(weft__rhythm *r, unsigned threads) {
    if (atomic_load_explicit(&r->quiet_ns, memory_order_relaxed))
        atomic_store_explicit(&r->quiet_ns, 0, memory_order_relaxed);
    if (atomic_load_explicit(&r->idle_ns, memory_order_relaxed))
        atomic_store_explicit(&r->idle_ns, 0, memory_order_relaxed);
    /* A load and a store, not an increment: a count lost to a race costs a
     * hint, and saturating keeps the line unwritten in long busy periods. */
    uint32_t joined = atomic_load_explicit(&r->joined, memory_order_relaxed);
    if (joined < threads)
        atomic_store_explicit(&r->joined, joined + 1, memory_order_relaxed);
}

/* Fold this busy period's count into its moving average (the first sets it). */
static void fold_count(_Atomic uint32_t *avg, _Atomic uint32_t *count, bool first) {
    uint64_t sample = atomic_load_explicit(count, memory_order_relaxed) * WEFT__RHYTHM_ONE;
    uint64_t a = atomic_load_explicit(avg, memory_order_relaxed);
    if (first)
        a = sample;
    else
        weft__moving_average(&a, sample);
    atomic_store_explicit(avg, (uint32_t)a, memory_order_relaxed);
    atomic_store_explicit(count, 0, memory_order_relaxed);
}

void weft__rhythm_quiet(weft__rhythm *r, uint64_t now) {
    /* Seq-cst: after the caller's counter update (above). */
    if (atomic_load_explicit(&r->calls, memory_order_seq_cst)) {
        /* A caller still works: the end of its call decides; until then,
         * the workers' idleness bounds the quiet period's start. */
        atomic_store_explicit(&r->idle_ns, now, memory_order_relaxed);
        return;
    }
    if (atomic_load_explicit(&r->joined, memory_order_relaxed) == 0 &&
        atomic_load_explicit(&r->called, memory_order_relaxed) == 0)
        return; /* nobody found work since it was last quiet: still quiet */
    bool first = atomic_load_explicit(&r->width, memory_order_relaxed) == 0 &&
                 atomic_load_explicit(&r->callers, memory_order_relaxed) == 0;
    fold_count(&r->callers, &r->called, first);
    fold_count(&r->width, &r->joined, first);
    atomic_store_explicit(&r->quiet_ns, now, memory_order_relaxed);
}

void weft__rhythm_arrival(weft__rhythm *r, uint64_t now) {
    if (atomic_load_explicit(&r->idle_ns, memory_order_relaxed))
        atomic_store_explicit(&r->idle_ns, 0, memory_order_relaxed);
    if (!atomic_load_explicit(&r->quiet_ns, memory_order_relaxed))
        return;
    uint64_t quiet = atomic_exchange_explicit(&r->quiet_ns, 0, memory_order_relaxed);
    if (!quiet || now <= quiet)
        return;
    uint64_t ns = now - quiet, gap = atomic_load_explicit(&r->gap_ns, memory_order_relaxed);
    uint64_t dev = atomic_load_explicit(&r->gap_dev_ns, memory_order_relaxed);
    uint32_t gaps = atomic_load_explicit(&r->gaps, memory_order_relaxed);
    if (gaps == 0) {
        gap = ns, dev = ns / 2; /* untrusted until a few more agree */
    } else {
        weft__moving_average(&dev, ns > gap ? ns - gap : gap - ns);
        weft__moving_average(&gap, ns);
    }
    atomic_store_explicit(&r->gap_ns, gap, memory_order_relaxed);
    atomic_store_explicit(&r->gap_dev_ns, dev, memory_order_relaxed);
    if (gaps < 1u << WEFT__RHYTHM_HISTORY)
        atomic_store_explicit(&r->gaps, gaps + 1, memory_order_relaxed);
}

void weft__rhythm_call_begin(weft__rhythm *r, uint64_t now) {
    /* An increment, not the load and store of weft__rhythm_busy: calls must
     * return to 0, or the pool would never be quiet again. Relaxed: only
     * the call's end orders anything (above). */
    atomic_fetch_add_explicit(&r->calls, 1, memory_order_relaxed);
    weft__rhythm_arrival(r, now);
    atomic_fetch_add_explicit(&r->called, 1, memory_order_relaxed); /* a hint */
}

bool weft__rhythm_call_end(weft__rhythm *r) {
    /* Seq-cst: before the caller reads the workers' counters (above). */
    return atomic_fetch_sub_explicit(&r->calls, 1, memory_order_seq_cst) == 1;
}

bool weft__rhythm_window(const weft__rhythm *r, uint64_t wake_ns, bool loose, bool tail,
                         uint64_t *lo, uint64_t *hi) {
    uint64_t gap = atomic_load_explicit(&r->gap_ns, memory_order_relaxed);
    uint64_t dev = atomic_load_explicit(&r->gap_dev_ns, memory_order_relaxed);
    uint64_t spread = dev;
    bool regular = 2 * spread <= gap || (loose && dev <= wake_ns);
    if (atomic_load_explicit(&r->gaps, memory_order_relaxed) < 1u << (WEFT__RHYTHM_HISTORY - 1) ||
        !regular || gap > PREDICT_MAX_WAKES * wake_ns)
        return false;
    uint64_t quiet = atomic_load_explicit(&r->quiet_ns, memory_order_relaxed);
    /* Whether or not a call still runs: its end decrements calls before its
     * caller records quiet_ns, and the worker whose job the caller waited
     * for, which ran out as it set the caller free, decides in between; with
     * neither it would sleep without a deadline. idle_ns is set only while a
     * call runs and cleared by the next arrival or find: when set, it is
     * this quiet period's earliest start. */
    if (!quiet && tail)
        quiet = atomic_load_explicit(&r->idle_ns, memory_order_relaxed);
    *lo = *hi = 0;
    if (quiet) {
        *lo = quiet + (gap > spread ? gap - spread : 0);
        *hi = quiet + gap + spread + wake_ns;
    }
    return true;
}

/* SPDX-License-Identifier: MIT */
/* The leave policy: what an idle worker does when a search finds nothing.
 * Searching costs CPU while it lasts; sleeping costs a wake-up later (the
 * CPU of the wait and of the waker's call, and the latency of a job that has
 * to wake a sleeper). weft__leave_decide applies the first rule that fits:
 *
 *  | # | when                                    | then                            |
 *  |---|-----------------------------------------|---------------------------------|
 *  | 1 | a parallel phase is active              | search, up to 10 ms since the   |
 *  |   |                                         | last work (leave.h)             |
 *  | 2 | the last phase ended with a fast leave  | sleep, until new work comes     |
 *  | 3 | WEFT_LEAVE_FAST                         | sleep                           |
 *  | 4 | the pool's work is due (its rhythm)     | search                          |
 *  | 5 | the pool is in an implicit phase        | search, until its quiet period  |
 *  |   |                                         | outlasts the rhythm's window    |
 *  | 6 | more than half the workers search       | sleep                           |
 *  | 7 | most idle periods outlast the budget    | sleep                           |
 *  | 8 | otherwise                               | search for up to the budget     |
 *
 * A sleeper whose pool's work is due before it would be woken wakes itself
 * just before, and wakes as many searchers as that work engages.
 *
 * Why this order. The program's own word (1, 2) and choice (3) come first.
 * Rules 6-8 are the ski rental: with B, the budget, the CPU a sleep/wake
 * round trip costs (measured), searching for B and then sleeping never costs
 * more than twice the best choice in hindsight; a worker whose idle periods
 * mostly outlast B would pay B and the sleep besides (7), and beyond half
 * the workers one more searcher finds nothing the others would not (6, Go's
 * spinning limit). Rules 4-5 precede them because they are about work that
 * needs every worker at once: between parallel loops the whole pool goes
 * quiet for about the same time, and a worker found searching saves a wake-up
 * on the loop's critical path; where busy periods engage more workers than
 * the machine has CPUs, a sleep saves no CPU at all (each job wakes a sleeper
 * that mostly finds it taken), so the pool behaves as inside a phase (5).
 * docs/sleep.md describes the rules; docs/performance.md has the ablation
 * that kept them and removed a sixth.
 */
#include "leave.h"

#include "os.h"

/* Averages and running medians weigh the last 2^HISTORY events: enough to
 * ride out one odd sample, few enough to follow a program that changes phase
 * within a few of its periods. A rhythm is trusted once half of them agree. */
#define HISTORY 3
/* A measured wake cost is clamped to [WAKE_MIN_NS, WAKE_MAX_NS]: below a
 * system call's cost it is a clock glitch, and above a time slice's share of
 * the phase bound (WEFT__PHASE_RETAIN_NS / 50) a preempted waker, which must
 * not make workers search for milliseconds. Unmeasured, a wake-up is taken to
 * cost the geometric middle of the two. */
#define WAKE_MIN_NS     1000
#define WAKE_MAX_NS     (WEFT__PHASE_RETAIN_NS / 50)
#define WAKE_INITIAL_NS 14000
/* One sleep in SLEEP_SAMPLE has its CPU measured: the two thread-clock reads
 * it takes cost about a tenth of a round trip, so sampling all would add
 * that much to every sleep for no better estimate. */
#define SLEEP_SAMPLE 8
/* The predicted window spans WINDOW_DEVS mean deviations either side of the
 * mean quiet period; a rhythm is regular when that window is no wider than
 * the period itself, and worth following while it lasts at most
 * PREDICT_MAX_WAKES wake-ups (beyond, a wake-up loses under 1/16 of it, less
 * than searching through the window would cost). */
#define WINDOW_DEVS       2
#define PREDICT_MAX_WAKES 16
/* The rhythm is followed only while the pool's busy periods engage more than
 * this many workers (fixed point): one job at a time engages one, and up to
 * 1.5 where a woken worker counts itself back after the job ended; a burst
 * on two workers engages two. */
#define FOLLOW_WIDTH (WEFT__LEAVE_WIDTH_ONE * 7 / 4)
/* Back-off between search rounds: 1, 2, ..., 2^(SPIN_ROUNDS-1) pauses (about
 * one steal attempt's cache misses at the end), then yields. */
#define SPIN_ROUNDS 6

#define HIT_ONE 256 /* fixed point of the hit rate */

_Atomic uint64_t weft__leave_debug_wake_after_ns;

void weft__leave_pool_init(weft__leave_pool *lp, unsigned threads, unsigned cpus, bool fast) {
    atomic_init(&lp->quiet_ns, 0);
    atomic_init(&lp->gap_ns, 0);
    atomic_init(&lp->gap_dev_ns, 0);
    atomic_init(&lp->gaps, 0);
    atomic_init(&lp->joined, 0);
    atomic_init(&lp->width, 0);
    atomic_init(&lp->wake_call_ns, 0);
    lp->threads = threads;
    lp->cpus = cpus;
    lp->fast = fast;
}

void weft__leave_init(weft__leave *lv) {
    *lv = (weft__leave){.wake_ns = WAKE_INITIAL_NS,
                        .late_ns = WAKE_INITIAL_NS,
                        .hit_rate = HIT_ONE}; /* optimistic: search a little at first */
}

static uint64_t clamp_wake(uint64_t ns) {
    return ns < WAKE_MIN_NS ? WAKE_MIN_NS : ns > WAKE_MAX_NS ? WAKE_MAX_NS : ns;
}

/* Moving average: *avg moves 1/2^HISTORY of the way to the sample. */
static void average(uint64_t *avg, uint64_t sample) {
    *avg += ((int64_t)sample - (int64_t)*avg) / (1 << HISTORY);
}

/* Running median: *est steps 1/2^HISTORY of itself towards each sample, so it
 * settles where half the samples lie either side. CPU costs have heavy tails
 * (an interrupt taken in the kernel is charged to the sleeper), which a mean
 * would follow. It starts from the least cost: an estimate too low makes
 * workers sleep sooner, so samples come and correct it; one too high would
 * keep them searching, and unsampled, for good. */
static void running_median(uint64_t *est, uint64_t sample) {
    uint64_t step = *est >> HISTORY;
    if (*est == 0)
        *est = WAKE_MIN_NS;
    else if (sample > *est)
        *est += step;
    else if (sample < *est)
        *est -= step;
}

/* B, the budget: the CPU of a sleep/wake round trip, the sleeper's share and
 * its wakers'. Until both are measured (or where the OS keeps no thread CPU
 * clock), the wake-up's latency stands in. */
static uint64_t budget(weft__leave_pool *lp, const weft__leave *lv) {
    uint64_t call = atomic_load_explicit(&lp->wake_call_ns, memory_order_relaxed); /* a hint */
    if (lv->sleep_cpu_ns == 0 || call == 0)
        return lv->wake_ns;
    return clamp_wake(lv->sleep_cpu_ns + call);
}

void weft__leave_wake_call(weft__leave_pool *lp, uint64_t ns) {
    /* Relaxed: a hint; two wakers racing lose one sample. */
    uint64_t est = atomic_load_explicit(&lp->wake_call_ns, memory_order_relaxed);
    running_median(&est, clamp_wake(ns));
    atomic_store_explicit(&lp->wake_call_ns, est, memory_order_relaxed);
}

/* ---- The pool's rhythm ----------------------------------------------------
 * Relaxed throughout: hints; a lost or torn update only skews a prediction. */

void weft__leave_quiet(weft__leave_pool *lp, uint64_t now) {
    uint64_t joined = atomic_load_explicit(&lp->joined, memory_order_relaxed);
    if (joined == 0) /* nobody found work since it was last quiet: still quiet */
        return;
    uint64_t width = atomic_load_explicit(&lp->width, memory_order_relaxed);
    if (width == 0)
        width = joined * WEFT__LEAVE_WIDTH_ONE;
    else
        average(&width, joined * WEFT__LEAVE_WIDTH_ONE);
    atomic_store_explicit(&lp->width, (uint32_t)width, memory_order_relaxed);
    atomic_store_explicit(&lp->joined, 0, memory_order_relaxed);
    atomic_store_explicit(&lp->quiet_ns, now, memory_order_relaxed);
}

void weft__leave_arrival(weft__leave_pool *lp, uint64_t now) {
    if (!atomic_load_explicit(&lp->quiet_ns, memory_order_relaxed))
        return;
    uint64_t quiet = atomic_exchange_explicit(&lp->quiet_ns, 0, memory_order_relaxed);
    if (!quiet || now <= quiet)
        return;
    uint64_t ns = now - quiet, gap = atomic_load_explicit(&lp->gap_ns, memory_order_relaxed);
    uint64_t dev = atomic_load_explicit(&lp->gap_dev_ns, memory_order_relaxed);
    uint32_t gaps = atomic_load_explicit(&lp->gaps, memory_order_relaxed);
    if (gaps == 0) {
        gap = ns, dev = ns / 2; /* untrusted until a few more agree */
    } else {
        average(&dev, ns > gap ? ns - gap : gap - ns);
        average(&gap, ns);
    }
    atomic_store_explicit(&lp->gap_ns, gap, memory_order_relaxed);
    atomic_store_explicit(&lp->gap_dev_ns, dev, memory_order_relaxed);
    if (gaps < 1u << HISTORY)
        atomic_store_explicit(&lp->gaps, gaps + 1, memory_order_relaxed);
}

/* Do the pool's busy periods engage more than `workers` (fixed point)? */
static bool wider_than(weft__leave_pool *lp, uint64_t workers) {
    return atomic_load_explicit(&lp->width, memory_order_relaxed) > workers;
}

/* More workers than CPUs: then sleeping saves nothing (rule 5). */
static bool oversubscribed(weft__leave_pool *lp) {
    return wider_than(lp, (uint64_t)lp->cpus * WEFT__LEAVE_WIDTH_ONE);
}

/* Is the pool's rhythm trusted? Half a history of quiet periods, regular (a
 * window no wider than the period, or, where busy periods oversubscribe the
 * CPUs, a deviation within one wake-up: no wake-up lands more precisely, and
 * it is what back-to-back calls of a parallel loop look like), and short
 * enough for a wake-up to matter. */
static bool trusted(weft__leave_pool *lp, const weft__leave *lv, uint64_t gap, uint64_t dev) {
    bool regular = 2 * WINDOW_DEVS * dev <= gap || (oversubscribed(lp) && dev <= lv->wake_ns);
    return atomic_load_explicit(&lp->gaps, memory_order_relaxed) >= 1u << (HISTORY - 1) &&
           regular && gap <= PREDICT_MAX_WAKES * lv->wake_ns;
}

/* The window [lo, hi) in which work should end the current quiet period;
 * false if the pool is busy or its rhythm is not trusted. lo is one wake-up
 * early, so that the workers a rally wakes are running when it opens. */
static bool window(weft__leave_pool *lp, const weft__leave *lv, uint64_t *lo, uint64_t *hi) {
    uint64_t quiet = atomic_load_explicit(&lp->quiet_ns, memory_order_relaxed);
    uint64_t gap = atomic_load_explicit(&lp->gap_ns, memory_order_relaxed);
    uint64_t dev = atomic_load_explicit(&lp->gap_dev_ns, memory_order_relaxed);
    uint64_t spread = WINDOW_DEVS * dev, cost = lv->wake_ns;
    if (!quiet || !trusted(lp, lv, gap, dev))
        return false;
    *lo = quiet + (gap > spread + cost ? gap - spread - cost : 0);
    *hi = quiet + gap + spread + cost;
    return true;
}

/* Rule 4: the pool's busy periods engage more than one worker and its work
 * is due now, or too soon to sleep first. */
static bool pool_due(weft__leave_pool *lp, const weft__leave *lv, uint64_t now) {
    uint64_t lo, hi;
    return wider_than(lp, FOLLOW_WIDTH) && window(lp, lv, &lo, &hi) && now + lv->late_ns >= lo &&
           now < hi;
}

/* Rule 5: in a pool whose busy periods oversubscribe the CPUs, with a trusted
 * rhythm, search through quiet periods until the window closes, and through
 * busy ones for a phase's bound since the last work. */
static bool implicit_phase(weft__leave_pool *lp, const weft__leave *lv, const weft__leave_now *in) {
    uint64_t lo, hi;
    if (!oversubscribed(lp))
        return false;
    if (atomic_load_explicit(&lp->quiet_ns, memory_order_relaxed))
        return window(lp, lv, &lo, &hi) && in->now < hi;
    return trusted(lp, lv, atomic_load_explicit(&lp->gap_ns, memory_order_relaxed),
                   atomic_load_explicit(&lp->gap_dev_ns, memory_order_relaxed)) &&
           in->now - in->search_ns < WEFT__PHASE_RETAIN_NS;
}

/* At most this many workers search at once (rule 6). */
static unsigned searcher_cap(const weft__leave_pool *lp) {
    return WEFT__LEAVE_NO_CAP ? lp->threads : lp->threads / 2 ? lp->threads / 2 : 1;
}

weft__leave_verdict weft__leave_decide(weft__leave_pool *lp, weft__leave *lv,
                                       const weft__leave_now *in, uint64_t *wake_at,
                                       bool *sampled) {
    *wake_at = 0;
    *sampled = false;
    weft__leave_verdict v = weft__leave_phase_verdict(in->phase, in->search_ns, in->now);
    if (v != WEFT__LEAVE_UNDECIDED)
        return v;
    if (WEFT__LEAVE_ALWAYS_SEARCH)
        return WEFT__LEAVE_SEARCH;
    if (lp->fast)
        return WEFT__LEAVE_SLEEP;
    if (pool_due(lp, lv, in->now) || implicit_phase(lp, lv, in))
        return WEFT__LEAVE_SEARCH;
    if (in->searchers <= searcher_cap(lp) && lv->hit_rate >= HIT_ONE / 2 &&
        in->now - in->search_ns < budget(lp, lv))
        return WEFT__LEAVE_SEARCH;
    /* Sleep; until just before the pool's window opens, if it is ahead. */
    uint64_t lo, hi;
    uint64_t forced = atomic_load_explicit(&weft__leave_debug_wake_after_ns, memory_order_relaxed);
    if (WEFT__UNLIKELY(forced)) /* a test hook: relaxed, set while the pool runs */
        *wake_at = in->now + forced;
    else if (wider_than(lp, FOLLOW_WIDTH) && window(lp, lv, &lo, &hi) && lo > in->now + lv->late_ns)
        *wake_at = lo - lv->late_ns;
    *sampled = lv->sleeps++ % SLEEP_SAMPLE == 0; /* the first, then one in SLEEP_SAMPLE */
    return WEFT__LEAVE_SLEEP;
}

void weft__leave_found(weft__leave_pool *lp, weft__leave *lv, uint64_t ns) {
    /* ns == 0: found at once (every steal after a job): no budget to read. */
    uint32_t hit = ns == 0 || ns <= budget(lp, lv) ? HIT_ONE : 0;
    lv->hit_rate += ((int32_t)hit - (int32_t)lv->hit_rate) / (1 << HISTORY);
    if (atomic_load_explicit(&lp->quiet_ns, memory_order_relaxed))
        atomic_store_explicit(&lp->quiet_ns, 0, memory_order_relaxed);
    /* A load and a store, not an increment: a count lost to a race costs a
     * hint, and saturating keeps the line unwritten in long busy periods. */
    uint32_t joined = atomic_load_explicit(&lp->joined, memory_order_relaxed);
    if (joined < lp->threads)
        atomic_store_explicit(&lp->joined, joined + 1, memory_order_relaxed);
}

unsigned weft__leave_woke(weft__leave_pool *lp, weft__leave *lv, const weft__leave_wake *w) {
    if (w->cpu_ns)
        running_median(&lv->sleep_cpu_ns, clamp_wake(w->cpu_ns));
    if (w->woken_ns && w->now >= w->woken_ns)
        average(&lv->wake_ns, clamp_wake(w->now - w->woken_ns));
    if (w->woken_ns || !w->deadline)
        return 0;
    average(&lv->late_ns, clamp_wake(w->now > w->deadline ? w->now - w->deadline : 0));
    if (!pool_due(lp, lv, w->now))
        return 0;
    /* Rally: as many searchers as the cap allows, and no more than the
     * pool's busy periods engage. */
    uint32_t width = atomic_load_explicit(&lp->width, memory_order_relaxed);
    unsigned engaged = (width + WEFT__LEAVE_WIDTH_ONE - 1) / WEFT__LEAVE_WIDTH_ONE;
    return engaged < searcher_cap(lp) ? engaged : searcher_cap(lp);
}

void weft__leave_backoff(unsigned *rounds) {
    if (*rounds < SPIN_ROUNDS) {
        for (unsigned i = 0; i < 1u << *rounds; i++)
            weft__cpu_relax();
        (*rounds)++;
    } else {
        weft__os_yield(); /* oversubscribed pools: let a thread with work run */
    }
}

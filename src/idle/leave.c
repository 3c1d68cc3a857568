/* SPDX-License-Identifier: MIT */
/* The leave policy: what an idle worker does when a search finds nothing.
 * Searching costs CPU while it lasts; sleeping costs a wake-up later (the
 * CPU of the wait and of the waker's call, and the latency of a job that has
 * to wake a sleeper). weft__leave_decide applies the first of rules 1-7
 * that fits, and rows A and B overrule a verdict to search:
 *
 *  | # | when                                    | then                            |
 *  |---|-----------------------------------------|---------------------------------|
 *  | A | the search followed a back-out for a    | sleep (get sleepy again)        |
 *  |   | posted job and found nothing            |                                 |
 *  | B | a thread waits for this worker's slot   | sleep: the slot is worth more   |
 *  |   | of the CPU budget (budget.h)            | than this search                |
 *  | 1 | a parallel phase is active              | search, up to 10 ms since the   |
 *  |   |                                         | last work (leave.h)             |
 *  | 2 | the last phase ended with a fast leave  | sleep, until new work comes     |
 *  | 3 | WEFT_LEAVE_FAST                         | sleep                           |
 *  | 4 | the pool's work is due (its rhythm)     | search                          |
 *  | 5 | the pool is in an implicit phase        | search, until its quiet period  |
 *  |   |                                         | outlasts the rhythm's window    |
 *  | 6 | searching has lost more than it saved   | sleep                           |
 *  | 7 | otherwise                               | search for up to the budget     |
 *
 * A sleeper whose pool's work is due before it would be woken wakes itself
 * just before (its own lateness before, twice: due_from; SELFWAKE); the
 * work's first push wakes whoever else it needs (docs/performance.md,
 * "The leave policy"). Between search rounds a worker
 * spins, then yields (weft__leave_backoff; BACKOFF).
 *
 * Row A is the Rayon sleep module's: a worker that backed out of sleeping
 * because a job was posted searches once more, and then gets sleepy again
 * without asking rules 1-7, which said sleep a moment ago. Row B is the
 * budget's: a worker whose slot another pool's thread waits for gives it up
 * rather than search (budget.c). Each rule named in capitals can be
 * switched off alone in a benchmark build (leave.h, WEFT__RULE), and
 * `make bench-policy` measures the pool without it.
 *
 * Why this order. The program's own word (1, 2) and choice (3) come first.
 * Rules 6-7 are the ski rental: with B, the budget, the CPU a sleep/wake
 * round trip costs (measured), searching for B and then sleeping never costs
 * more than twice the best choice in hindsight. Against sleeping at once, an
 * idle period of t that a search would have ended saves B - t, and a longer
 * one costs B more; a worker whose periods, on average, lost more than they
 * saved sleeps at once (6): the break-even, not a chosen threshold. No rule
 * caps how many search: each searcher's own search is bounded by B, and a
 * push wakes sleepers only for the jobs its searchers cannot take (sleep.c,
 * new_jobs), so searchers cost no wake-ups. Rules 4-5 precede 6-7 because
 * they are about work that needs every worker at once: between parallel
 * loops the whole pool goes quiet for about the same time, and a worker
 * found searching saves a wake-up on the loop's critical path; where busy
 * periods engage more threads than the machine has CPUs, a sleep saves no
 * CPU at all (each job wakes a sleeper that mostly finds it taken), so the
 * pool behaves as inside a phase (5).
 * docs/sleep.md describes the rules; docs/performance.md has the ablation
 * that kept them and removed two others.
 */
#include "idle/leave.h"

#include "os/thread.h"

#define HISTORY WEFT__RHYTHM_HISTORY /* one weight for every average (rhythm.h) */
/* A measured wake cost is clamped to [WAKE_MIN_NS, WAKE_MAX_NS]: below a
 * system call's cost it is a clock glitch; above 1/50 of a phase's bound it
 * is a preempted waker, not what a wake-up costs, and a budget that long
 * would keep workers searching nearly as a phase does. Unmeasured, a wake-up
 * costs the geometric middle of the two. */
#define WAKE_MIN_NS     1000
#define WAKE_MAX_NS     (WEFT__PHASE_RETAIN_NS / 50)
#define WAKE_INITIAL_NS 14000
/* One sleep in SLEEP_SAMPLE has its CPU measured (two thread-clock reads,
 * system calls themselves): a new sample per history length is as often as
 * the running median can use one. */
#define SLEEP_SAMPLE (1u << HISTORY)
/* The rhythm is followed only while the pool's busy periods engage more than
 * this many workers: one job at a time engages one (up to 1.5 where a woken
 * worker counts itself back after the job ended), a burst on two workers two. */
#define FOLLOW_WIDTH (WEFT__RHYTHM_ONE * 7 / 4)
/* Back-off between search rounds: 1, 2, ..., 2^(SPIN_ROUNDS-1) pauses (the
 * last about one steal attempt's cache misses), then yields. */
#define SPIN_ROUNDS 6

_Atomic uint64_t weft__leave_debug_wake_after_ns;

void weft__leave_pool_init(weft__leave_pool *lp, unsigned threads, unsigned cpus, bool fast) {
    weft__rhythm_init(&lp->rhythm);
    atomic_init(&lp->wake_call_ns, 0);
    lp->threads = threads;
    lp->cpus = cpus;
    lp->fast = fast;
}

void weft__leave_init(weft__leave *lv) {
    *lv = (weft__leave){.wake_ns = WAKE_INITIAL_NS,
                        .late_ns = WAKE_INITIAL_NS,
                        .gain_ns = WAKE_INITIAL_NS}; /* optimistic: search a little at first */
}

static uint64_t clamp_wake(uint64_t ns) {
    return ns < WAKE_MIN_NS ? WAKE_MIN_NS : ns > WAKE_MAX_NS ? WAKE_MAX_NS : ns;
}

/* Running median: *est steps 1/2^HISTORY of itself towards each sample, so it
 * settles where half the samples lie either side: CPU costs have heavy tails
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

/* What blocking costs the thread that blocks (its futex wait and both
 * context switches, a sleeper's share of the round trip), as last measured
 * by any worker in the process (0: none yet): the machine's cost, not a
 * pool's. Relaxed: a hint, written only when a sampled sleep ends. */
static _Atomic uint64_t block_cpu_ns;

uint64_t weft__leave_block_cpu_ns(void) {
    uint64_t ns = atomic_load_explicit(&block_cpu_ns, memory_order_relaxed); /* a hint */
    return ns ? ns : WAKE_INITIAL_NS;
}

/* How long a wake-up takes, from the waker's call to the sleeper running, as
 * last averaged by any worker in the process (0: none yet): the machine's
 * latency, not a pool's. Relaxed: a hint, written when a woken sleep ends.
 * A line of its own: every woken worker of every pool writes it, and the
 * words beside it are read on every sleep decision. */
static struct {
    alignas(WEFT__CACHELINE) _Atomic uint64_t ns; /* padded to the line by its alignment */
} wake_latency;

_Atomic uint64_t weft__leave_debug_wake_latency_ns;

uint64_t weft__leave_wake_latency_ns(void) {
    uint64_t forced = atomic_load_explicit(&weft__leave_debug_wake_latency_ns,
                                           memory_order_relaxed); /* a test hook */
    if (WEFT__UNLIKELY(forced))
        return forced;
    uint64_t ns = atomic_load_explicit(&wake_latency.ns, memory_order_relaxed); /* a hint */
    return ns ? ns : WAKE_INITIAL_NS;
}

void weft__leave_wake_call(weft__leave_pool *lp, uint64_t ns) {
    /* Relaxed: a hint; two wakers racing lose one sample. */
    uint64_t est = atomic_load_explicit(&lp->wake_call_ns, memory_order_relaxed);
    running_median(&est, clamp_wake(ns));
    atomic_store_explicit(&lp->wake_call_ns, est, memory_order_relaxed);
}

/* Do the pool's busy periods engage more threads, workers and callers, than
 * it has CPUs? Then a sleep saves nothing (rule 5), and a deviation within
 * one wake-up counts as regular (rhythm.h). The average counts to the
 * nearest thread: one within half a thread of the CPUs is busy periods that
 * engage as many threads as there are CPUs and now and then one more (a
 * worker woken for the last pieces of a caller's loop), which a sleep does
 * save CPU on; compared strictly, a caller and one worker on two CPUs would
 * be in the implicit phase or out of it on noise. */
static bool oversubscribed(const weft__leave_pool *lp) {
    return weft__rhythm_wider_than(&lp->rhythm,
                                   (uint64_t)lp->cpus * WEFT__RHYTHM_ONE + WEFT__RHYTHM_ONE / 2);
}

/* When a worker must be searching for work whose window opens at `lo`
 * (0: none, the pool is busy): twice its usual lateness before. A timed
 * wake-up runs late_ns late on average, so a deadline that much early is
 * late whenever a wake-up is later than the mean; lateness has a long tail,
 * which a margin of its mean deviation did not cover and one of its mean
 * does (docs/performance.md). Its own lateness, not a wake-up's latency:
 * the deadline is its own, no waker's call is in it, and where workers
 * outnumber the free CPUs a wake-up's measured latency is mostly the woken
 * worker's wait for a CPU that a sibling holds, several times its lateness;
 * searching that much early does not make that wait shorter, and holds a CPU
 * for all of it. */
static uint64_t due_from(const weft__leave *lv, uint64_t lo) {
    return lo > 2 * lv->late_ns ? lo - 2 * lv->late_ns : 0;
}

/* Is the rhythm followed (its busy periods engage more than one worker,
 * and it is trusted)? If so, [*lo, *hi) is its window (rhythm.h). */
static bool followed_window(const weft__leave_pool *lp, const weft__leave *lv, uint64_t *lo,
                            uint64_t *hi) {
    return weft__rhythm_wider_than(&lp->rhythm, FOLLOW_WIDTH) &&
           weft__rhythm_window(&lp->rhythm, lv->wake_ns, oversubscribed(lp), true, lo, hi);
}

/* Rule 4: the pool's work is due now, or too soon to sleep first. */
static bool pool_due(const weft__leave_pool *lp, const weft__leave *lv, uint64_t now) {
    uint64_t lo, hi;
    return followed_window(lp, lv, &lo, &hi) && now >= due_from(lv, lo) && now < hi;
}

/* Rule 5: with a trusted rhythm in a pool whose busy periods oversubscribe
 * the CPUs, search through quiet periods until the window closes, and through
 * busy ones (hi == 0) for a phase's bound since the last work. */
static bool implicit_phase(const weft__leave_pool *lp, const weft__leave *lv,
                           const weft__leave_now *in) {
    uint64_t lo, hi;
    return oversubscribed(lp) &&
           weft__rhythm_window(&lp->rhythm, lv->wake_ns, true, false, &lo, &hi) &&
           (hi ? in->now < hi : in->now - in->search_ns < WEFT__PHASE_RETAIN_NS);
}

/* A deadline for a sleep that begins now: when the pool's work becomes due
 * (due_from), if that is ahead and the rhythm followed (0: none). */
static uint64_t wake_at(const weft__leave_pool *lp, const weft__leave *lv, uint64_t now) {
    uint64_t forced = atomic_load_explicit(&weft__leave_debug_wake_after_ns, memory_order_relaxed);
    uint64_t lo, hi;
    if (WEFT__UNLIKELY(forced)) /* a test hook: relaxed, set while the pool runs */
        return now + forced;
    if (!followed_window(lp, lv, &lo, &hi))
        return 0;
    uint64_t due = due_from(lv, lo);
    return due > now ? due : 0;
}

/* Rows 1-7 of the table. */
static weft__leave_verdict numbered_rows(weft__leave_pool *lp, weft__leave *lv,
                                         const weft__leave_now *in, uint64_t *deadline,
                                         bool *sampled) {
    weft__leave_verdict v = weft__leave_phase_verdict(in->phase, in->search_ns, in->now);
    if (v != WEFT__LEAVE_UNDECIDED)
        return v;
    if (WEFT__LEAVE_ALWAYS_SEARCH)
        return WEFT__LEAVE_SEARCH;
    if (lp->fast)
        return WEFT__LEAVE_SLEEP;
    if ((WEFT__RULE(DUE) && pool_due(lp, lv, in->now)) ||
        (WEFT__RULE(IMPLICIT) && implicit_phase(lp, lv, in)))
        return WEFT__LEAVE_SEARCH;
    if (WEFT__RULE(SEARCH) && (lv->gain_ns >= 0 || !WEFT__RULE(GAIN)) &&
        in->now - in->search_ns < budget(lp, lv))
        return WEFT__LEAVE_SEARCH;
    *deadline = WEFT__RULE(SELFWAKE) ? wake_at(lp, lv, in->now) : 0;
    *sampled = lv->sleeps++ % SLEEP_SAMPLE == 0; /* the first, then one in SLEEP_SAMPLE */
    return WEFT__LEAVE_SLEEP;
}

weft__leave_verdict weft__leave_decide(weft__leave_pool *lp, weft__leave *lv,
                                       const weft__leave_now *in, uint64_t *deadline,
                                       bool *sampled) {
    *deadline = 0;
    *sampled = false;
    weft__leave_verdict v = numbered_rows(lp, lv, in, deadline, sampled);
    /* Rows A and B overrule a search, the phase's too. */
    if (v == WEFT__LEAVE_SEARCH &&
        ((WEFT__RULE(SPENT) && in->spent) || (WEFT__RULE(WANTED) && in->wanted)))
        return WEFT__LEAVE_SLEEP;
    return v;
}

void weft__leave_found(weft__leave_pool *lp, weft__leave *lv, uint64_t ns) {
    /* What a search for the budget B would have made of this period, against
     * sleeping at once (rule 6): within B it saves the round trip less the
     * search, beyond it it costs B more. ns == 0: found at once (every steal
     * after a job), a whole round trip saved. */
    int64_t b = (int64_t)budget(lp, lv), saved = ns <= (uint64_t)b ? b - (int64_t)ns : -b;
    lv->gain_ns += (saved - lv->gain_ns) / (1 << HISTORY);
    weft__rhythm_busy(&lp->rhythm, lp->threads);
}

void weft__leave_woke(weft__leave *lv, const weft__leave_wake *w) {
    if (w->cpu_ns) {
        running_median(&lv->sleep_cpu_ns, clamp_wake(w->cpu_ns));
        atomic_store_explicit(&block_cpu_ns, lv->sleep_cpu_ns, memory_order_relaxed); /* a hint */
    }
    if (w->woken_ns && w->now >= w->woken_ns) {
        weft__moving_average(&lv->wake_ns, clamp_wake(w->now - w->woken_ns));
        atomic_store_explicit(&wake_latency.ns, lv->wake_ns, memory_order_relaxed); /* a hint */
    }
    if (w->woken_ns || !w->deadline)
        return;
    /* A self-wake: how late it came, for the next deadline (due_from). */
    weft__moving_average(&lv->late_ns, clamp_wake(w->now > w->deadline ? w->now - w->deadline : 0));
}

void weft__leave_backoff(unsigned *rounds) {
    if (WEFT__RULE(BACKOFF) && *rounds < SPIN_ROUNDS) {
        for (unsigned i = 0; i < 1u << *rounds; i++)
            weft__cpu_relax();
        (*rounds)++;
    } else {
        weft__os_yield(); /* oversubscribed pools: let a thread with work run */
    }
}

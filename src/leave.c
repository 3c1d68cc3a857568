/* SPDX-License-Identifier: MIT */
/* Leave policies (oneTBB's): what an idle worker does when it finds no work.
 *
 *  - WEFT_LEAVE_FAST: get sleepy after the first fruitless search (the context-based
 *    design's "no spinning"; oneTBB's fast leave).
 *  - WEFT_LEAVE_AUTOMATIC: adaptive, with nothing to tune. Searching costs CPU
 *    for as long as it lasts; sleeping costs a wake-up later. That is the
 *    ski-rental problem: with B the CPU a sleep/wake round trip costs,
 *    searching for B and then sleeping never costs more than twice the best
 *    choice made in hindsight. Each worker measures B itself (search_budget:
 *    the CPU its sampled sleeps cost it and their wake calls cost its wakers)
 *    and keeps a moving average of how often its idle periods ended within B
 *    (the hit rate). It searches for up to B while most idle periods end
 *    within B; when they mostly last longer, searching would be wasted, and
 *    it sleeps at once. It also measures C, the wake-up's latency (from its
 *    waker's call to it running again: what a job waits when it has to wake
 *    a sleeper), which sizes the prediction below. So short gaps (work
 *    forked by a running job, a burst of small jobs) are caught without a
 *    wake-up, and long gaps (sporadic jobs, idle periods between frames) cost
 *    no CPU. Regular gaps are predicted, per worker and for the whole pool;
 *    a pool whose busy periods engage more workers than it has CPUs and
 *    whose quiet periods are regular and short keeps its workers searching
 *    as a phase would (see "The pool's rhythm" below).
 *  - A parallel phase (phase.c) overrides both: idle workers keep searching
 *    with back-off for up to WEFT__PHASE_RETAIN_NS. A one-time fast leave (the
 *    last phase ended with fast_leave) makes them sleep at once until new work
 *    is submitted.
 *  - The searcher cap (targeted protocol, outside phases): when more than half
 *    the workers already search, one more searcher finds nothing the others
 *    would not, so a worker over the cap gets sleepy at once, unless its
 *    prediction says work is due now. A searcher that finds work while others
 *    sleep and leaves work behind wakes one (weft__sleep_work_found), so
 *    throughput does not drop; a job pushed while someone searches wakes
 *    nobody (sleep.c, new_jobs).
 */
#include "leave.h"

#include <limits.h>

#include "os.h"
#include "phase.h"
#include "sleep.h"

/* Bounds on the measured wake costs (latency and CPU): a clock glitch or a
 * preempted waker must not make a worker search for milliseconds, nor a lucky
 * fast wake-up turn searching off. */
#define WAKE_COST_MIN_NS     1000
#define WAKE_COST_MAX_NS     200000
#define WAKE_COST_INITIAL_NS 20000 /* typical here until measured */
/* One sleep in SLEEP_SAMPLE has its CPU cost measured: two reads of the
 * thread's CPU clock on each side, system calls of about 1.3 us on the VM of
 * bench/, against a round trip whose medians measured 10-25 us there (8
 * workers, sporadic jobs: sleeper 4-14 us, wake call 5-9 us). */
#define SLEEP_SAMPLE 8
#define MEDIAN_SHIFT 3   /* running medians step by 1/8 of themselves */
#define HIT_ONE      256 /* hit_rate fixed point */
#define EWMA_SHIFT   3   /* moving averages weigh the last ~8 events */
#define SPIN_ROUNDS  6   /* back-off: 1, 2, ..., 32 pauses, then yield */
/* Prediction: trusted after GAPS_TRUSTED long idle periods, if their mean
 * deviation is at most a quarter of their mean (regular, not sporadic), and if
 * a wake-up is a visible part of them: gaps of at most PREDICT_MAX_WAKES wake
 * costs. A longer gap loses under 1/16 of its length to a wake-up, while the
 * search through the window (a few deviations of a long gap) costs more CPU
 * than that: measured, sporadic jobs every 500 us on 8 workers (about 24 wake
 * costs here) burned 1.9 times the CPU with prediction at any length, and
 * gained no latency. The window where work is expected spans WINDOW_DEVS mean
 * deviations either side of the mean. */
#define GAPS_TRUSTED      4
#define PREDICT_MAX_WAKES 16
#define WINDOW_DEVS       2
/* The pool's rhythm is followed only while its busy periods engage more than
 * this many workers (in 1/WEFT__RHYTHM_WIDTH_ONE): one job at a time measured
 * 1.0-1.5 (two busy periods merge when a woken worker counts itself back
 * after the job ended), a 2-worker pool's bursts 1.97-2.0. */
#define RHYTHM_FOLLOW_WIDTH (WEFT__RHYTHM_WIDTH_ONE * 7 / 4)

/* Benchmark hooks (bench/: the leave-policy table and the cap's cost): not
 * public knobs. Read per search round; set before pools are created. */
_Atomic bool weft__leave_bench_always_search;
_Atomic bool weft__leave_bench_no_cap;
_Atomic uint64_t weft__leave_debug_wake_after_ns;

void weft__leave_init(weft__leave *lv) {
    lv->wake_cost_ns = WAKE_COST_INITIAL_NS;
    lv->sleep_cpu_ns = 0;
    lv->sleeps = 0;
    lv->sampled = false;
    lv->hit_rate = HIT_ONE; /* start optimistic: search a little */
    lv->woken_at_ns = 0;
    lv->gap_ns = lv->gap_dev_ns = 0;
    lv->gaps = 0;
    lv->late_ns = WAKE_COST_INITIAL_NS;
}

/* Moving average: *avg moves 1/2^EWMA_SHIFT of the way to sample. */
static void ewma(uint64_t *avg, uint64_t sample) {
    *avg += ((int64_t)sample - (int64_t)*avg) / (1 << EWMA_SHIFT);
}

static uint64_t clamp_wake_cost(uint64_t c) {
    return c < WAKE_COST_MIN_NS ? WAKE_COST_MIN_NS : c > WAKE_COST_MAX_NS ? WAKE_COST_MAX_NS : c;
}

void weft__leave_record_wake(weft__leave *lv, uint64_t now) {
    uint64_t at = lv->woken_at_ns;
    lv->woken_at_ns = 0; /* awake: no waker writes it until we sleep again */
    if (at && now >= at)
        ewma(&lv->wake_cost_ns, clamp_wake_cost(now - at));
}

bool weft__leave_sample_sleep(weft__leave *lv) {
    lv->sampled = lv->sleeps++ % SLEEP_SAMPLE == 0; /* the first, then one in SLEEP_SAMPLE */
    return lv->sampled;
}

/* A running median: *est steps 1/2^MEDIAN_SHIFT of itself towards each
 * sample, so it settles where half the samples lie either side. CPU costs
 * have heavy tails (an interrupt taken while the sleeper was in the kernel
 * is charged to it: samples of 5 us and of 75 us side by side), which a mean
 * follows and a median ignores. It starts from the least cost, not from the
 * first sample: an estimate too low makes workers sleep sooner, so samples
 * come and correct it (from 1 us to 5 us in 14); one too high (the first sleep
 * of a fresh thread is a slow one) would keep them searching, and unsampled,
 * for good. */
static void running_median(uint64_t *est, uint64_t sample) {
    uint64_t step = *est >> MEDIAN_SHIFT;
    if (*est == 0)
        *est = WAKE_COST_MIN_NS;
    else if (sample > *est)
        *est += step;
    else if (sample < *est)
        *est -= step;
}

void weft__leave_record_sleep_cpu(weft__leave *lv, uint64_t ns) {
    running_median(&lv->sleep_cpu_ns, clamp_wake_cost(ns));
}

void weft__leave_record_wake_call(weft__sleep *s, uint64_t ns) {
    /* Relaxed: a hint; two wakers racing lose one sample. */
    uint64_t est = atomic_load_explicit(&s->wake_call_cpu_ns, memory_order_relaxed);
    running_median(&est, clamp_wake_cost(ns));
    atomic_store_explicit(&s->wake_call_cpu_ns, est, memory_order_relaxed);
}

/* How long an idle worker searches before it sleeps: the CPU a sleep/wake
 * round trip costs, its own share (sleep_cpu_ns) and its waker's
 * (wake_call_cpu_ns). That is the ski rental's price of buying: searching
 * longer could cost more CPU than the sleep it avoids. Until both are
 * measured (or where the OS keeps no thread CPU clock), the wake-up's latency
 * stands in. */
static uint64_t search_budget(weft__sleep *s, const weft__leave *lv) {
    /* Relaxed: a hint (weft__leave_record_wake_call). */
    uint64_t call = atomic_load_explicit(&s->wake_call_cpu_ns, memory_order_relaxed);
    if (lv->sleep_cpu_ns == 0 || call == 0)
        return lv->wake_cost_ns;
    return clamp_wake_cost(lv->sleep_cpu_ns + call);
}

void weft__leave_record_timed_wake(weft__leave *lv, uint64_t deadline, uint64_t now) {
    ewma(&lv->late_ns, clamp_wake_cost(now > deadline ? now - deadline : 0));
}

/* A long idle period of `ns`: update the mean and mean deviation of long
 * gaps, and how many were seen. */
static void record_gap(uint32_t *gaps, uint64_t *gap_ns, uint64_t *gap_dev_ns, uint64_t ns) {
    if (*gaps == 0) {
        *gap_ns = ns;
        *gap_dev_ns = ns / 2; /* untrusted until a few more agree */
    } else {
        uint64_t dev = ns > *gap_ns ? ns - *gap_ns : *gap_ns - ns;
        ewma(gap_ns, ns);
        ewma(gap_dev_ns, dev);
    }
    if (*gaps < GAPS_TRUSTED)
        (*gaps)++;
}

void weft__leave_record_idle(weft__sleep *s, unsigned index, uint64_t ns) {
    weft__leave *lv = &s->slots[index].leave;
    /* ns == 0: work found at once (every steal after a job), no budget read. */
    int32_t hit = ns == 0 || ns <= search_budget(s, lv) ? HIT_ONE : 0;
    lv->hit_rate += (hit - (int32_t)lv->hit_rate) / (1 << EWMA_SHIFT);
    if (!hit)
        record_gap(&lv->gaps, &lv->gap_ns, &lv->gap_dev_ns, ns);
}

/* The window [*lo, *hi) in which work is expected to end an idle period
 * that began at `start`, from `gaps` earlier ones of mean gap_ns and mean
 * deviation gap_dev_ns; false if they are not regular, or so long that a
 * wake-up (wake_cost_ns) is no visible part of them. Regular: a deviation of
 * at most a quarter of the mean, or of at most tolerance_ns whatever the mean
 * (the pool's rhythm passes its wake cost where its busy periods oversubscribe
 * the CPUs, 0 elsewhere; see rhythm_window). */
static bool window(uint32_t gaps, uint64_t gap_ns, uint64_t gap_dev_ns, uint64_t wake_cost_ns,
                   uint64_t tolerance_ns, uint64_t start, uint64_t *lo, uint64_t *hi) {
    bool regular = gap_dev_ns * 4 <= gap_ns || gap_dev_ns <= tolerance_ns;
    if (gaps < GAPS_TRUSTED || !regular || gap_ns > PREDICT_MAX_WAKES * wake_cost_ns)
        return false;
    uint64_t spread = WINDOW_DEVS * gap_dev_ns;
    *lo = start + (gap_ns > spread ? gap_ns - spread : 0);
    *hi = start + gap_ns + spread + wake_cost_ns;
    return true;
}

/* This worker's own window for the idle period that began at idle_ns. No
 * tolerance: a worker's own short gaps are what its search already bridges
 * (the hit rate), and a looser rule would make it search through the gaps of
 * sporadic work, whose CPU the prediction must not raise. For the same reason
 * a window is followed only if the search it asks for, from the timed wake-up
 * (lo, less the usual lateness) to the mean arrival, fits the search budget:
 * the timer's wake-up costs what a waker's would, so the prediction then
 * costs at most one budget more than sleeping until woken. Without this, jobs
 * a timer-driven thread submits every 100 us cost 1.4-1.6 times FAST's CPU
 * (22-34 us more a job), most of it searching through such windows. */
static bool predicted_window(weft__sleep *s, const weft__leave *lv, uint64_t idle_ns, uint64_t *lo,
                             uint64_t *hi) {
    return WINDOW_DEVS * lv->gap_dev_ns + lv->late_ns <= search_budget(s, lv) &&
           window(lv->gaps, lv->gap_ns, lv->gap_dev_ns, lv->wake_cost_ns, 0, idle_ns, lo, hi);
}

/* ---- The pool's rhythm ---------------------------------------------------
 *
 * With more workers than cores, no worker's own idle periods are regular:
 * which workers take part in a burst changes from burst to burst. The pool's
 * are: a program that alternates parallel loops with serial work leaves the
 * whole pool idle for about the same time between loops. So the pool keeps
 * the same prediction for its quiet periods (from the moment every worker is
 * inactive to the next weft_run from outside: work somebody waits for, not a
 * detached job, whose start nobody waits on). In a pool with more workers
 * than CPUs a trusted rhythm is an implicit phase (pool_rhythm_retains).
 * A worker with no window of its own that sleeps while the pool is quiet
 * wakes itself as the pool's window opens, one wake cost early, and wakes as
 * many more as the searcher cap allows (sleep.c, rally), so the loop starts
 * on searchers instead of waiting for a wake-up chain.
 *
 * Both assume that the work which ends a quiet period needs many workers. A
 * program that waits for one small job at a time needs one, and a wake-up
 * finds it: searching through its quiet periods burnt five times FAST's CPU
 * (8 workers on 2 CPUs, a 20 us weft_run every 300 us: 1.03-1.10 CPUs against
 * 0.18-0.20). So the pool also learns its width, how many workers find work
 * in one of its busy periods (each worker that leaves the search counts once
 * more; a worker that went idle and found work again counts again), and
 * follows its rhythm only while the width is over RHYTHM_FOLLOW_WIDTH (a
 * rally wakes no more than the width), and keeps an implicit phase only
 * while it is more than the CPUs: then each busy period wakes more workers
 * than can run, and a sleep saves nothing. Relaxed throughout: these are
 * hints, and a lost or torn update only costs a prediction. */

void weft__leave_pool_quiet(weft__sleep *s) {
    weft__rhythm *r = &s->rhythm;
    uint64_t joined = atomic_load_explicit(&r->joined, memory_order_relaxed);
    /* Nobody found work since the pool was last quiet: a worker woken (by a
     * poster, or by its timer) counts itself back before any work was found,
     * and the pool is still quiet, or still busy with an arrival. */
    if (joined == 0)
        return;
    uint64_t width = atomic_load_explicit(&r->width, memory_order_relaxed);
    if (width == 0)
        width = joined * WEFT__RHYTHM_WIDTH_ONE;
    else
        ewma(&width, joined * WEFT__RHYTHM_WIDTH_ONE);
    atomic_store_explicit(&r->width, (uint32_t)width, memory_order_relaxed);
    atomic_store_explicit(&r->joined, 0, memory_order_relaxed);
    atomic_store_explicit(&r->quiet_ns, weft__now_ns(), memory_order_relaxed);
}

void weft__leave_pool_busy(weft__sleep *s) {
    weft__rhythm *r = &s->rhythm;
    if (atomic_load_explicit(&r->quiet_ns, memory_order_relaxed))
        atomic_store_explicit(&r->quiet_ns, 0, memory_order_relaxed);
    /* A load and a store, not an increment: a count lost to a race costs a
     * hint, and saturating keeps the line unwritten in long busy periods. */
    uint32_t joined = atomic_load_explicit(&r->joined, memory_order_relaxed);
    if (joined < s->threads)
        atomic_store_explicit(&r->joined, joined + 1, memory_order_relaxed);
}

/* Is the pool's width more than `workers` (in 1/WEFT__RHYTHM_WIDTH_ONE)? */
static bool pool_wider_than(weft__sleep *s, unsigned workers) {
    return atomic_load_explicit(&s->rhythm.width, memory_order_relaxed) > workers;
}

/* Do the pool's busy periods engage more workers than it has CPUs? Then each
 * wakes more workers than can run, and a sleep saves nothing: the implicit
 * phase and the wake-cost tolerance apply (pool_rhythm_retains,
 * rhythm_window). */
static bool busy_periods_oversubscribe(weft__sleep *s) {
    return pool_wider_than(s, s->cpus * WEFT__RHYTHM_WIDTH_ONE);
}

unsigned weft__leave_pool_width(weft__sleep *s) {
    uint32_t w = atomic_load_explicit(&s->rhythm.width, memory_order_relaxed);
    return (w + WEFT__RHYTHM_WIDTH_ONE - 1) / WEFT__RHYTHM_WIDTH_ONE;
}

void weft__leave_pool_arrival(weft__sleep *s) {
    weft__rhythm *r = &s->rhythm;
    if (!atomic_load_explicit(&r->quiet_ns, memory_order_relaxed))
        return;
    uint64_t quiet = atomic_exchange_explicit(&r->quiet_ns, 0, memory_order_relaxed);
    uint64_t now = weft__now_ns();
    if (!quiet || now <= quiet)
        return;
    uint32_t gaps = atomic_load_explicit(&r->gaps, memory_order_relaxed);
    uint64_t gap = atomic_load_explicit(&r->gap_ns, memory_order_relaxed);
    uint64_t dev = atomic_load_explicit(&r->gap_dev_ns, memory_order_relaxed);
    record_gap(&gaps, &gap, &dev, now - quiet);
    atomic_store_explicit(&r->gap_ns, gap, memory_order_relaxed);
    atomic_store_explicit(&r->gap_dev_ns, dev, memory_order_relaxed);
    atomic_store_explicit(&r->gaps, gaps, memory_order_relaxed);
}

/* The pool's window for a quiet period that began at `quiet`, in worker
 * `index`'s view (its wake cost); false if the pool's rhythm is not trusted.
 * In a pool whose busy periods are wider than its CPUs (where following the
 * rhythm costs no CPU: pool_rhythm_retains), a deviation within one wake cost
 * counts as regular however short the quiet periods are: a wake-up cannot
 * land more precisely than its own cost, so no rhythm is more useful to a
 * sleeper than that. It is what back-to-back calls of a parallel loop look
 * like: the pool is quiet only while the caller wakes up, returns and calls
 * again (8 workers on 2 CPUs: 12-32 us, deviations 11-65 us, against wake
 * costs of 50-150 us), which the quarter-of-the-mean rule rejected, so the
 * workers over the searcher cap slept through every one of them (bench/:
 * loops 1.16x slower with the cap; 0.99-1.05x with this). Narrower pools keep the
 * strict rule: there a trusted rhythm costs CPU (one job every 100 +- 60 us
 * on 8 workers: 1.1-2.0 times the CPU of the strict rule). */
static bool rhythm_window(weft__sleep *s, unsigned index, uint64_t quiet, uint64_t *lo,
                          uint64_t *hi) {
    const weft__rhythm *r = &s->rhythm;
    uint64_t cost = s->slots[index].leave.wake_cost_ns;
    uint64_t tolerance = busy_periods_oversubscribe(s) ? cost : 0;
    /* Relaxed: hints; a torn mix of two updates only skews one prediction. */
    return window(atomic_load_explicit(&r->gaps, memory_order_relaxed),
                  atomic_load_explicit(&r->gap_ns, memory_order_relaxed),
                  atomic_load_explicit(&r->gap_dev_ns, memory_order_relaxed), cost, tolerance,
                  quiet, lo, hi);
}

/* The pool's window for its current quiet period, opened one wake cost early
 * so that the workers a rally wakes are running when it opens. */
static bool pool_window(weft__sleep *s, unsigned index, uint64_t *lo, uint64_t *hi) {
    uint64_t quiet = atomic_load_explicit(&s->rhythm.quiet_ns, memory_order_relaxed);
    uint64_t cost = s->slots[index].leave.wake_cost_ns;
    if (!quiet || !pool_wider_than(s, RHYTHM_FOLLOW_WIDTH) ||
        !rhythm_window(s, index, quiet, lo, hi))
        return false;
    *lo = *lo > quiet + cost ? *lo - cost : quiet;
    return true;
}

bool weft__leave_pool_due(weft__sleep *s, unsigned index, uint64_t now) {
    uint64_t lo, hi;
    return pool_window(s, index, &lo, &hi) && now + s->slots[index].leave.late_ns >= lo && now < hi;
}

/* The pool's implicit phase. A pool whose busy periods engage more workers
 * than it has CPUs (its width; so it has more workers than CPUs) and whose
 * quiet periods are regular and short (a trusted window: at most PREDICT_MAX_WAKES
 * wake costs) is in a parallel phase its program did not declare, and its
 * workers search through it as they would in one: through busy periods for up
 * to WEFT__PHASE_RETAIN_NS since they last ran, through quiet periods until
 * the window closes; a quiet period that outlasts its window ends it, so an
 * idle pool sleeps within one gap of its last work. Why only such pools:
 * there, sleeping does not save CPU (each job wakes a sleeper that mostly
 * finds it taken; bench/: FAST burned 0.94-1.44 times the CPU of
 * always-search in 200 us bursts on 8-64 workers), so what is left of its
 * cost is placement: workers a timer or a wake-up brings back run on the CPU
 * that is free then, not the one the caller frees when it blocks, and the
 * scheduler does not move a thread that just ran (8-15% of bursts, up to 29%,
 * ran on one CPU of two, at 1.8 times the length). With no more workers than
 * CPUs the search would take a CPU of its own (2 workers: 1.14-1.31 times
 * FAST's CPU), and so it would where the busy periods are narrow (one job at
 * a time: five times FAST's CPU, see the pool's rhythm above); there the
 * prediction above wakes them instead. */
static bool pool_rhythm_retains(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    if (!busy_periods_oversubscribe(s))
        return false;
    uint64_t quiet = atomic_load_explicit(&s->rhythm.quiet_ns, memory_order_relaxed);
    uint64_t lo, hi;
    if (!rhythm_window(s, idle->index, quiet, &lo, &hi))
        return false; /* quiet == 0 (busy): only whether the rhythm is trusted */
    return quiet ? now < hi : now - idle->search_ns < WEFT__PHASE_RETAIN_NS;
}

/* The adaptive policy applies (not FAST, no phase, no one-time fast leave,
 * no benchmark hook). */
static bool automatic(weft__sleep *s) {
    /* Relaxed (the hook): a benchmark flag set before the pool exists. */
    return !s->leave_fast && !s->wake_all && !weft__phase_active(&s->phase) &&
           !weft__phase_fast_leave(&s->phase) &&
           !atomic_load_explicit(&weft__leave_bench_always_search, memory_order_relaxed);
}

uint64_t weft__leave_wake_at(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    const weft__leave *lv = &s->slots[idle->index].leave;
    if (!automatic(s))
        return 0;
    /* Relaxed: a test hook, set while the pool runs on purpose. */
    uint64_t forced = atomic_load_explicit(&weft__leave_debug_wake_after_ns, memory_order_relaxed);
    if (WEFT__UNLIKELY(forced != 0))
        return now + forced;
    uint64_t lo, hi;
    if (!(idle->idle_ns && predicted_window(s, lv, idle->idle_ns, &lo, &hi)) &&
        !pool_window(s, idle->index, &lo, &hi))
        return 0;
    /* Be running when the window opens: wake early by the usual lateness. */
    uint64_t at = lo > lv->late_ns ? lo - lv->late_ns : 0;
    return at > now ? at : 0;
}

/* Inside the predicted window, or too close to it to sleep first. */
static bool work_due(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    const weft__leave *lv = &s->slots[idle->index].leave;
    uint64_t lo, hi;
    if (idle->idle_ns && predicted_window(s, lv, idle->idle_ns, &lo, &hi))
        return now + lv->late_ns >= lo && now < hi;
    return weft__leave_pool_due(s, idle->index, now);
}

unsigned weft__leave_searcher_cap(weft__sleep *s) {
    /* Relaxed: a benchmark flag set before the pool exists. */
    if (s->wake_all || atomic_load_explicit(&weft__leave_bench_no_cap, memory_order_relaxed))
        return UINT_MAX; /* the legacy protocol keeps no searcher count */
    return s->threads / 2 ? s->threads / 2 : 1;
}

static bool over_searcher_cap(weft__sleep *s) {
    /* Seq-cst like every counter access (sleep.c); a hint here. */
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    unsigned searching = weft__counters_inactive(c) - weft__counters_sleeping(c);
    return searching > weft__leave_searcher_cap(s);
}

bool weft__leave_keep_searching(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    /* Both budgets count from the start of this search: the idle period's
     * first fruitless search, or the last wake-up, since a woken worker (for
     * new work, or by a phase's warm-up) should look before sleeping again. */
    if (weft__phase_active(&s->phase))
        return now - idle->search_ns < WEFT__PHASE_RETAIN_NS;
    if (atomic_load_explicit(&weft__leave_bench_always_search, memory_order_relaxed))
        return !weft__phase_fast_leave(&s->phase); /* searches until new work */
    if (weft__phase_fast_leave(&s->phase) || s->leave_fast)
        return false;
    /* Work predicted now overrides the cap: a parallel loop that starts in
     * the window needs every worker at once, and each one found searching
     * saves a wake-up on the loop's critical path. */
    if (work_due(s, idle, now) || pool_rhythm_retains(s, idle, now))
        return true;
    const weft__leave *lv = &s->slots[idle->index].leave;
    return !over_searcher_cap(s) && lv->hit_rate >= HIT_ONE / 2 &&
           now - idle->search_ns < search_budget(s, lv);
}

void weft__leave_backoff(weft__idle *idle) {
    if (idle->backoff < SPIN_ROUNDS) {
        for (unsigned i = 0; i < 1u << idle->backoff; i++)
            weft__cpu_relax();
        idle->backoff++;
    } else {
        weft__os_yield(); /* oversubscribed pools: let a thread with work run */
    }
}

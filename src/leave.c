/* Leave policies (seed 004): what an idle worker does when it finds no work.
 *
 *  - WEFT_LEAVE_FAST: get sleepy after the first fruitless search (seed 003's
 *    "no spinning"; seed 004's fast leave).
 *  - WEFT_LEAVE_AUTOMATIC: adaptive, with nothing to tune. Searching costs CPU
 *    for as long as it lasts; sleeping costs a wake-up later. That is the
 *    ski-rental problem: with C the cost of a sleep/wake round trip, searching
 *    for C and then sleeping never costs more than twice the best choice made
 *    in hindsight. Each worker measures C itself (the time from its waker's
 *    wake-up call to it running again: what a job waits when it has to wake a
 *    sleeper) and keeps a moving average of how often its idle periods ended
 *    within C (the hit rate). It searches for up to C while most idle periods
 *    end within C; when they mostly last longer, searching for C would be
 *    wasted, and it sleeps at once. So short gaps (work forked by a running
 *    job, a burst of small jobs) are caught without a wake-up, and long gaps
 *    (sporadic jobs, idle periods between frames) cost no CPU.
 *  - A parallel phase (phase.c) overrides both: idle workers keep searching
 *    with back-off for up to WEFT_PHASE_RETAIN_NS. A one-time fast leave (the
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

/* Bounds on the measured wake cost: a clock glitch or a preempted waker must
 * not make a worker search for milliseconds, nor a lucky fast wake-up turn
 * searching off. */
#define WAKE_COST_MIN_NS     1000
#define WAKE_COST_MAX_NS     200000
#define WAKE_COST_INITIAL_NS 20000 /* typical here until measured */
#define HIT_ONE              256   /* hit_rate fixed point */
#define EWMA_SHIFT           3     /* moving averages weigh the last ~8 events */
#define SPIN_ROUNDS          6     /* back-off: 1, 2, ..., 32 pauses, then yield */
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

/* Benchmark hooks (bench/: the leave-policy table and the cap's cost): not
 * public knobs. Read per search round; set before pools are created. */
_Atomic bool weft__leave_bench_always_search;
_Atomic bool weft__leave_bench_no_cap;
_Atomic uint64_t weft__leave_debug_wake_after_ns;

void weft__leave_init(weft__leave *lv) {
    lv->wake_cost_ns = WAKE_COST_INITIAL_NS;
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

void weft__leave_record_timed_wake(weft__leave *lv, uint64_t deadline, uint64_t now) {
    ewma(&lv->late_ns, clamp_wake_cost(now > deadline ? now - deadline : 0));
}

/* A long idle period: update the mean and mean deviation of long gaps. */
static void record_gap(weft__leave *lv, uint64_t ns) {
    if (lv->gaps == 0) {
        lv->gap_ns = ns;
        lv->gap_dev_ns = ns / 2; /* untrusted until a few more agree */
    } else {
        uint64_t dev = ns > lv->gap_ns ? ns - lv->gap_ns : lv->gap_ns - ns;
        ewma(&lv->gap_ns, ns);
        ewma(&lv->gap_dev_ns, dev);
    }
    if (lv->gaps < GAPS_TRUSTED)
        lv->gaps++;
}

void weft__leave_record_idle(weft__leave *lv, uint64_t ns) {
    int32_t hit = ns <= lv->wake_cost_ns ? HIT_ONE : 0;
    lv->hit_rate += (hit - (int32_t)lv->hit_rate) / (1 << EWMA_SHIFT);
    if (!hit)
        record_gap(lv, ns);
}

/* The window [*lo, *hi) in which work is expected to end the idle period that
 * began at idle_ns; false if this worker's gaps are not regular. */
static bool predicted_window(const weft__leave *lv, uint64_t idle_ns, uint64_t *lo, uint64_t *hi) {
    if (lv->gaps < GAPS_TRUSTED || lv->gap_dev_ns * 4 > lv->gap_ns ||
        lv->gap_ns > PREDICT_MAX_WAKES * lv->wake_cost_ns)
        return false;
    uint64_t spread = WINDOW_DEVS * lv->gap_dev_ns;
    *lo = idle_ns + (lv->gap_ns > spread ? lv->gap_ns - spread : 0);
    *hi = idle_ns + lv->gap_ns + spread + lv->wake_cost_ns;
    return true;
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
    if (WEFT_UNLIKELY(forced != 0))
        return now + forced;
    uint64_t lo, hi;
    if (!idle->idle_ns || !predicted_window(lv, idle->idle_ns, &lo, &hi))
        return 0;
    /* Be running when the window opens: wake early by the usual lateness. */
    uint64_t at = lo > lv->late_ns ? lo - lv->late_ns : 0;
    return at > now ? at : 0;
}

/* Inside the predicted window, or too close to it to sleep first. */
static bool work_due(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    const weft__leave *lv = &s->slots[idle->index].leave;
    uint64_t lo, hi;
    return idle->idle_ns && predicted_window(lv, idle->idle_ns, &lo, &hi) &&
           now + lv->late_ns >= lo && now < hi;
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
    unsigned searching = (unsigned)((c >> 16) & 0xffff) - (unsigned)(c & 0xffff);
    return searching > weft__leave_searcher_cap(s);
}

bool weft__leave_keep_searching(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    /* Both budgets count from the start of this search: the idle period's
     * first fruitless search, or the last wake-up, since a woken worker (for
     * new work, or by a phase's warm-up) should look before sleeping again. */
    if (weft__phase_active(&s->phase))
        return now - idle->search_ns < WEFT_PHASE_RETAIN_NS;
    if (atomic_load_explicit(&weft__leave_bench_always_search, memory_order_relaxed))
        return !weft__phase_fast_leave(&s->phase); /* searches until new work */
    if (weft__phase_fast_leave(&s->phase) || s->leave_fast)
        return false;
    /* Work predicted now overrides the cap: a parallel loop that starts in
     * the window needs every worker at once, and each one found searching
     * saves a wake-up on the loop's critical path. */
    if (work_due(s, idle, now))
        return true;
    const weft__leave *lv = &s->slots[idle->index].leave;
    return !over_searcher_cap(s) && lv->hit_rate >= HIT_ONE / 2 &&
           now - idle->search_ns < lv->wake_cost_ns;
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

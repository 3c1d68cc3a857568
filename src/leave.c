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
 *    would not, so a worker over the cap gets sleepy at once. A searcher that
 *    finds work while others sleep and leaves work behind wakes one
 *    (weft__sleep_work_found), so throughput does not drop.
 */
#include "leave.h"

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

/* Benchmark hooks (bench/: the leave-policy table and the cap's cost): not
 * public knobs. Read per search round; set before pools are created. */
_Atomic bool weft__leave_bench_always_search;
_Atomic bool weft__leave_bench_no_cap;

void weft__leave_init(weft__leave *lv) {
    lv->wake_cost_ns = WAKE_COST_INITIAL_NS;
    lv->hit_rate = HIT_ONE; /* start optimistic: search a little */
    lv->woken_at_ns = 0;
}

void weft__leave_record_wake(weft__leave *lv, uint64_t now) {
    uint64_t at = lv->woken_at_ns;
    if (!at || now < at)
        return;
    uint64_t c = now - at;
    c = c < WAKE_COST_MIN_NS ? WAKE_COST_MIN_NS : c > WAKE_COST_MAX_NS ? WAKE_COST_MAX_NS : c;
    lv->wake_cost_ns += ((int64_t)c - (int64_t)lv->wake_cost_ns) / (1 << EWMA_SHIFT);
}

void weft__leave_record_idle(weft__leave *lv, uint64_t ns) {
    int32_t hit = ns <= lv->wake_cost_ns ? HIT_ONE : 0;
    lv->hit_rate += (hit - (int32_t)lv->hit_rate) / (1 << EWMA_SHIFT);
}

static bool over_searcher_cap(weft__sleep *s) {
    /* Relaxed: a benchmark flag set before the pool exists. */
    if (s->wake_all || atomic_load_explicit(&weft__leave_bench_no_cap, memory_order_relaxed))
        return false; /* the legacy protocol keeps no searcher count */
    /* Seq-cst like every counter access (sleep.c); a hint here. */
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    unsigned searching = (unsigned)((c >> 16) & 0xffff) - (unsigned)(c & 0xffff);
    unsigned cap = s->threads / 2 ? s->threads / 2 : 1;
    return searching > cap;
}

bool weft__leave_keep_searching(weft__sleep *s, const weft__idle *idle, uint64_t now) {
    /* Both budgets count from the start of this search: the idle period's
     * first fruitless search, or the last wake-up, since a woken worker (for
     * new work, or by a phase's warm-up) should look before sleeping again. */
    if (weft__phase_active(&s->phase))
        return now - idle->search_ns < WEFT_PHASE_RETAIN_NS;
    if (atomic_load_explicit(&weft__leave_bench_always_search, memory_order_relaxed))
        return !weft__phase_fast_leave(&s->phase); /* searches until new work */
    if (weft__phase_fast_leave(&s->phase) || s->leave_fast || over_searcher_cap(s))
        return false;
    const weft__leave *lv = &s->slots[idle->index].leave;
    return lv->hit_rate >= HIT_ONE / 2 && now - idle->search_ns < lv->wake_cost_ns;
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

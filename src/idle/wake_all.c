/* SPDX-License-Identifier: MIT */
/* The wake-all sleep protocol (WEFT_WAKE_ALL): the legacy Rayon sleep, kept
 * so the two protocols can be measured side by side in one binary.
 *
 * One word, `state`: bit 0 says some worker may be asleep, the bits above
 * hold the index + 1 of the single sleepy worker (0: none).
 *  - A worker with nothing to do searches `rounds` times, then tries to become
 *    *the* sleepy worker with a CAS (the others keep searching), searches
 *    `rounds` more times while it still is, then under `lock` swaps "me
 *    sleepy" for "asleep", reads the epoch, and waits on it once: the search
 *    loop is the loop.
 *  - Every event (a job pushed or injected, a latch set, a phase's warm-up)
 *    tickles: if the state is nonzero, swap it to 0; if the asleep bit was
 *    set, bump the epoch under the lock and wake every sleeper. A sleepy
 *    worker that finds itself no longer sleepy starts over.
 *
 * weft adds the targeted protocol's remedy (docs/sleep.md): injections make
 * their PushFence before they tickle, latch setters swap with a seq-cst
 * exchange (weft__wake_all_set_latch), and a worker that marked itself
 * asleep makes a SleepFence and checks the injectors and its latch before it
 * waits. Either the tickle's seq-cst load follows that fence in the total
 * order and sees the asleep bit, or the check sees the event. Without it the
 * legacy protocol loses wake-ups (the spin model, verify/wake_all.pml, finds
 * them).
 *
 * Inside a parallel phase, or after one ended with a fast leave, the phase
 * decides (leave.c) instead of the rounds.
 */
#include "idle/wake_all.h"

#include "os/futex.h"
#include "os/thread.h"

/* Legacy Rayon's numbers: 32 rounds (each a search and a yield) before a
 * worker tries to get sleepy, 32 more while sleepy before it sleeps
 * (ROUNDS_UNTIL_SLEEPY and ROUNDS_UNTIL_ASLEEP - ROUNDS_UNTIL_SLEEPY there).
 * WEFT_LEAVE_FAST: none. */
#define LEGACY_ROUNDS 32

#define ASLEEP ((uint64_t)1)

static uint64_t sleepy_bits(unsigned index) {
    return ((uint64_t)index + 1) << 1;
}

void weft__wake_all_init(weft__wake_all *a, const weft__idle_env *env, bool leave_fast) {
    atomic_init(&a->state, 0);
    pthread_mutex_init(&a->lock, NULL);
    atomic_init(&a->epoch, 0);
    a->rounds = leave_fast ? 0 : LEGACY_ROUNDS;
    a->env = env;
}

void weft__wake_all_destroy(weft__wake_all *a) {
    pthread_mutex_destroy(&a->lock);
}

void weft__wake_all_set_latch(weft__wake_all *a, weft__latch *l) {
    /* Seq-cst: the swap must precede the tickle's load in the total order, as
     * a push's PushFence does (above). Release besides: the owner's acquire
     * probe sees the job's writes. */
    atomic_exchange_explicit(&l->state, WEFT__LATCH_SET, memory_order_seq_cst);
    weft__debug_yield();
    weft__wake_all_tickle(a);
}

void weft__wake_all_tickle_cold(weft__wake_all *a) {
    /* Seq-cst, like every access to the state: the fence argument above. */
    uint64_t old = atomic_exchange_explicit(&a->state, 0, memory_order_seq_cst);
    weft__debug_yield();
    if (!(old & ASLEEP))
        return;
    pthread_mutex_lock(&a->lock);
    /* Relaxed: only written under the lock. */
    uint32_t e = atomic_load_explicit(&a->epoch, memory_order_relaxed);
    /* Relaxed: the epoch only names a futex generation, nothing is published
     * through it (a woken worker finds its job or latch through their own
     * acquires). The lock orders this bump after any sleeper's read of the
     * old epoch, so that sleeper's wait returns at once or is woken below. */
    atomic_store_explicit(&a->epoch, e + 1, memory_order_relaxed);
    pthread_mutex_unlock(&a->lock);
    weft__debug_yield();
    weft__os_wake_all(&a->epoch);
}

/* Try to become the sleepy worker; false if another one is. */
static bool get_sleepy(weft__wake_all *a, unsigned index) {
    /* Seq-cst, like every access to the state: a tickle's load must order
     * against this CAS in the total order (the argument at the top). */
    uint64_t st = atomic_load_explicit(&a->state, memory_order_seq_cst);
    while ((st >> 1) == 0) {
        weft__debug_yield();
        if (atomic_compare_exchange_weak_explicit(&a->state, &st, st | sleepy_bits(index),
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return true;
    }
    return false;
}

static bool still_sleepy(weft__wake_all *a, unsigned index) {
    /* Seq-cst, like every access to the state (see get_sleepy). */
    uint64_t st = atomic_load_explicit(&a->state, memory_order_seq_cst);
    return (st & ~ASLEEP) == sleepy_bits(index);
}

/* Move from sleepy to asleep under the lock, and read the epoch to wait on.
 * False: tickled meanwhile. */
static bool mark_asleep(weft__wake_all *a, unsigned index, uint32_t *epoch) {
    pthread_mutex_lock(&a->lock);
    /* Seq-cst, like every access to the state: the CAS to asleep precedes
     * the SleepFence, so a tickle that misses it is ordered after the fence. */
    uint64_t st = atomic_load_explicit(&a->state, memory_order_seq_cst);
    bool ok = (st & ~ASLEEP) == sleepy_bits(index) &&
              atomic_compare_exchange_strong_explicit(&a->state, &st, ASLEEP, memory_order_seq_cst,
                                                      memory_order_seq_cst);
    /* Relaxed: written under the lock we hold. */
    *epoch = atomic_load_explicit(&a->epoch, memory_order_relaxed);
    pthread_mutex_unlock(&a->lock);
    return ok;
}

static void fall_asleep(weft__wake_all *a, weft__idle *idle, weft__latch *latch) {
    idle->sleepy = false;
    idle->rounds = 0;
    uint32_t epoch;
    weft__idle_debug_point(a->env, WEFT__DEBUG_LEGACY_BEFORE_ASLEEP);
    if (!mark_asleep(a, idle->index, &epoch))
        return;
    weft__debug_yield();
    /* SleepFence, then the final check (see the top of this file). */
    weft__fence_seq_cst();
    weft__debug_yield();
    if (weft__idle_must_stay(a->env, idle->index) || weft__latch_probe(latch))
        return; /* the stale asleep bit costs at most one spurious tickle */
    uint64_t slept_at = weft__idle_sleep_begin(idle, a->env->tracing);
    weft__os_wait(&a->epoch, epoch);
    weft__idle_take_slot(a->env, latch);
    weft__idle_sleep_end(idle, slept_at);
    weft__trace(a->env->tracing, &idle->stats->trace, WEFT__TRACE_SEARCH, 0);
}

/* Before getting sleepy: a phase decides if there is one, else the rounds. */
static bool keep_searching(weft__wake_all *a, const weft__idle *idle, uint64_t now) {
    weft__leave_verdict v = weft__leave_phase_verdict(a->env->phase, idle->search_ns, now);
    if (v != WEFT__LEAVE_UNDECIDED)
        return v == WEFT__LEAVE_SEARCH;
    return idle->rounds < a->rounds;
}

void weft__wake_all_no_work_found(weft__wake_all *a, weft__idle *idle, weft__latch *latch,
                                  uint64_t now) {
    if (!idle->sleepy) {
        if (keep_searching(a, idle, now)) {
            idle->rounds++;
            weft__os_yield();
        } else if (get_sleepy(a, idle->index)) {
            idle->sleepy = true;
            idle->rounds = 0;
        } else {
            weft__os_yield(); /* only one worker may be sleepy at a time */
        }
    } else if (idle->rounds < a->rounds) {
        weft__os_yield();
        if (still_sleepy(a, idle->index))
            idle->rounds++;
        else /* tickled: start over */
            idle->sleepy = false, idle->rounds = 0;
    } else {
        fall_asleep(a, idle, latch);
    }
}

void weft__wake_all_stop_looking(weft__wake_all *a, weft__idle *idle) {
    if (idle->sleepy)
        weft__wake_all_tickle(a); /* give up being the sleepy one (legacy Rayon) */
}

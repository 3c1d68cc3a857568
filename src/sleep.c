/* SPDX-License-Identifier: MIT */
/* The sleep module: when an idle worker searches, when it sleeps, whom a new
 * job or a set latch wakes. docs/sleep.md has the full story and the proof
 * sketch; this block is the summary a maintainer must keep true.
 *
 * Overview. Two protocols, chosen per pool:
 *  - targeted (Rayon's sleep RFC and module): packed counters (jobs event counter, inactive
 *    and sleeping threads) decide whether a new job needs a sleeper woken, and
 *    then exactly one (n for n jobs); a set latch wakes only its owner.
 *  - wake-all (the legacy Rayon sleep): one word names the single sleepy worker and whether
 *    anyone sleeps; every event (new job, set latch) wakes every sleeper.
 *
 * Thread states: active (running a job), idle (searching: counted inactive),
 * sleeping (blocked on its slot's futex word: counted inactive and sleeping).
 * Before sleeping a worker gets *sleepy*: it announces itself through the JEC
 * and searches once more.
 *
 * Invariants (targeted):
 *  1. sleeping <= inactive, each fits in 16 bits. inactive may exceed threads
 *     by the wake-ups in flight (a woken worker adds itself back before its
 *     waker's decrement lands); inactive - sleeping, the searchers, is exact.
 *  2. A worker is counted sleeping exactly while its slot word is DROWSY or
 *     ASLEEP and nobody has woken it; whoever wakes it (a waker holding the
 *     slot lock; the worker itself in the final-check undo; or the worker
 *     itself when a timed wait of the adaptive policy runs out, wake_self,
 *     also under the lock) removes it from the count. The waker, not the sleeper, decrements,
 *     so posters see the new count at once. The waker also removes it from
 *     inactive, and the worker adds itself back once it runs: a woken thread
 *     that has not been scheduled yet cannot search, so posters must not
 *     count it as idle (on a busy or virtualised machine that wait lasts
 *     milliseconds, and a job left to it would wait as long).
 *  3. A worker holds its slot lock from before it is counted until its word
 *     is ASLEEP (or it backed out); so a waker that saw it counted and takes
 *     the lock finds it ASLEEP, or AWAKE and searching again.
 *  4. JEC parity: even = a worker got sleepy and no job was posted since; odd
 *     = a job was posted since. A poster makes it odd; a sleepy worker makes
 *     it even and remembers it; a changed JEC cancels the sleep.
 *
 * Protocol for injected jobs (Rayon's sleep module, "Using seq-cst fences to prevent
 * deadlock"): push; PushFence; read counters. Sleeper: count itself;
 * SleepFence; check the injector. One fence precedes the other in the single
 * total order, so either the poster sees the sleeper counted (and wakes
 * someone) or the sleeper sees the job (and stays up). The JEC alone does not
 * suffice: it can wrap around, and under C11 a poster that finds the JEC
 * already odd only loads the counters, so a worker that gets sleepy after
 * that load is not ordered after the push at all (the spin model in verify/
 * finds this lost wake-up without any wrap-around once the check is gone).
 * A searcher that leaves because its latch is set hands over in the same way
 * (weft__sleep_stop_looking).
 *
 * References: Rayon RFC #5 (the sleep RFC), rayon-core's sleep/README.md (the
 * sleep module) and the legacy sleep it replaced;
 * docs/sleep.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "sleep.h"

#include "debug_yield.h"
#include "injector.h"
#include "os.h"
#include "pool.h"

/* Wake-all protocol, as legacy Rayon built it: rounds (each a search and a yield)
 * before a worker tries to become the sleepy one, and rounds it then stays
 * sleepy before it sleeps (ROUNDS_UNTIL_SLEEPY = 32, ROUNDS_UNTIL_ASLEEP =
 * 64). The targeted protocol decides by time instead (leave.c). */
#define LEGACY_ROUNDS_UNTIL_SLEEPY 32
#define LEGACY_SLEEPY_ROUNDS       32

void (*_Atomic weft__sleep_debug_hook)(weft__sleep *s, weft__debug_point p);

static void debug_point(weft__sleep *s, weft__debug_point p) {
    /* Relaxed: tests set the hook before the pool has work. */
    void (*hook)(weft__sleep *, weft__debug_point) =
        atomic_load_explicit(&weft__sleep_debug_hook, memory_order_relaxed);
    if (WEFT__UNLIKELY(hook != NULL))
        hook(s, p);
}

#define ONE_SLEEPING  ((uint64_t)1)
#define ONE_INACTIVE  ((uint64_t)1 << 16)
#define ONE_JEC       ((uint64_t)1 << 32)
#define LEGACY_ASLEEP ((uint64_t)1)

static unsigned min_u(unsigned a, unsigned b) {
    return a < b ? a : b;
}

int weft__sleep_init(weft__sleep *s, weft_pool *pool, unsigned threads, unsigned slots,
                     bool wake_all, bool leave_fast) {
    size_t bytes = (size_t)slots * sizeof(weft__sleep_slot);
    s->slots = aligned_alloc(WEFT__CACHELINE, bytes);
    if (!s->slots)
        return ENOMEM;
    for (unsigned i = 0; i < slots; i++) {
        pthread_mutex_init(&s->slots[i].lock, NULL);
        atomic_init(&s->slots[i].word, WEFT__SLOT_AWAKE);
        weft__leave_init(&s->slots[i].leave);
    }
    /* JEC starts odd: no worker is sleepy yet. */
    atomic_init(&s->counters, ONE_JEC);
    atomic_init(&s->legacy_state, 0);
    pthread_mutex_init(&s->legacy_lock, NULL);
    atomic_init(&s->legacy_epoch, 0);
    s->threads = threads;
    s->nslots = slots;
    s->wake_all = wake_all;
    s->leave_fast = leave_fast;
    s->cpus = weft__os_cpu_count();
    s->legacy_rounds = leave_fast ? 0 : LEGACY_ROUNDS_UNTIL_SLEEPY;
    s->pool = pool;
    atomic_init(&s->phase.active, 0);
    atomic_init(&s->phase.fast_once, 0);
    atomic_init(&s->rhythm.quiet_ns, 0);
    atomic_init(&s->rhythm.gap_ns, 0);
    atomic_init(&s->rhythm.gap_dev_ns, 0);
    atomic_init(&s->rhythm.gaps, 0);
    atomic_init(&s->rhythm.joined, 0);
    atomic_init(&s->rhythm.width, 0);
    atomic_init(&s->wake_call_cpu_ns, 0);
    return 0;
}

void weft__sleep_destroy(weft__sleep *s) {
    for (unsigned i = 0; i < s->nslots; i++)
        pthread_mutex_destroy(&s->slots[i].lock);
    pthread_mutex_destroy(&s->legacy_lock);
    weft__sleep_abandon(s);
}

void weft__sleep_abandon(weft__sleep *s) {
    free(s->slots);
}

/* ---- Targeted protocol: counters ---------------------------------------- */

/* Add one to the JEC if its parity says `when_sleepy` (even); return the
 * counters as they are after. Seq-cst, like every counter access: the JEC
 * and the thread counts take part in the fence argument (sleep.md). */
static uint64_t jec_increment_if(weft__sleep *s, bool when_sleepy) {
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    while (weft__counters_jec_sleepy(c) == when_sleepy) {
        weft__debug_yield();
        if (atomic_compare_exchange_weak_explicit(&s->counters, &c, c + ONE_JEC,
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return c + ONE_JEC;
    }
    return c;
}

/* Count ourselves asleep unless the JEC moved since we got sleepy. */
static bool count_sleeper(weft__sleep *s, const weft__idle *idle) {
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    while (weft__counters_jec(c) == idle->jec) {
        weft__debug_yield();
        if (atomic_compare_exchange_weak_explicit(&s->counters, &c, c + ONE_SLEEPING,
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return true;
    }
    return false;
}

static void uncount_sleeper(weft__sleep *s, uint64_t also) {
    weft__debug_yield();
    atomic_fetch_sub_explicit(&s->counters, ONE_SLEEPING + also, memory_order_seq_cst);
}

/* ---- Targeted protocol: waking ------------------------------------------ */

/* Under slot i's lock, its word ASLEEP: wake it up in the counters. */
static void mark_awake(weft__sleep *s, weft__sleep_slot *slot, unsigned i) {
    /* Release: pairs with the sleeper's acquire reload after its wait. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_AWAKE, memory_order_release);
    weft__debug_yield();
    if (i < s->threads)                   /* contexts are not counted (weft__sleep_owner_wait) */
        uncount_sleeper(s, ONE_INACTIVE); /* invariant 2: the waker decrements */
}

/* The futex call that wakes a sleeper marked AWAKE. If its sleep is sampled
 * (leave.c: the CPU a sleep/wake round trip costs), measure the waker's share,
 * this call: the system call and the wake-up's scheduling dominate it. */
static void wake_call(weft__sleep *s, weft__sleep_slot *slot, bool sampled) {
    uint64_t cpu = sampled ? weft__os_thread_cpu_ns() : 0;
    weft__os_wake_one(&slot->word);
    if (cpu)
        weft__leave_record_wake_call(s, weft__os_thread_cpu_ns() - cpu);
}

/* Wake worker i if it is asleep. `hinted`: the caller read the counters
 * (seq-cst, so acquire) after i was counted, so i's DROWSY store (made before
 * its counting CAS) is visible and an AWAKE word means there is nothing to do
 * without taking the lock. A latch setter has no such read and always locks. */
static bool wake_specific(weft__sleep *s, unsigned i, bool hinted) {
    weft__sleep_slot *slot = &s->slots[i];
    weft__debug_yield();
    if (hinted && atomic_load_explicit(&slot->word, memory_order_relaxed) == WEFT__SLOT_AWAKE)
        return false;
    pthread_mutex_lock(&slot->lock);
    /* Relaxed: the sleeper writes ASLEEP under this lock. */
    bool woke = atomic_load_explicit(&slot->word, memory_order_relaxed) == WEFT__SLOT_ASLEEP;
    bool sampled = woke && slot->leave.sampled;
    if (woke) {
        slot->leave.woken_at_ns = weft__now_ns(); /* the sleeper learns its wake cost */
        if (WEFT__UNLIKELY(atomic_load_explicit(&s->pool->trace.on, memory_order_relaxed)))
            slot->flow = weft__trace_wake(s->pool); /* an arrow to the sleeper */
        mark_awake(s, slot, i);
    }
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    if (woke)
        wake_call(s, slot, sampled);
    return woke;
}

/* A sleeper whose timed wait ran out wakes itself as a waker would (it is
 * one more party that may wake it): false if a waker got there first. */
static bool wake_self(weft__sleep *s, weft__sleep_slot *slot, unsigned i) {
    pthread_mutex_lock(&slot->lock);
    /* Relaxed: under the lock, like the waker's check. */
    bool woke = atomic_load_explicit(&slot->word, memory_order_relaxed) == WEFT__SLOT_ASLEEP;
    if (woke)
        mark_awake(s, slot, i);
    pthread_mutex_unlock(&slot->lock);
    return woke;
}

static void wake_any(weft__sleep *s, unsigned n) {
    for (unsigned i = 0; i < s->threads && n > 0; i++)
        if (wake_specific(s, i, true))
            n--;
}

static void new_jobs(weft__sleep *s, unsigned n, bool queue_was_empty) {
    /* Make the JEC odd if a worker is sleepy, so it will not sleep. */
    uint64_t c = jec_increment_if(s, true);
    weft__debug_yield();
    unsigned sleepers = weft__counters_sleeping(c);
    if (sleepers == 0)
        return;
    unsigned idle = weft__counters_inactive(c) - sleepers;
    /* A non-empty queue shows the idle workers are not keeping up (Rayon's
     * rule). Under the searcher cap (leave.c) it wakes only when nobody
     * searches (Go's rule): a searcher will take the job, and a sleeper woken
     * besides mostly found it gone and slept again, after costing this pusher
     * a futex call and the machine a time slice (bench/: fib(30) on 8 to 64
     * workers took 0.6-0.8 times as long without those wake-ups). */
    if (!queue_was_empty) {
        if (idle == 0 || weft__leave_searcher_cap(s) == UINT_MAX)
            wake_any(s, min_u(n, sleepers));
    } else if (idle < n) {
        wake_any(s, min_u(n - idle, sleepers));
    }
}

/* ---- Targeted protocol: falling asleep ---------------------------------- */

/* Back out of falling asleep and search again. `spent`: a job was posted
 * that we may have missed, so search once more and get sleepy again (Rayon's
 * sleep module); otherwise (we saw an injected job) search afresh. */
static void back_out(weft__sleep_slot *slot, weft__idle *idle, weft__latch *latch, bool spent) {
    atomic_store_explicit(&slot->word, WEFT__SLOT_AWAKE, memory_order_relaxed);
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    weft__latch_wake_up(latch);
    idle->sleepy = false;
    idle->spent = spent;
}

/* Statistics around a blocking wait (both protocols). */
static void stats_search_end(weft__idle *idle, uint64_t now) {
    if (idle->search_ns) {
        weft__stat_add(&idle->stats->search_ns, now - idle->search_ns);
        atomic_store_explicit(&idle->stats->search_since, 0, memory_order_relaxed);
    }
    idle->search_ns = 0;
}

static void stats_search_begin(weft__idle *idle, uint64_t now) {
    idle->search_ns = now;
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&idle->stats->search_since, now, memory_order_relaxed);
}

static uint64_t stats_before_sleep(weft__idle *idle) {
    weft__stats *st = idle->stats;
    uint64_t now = weft__now_ns();
    stats_search_end(idle, now);
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&st->asleep_since, now, memory_order_relaxed);
    weft__stat_add(&st->sleeps, 1);
    if (st->woken_without_job)
        weft__stat_add(&st->futile_wakeups, 1);
    return now;
}

static void stats_after_sleep(weft__idle *idle, uint64_t slept_at) {
    weft__stats *st = idle->stats;
    uint64_t now = weft__now_ns();
    weft__stat_add(&st->sleep_ns, now - slept_at);
    /* Relaxed: statistics only (stats.h). */
    atomic_store_explicit(&st->asleep_since, 0, memory_order_relaxed);
    weft__stat_add(&st->wakeups, 1);
    st->woken_without_job = true;
    stats_search_begin(idle, now);
}

/* Wait on the slot word until a waker sets it AWAKE, or, with a deadline,
 * until then, and wake ourselves (leave.c's prediction). True if woken by
 * the deadline. */
static bool wait_awake(weft__sleep *s, weft__sleep_slot *slot, unsigned i, uint64_t deadline) {
    /* Acquire: pairs with the waker's release store of AWAKE (and so makes
     * its slot->flow, written before under the lock, visible). */
    while (atomic_load_explicit(&slot->word, memory_order_acquire) == WEFT__SLOT_ASLEEP) {
        if (!deadline)
            weft__os_wait(&slot->word, WEFT__SLOT_ASLEEP);
        else if (!weft__os_wait_until(&slot->word, WEFT__SLOT_ASLEEP, deadline) &&
                 wake_self(s, slot, i))
            return true;
    }
    return false;
}

/* Sleep until woken, or until the leave policy's deadline; true if the
 * deadline woke us. */
static bool block(weft__sleep *s, weft__sleep_slot *slot, weft__idle *idle) {
    const _Atomic bool *tracing = &s->pool->trace.on;
    slot->flow = 0;
    bool sampled = weft__leave_sample_sleep(&slot->leave); /* under the lock: wakers read it */
    /* Relaxed: under the lock; a waker reads it under the same lock. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_ASLEEP, memory_order_relaxed);
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    uint64_t slept_at = stats_before_sleep(idle);
    uint64_t deadline = weft__leave_wake_at(s, idle, slept_at); /* owner-only state */
    weft__trace(tracing, &idle->stats->trace, WEFT__TRACE_SLEEP, 0);
    uint64_t cpu = sampled ? weft__os_thread_cpu_ns() : 0;
    bool timed_out = wait_awake(s, slot, idle->index, deadline);
    if (cpu)
        weft__leave_record_sleep_cpu(&slot->leave, weft__os_thread_cpu_ns() - cpu);
    stats_after_sleep(idle, slept_at);
    if (timed_out) {
        weft__stat_add(&idle->stats->early_wakeups, 1);
        weft__leave_record_timed_wake(&slot->leave, deadline, idle->search_ns);
    }
    if (slot->flow)
        weft__trace(tracing, &idle->stats->trace, WEFT__TRACE_WOKEN, slot->flow);
    weft__trace(tracing, &idle->stats->trace, WEFT__TRACE_SEARCH, 0);
    return timed_out;
}

/* Our timer ran out as the pool's predicted window opens (leave.c, the pool's
 * rhythm): have as many searchers as the cap allows when the work arrives,
 * like a phase's warm-up, but only that many, and no more than the pool's
 * busy periods engage. */
static void rally(weft__sleep *s) {
    /* Seq-cst, like every counter access; a hint here, as in new_jobs. */
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    unsigned searching = weft__counters_inactive(c) - weft__counters_sleeping(c);
    unsigned want =
        min_u(min_u(weft__leave_searcher_cap(s), s->threads), weft__leave_pool_width(s));
    if (searching < want)
        wake_any(s, min_u(want - searching, weft__counters_sleeping(c)));
}

/* This worker counts itself inactive (searching). If every worker is now
 * inactive the pool has gone quiet: the pool's rhythm starts a quiet period
 * (leave.c). A woken worker counts itself back here too, and may be the last:
 * its waker took it out of the count while the job it was woken for ran. */
static void count_searching(weft__sleep *s) {
    weft__debug_yield();
    /* Seq-cst, like every access to the counters: the proof's total order. */
    uint64_t old = atomic_fetch_add_explicit(&s->counters, ONE_INACTIVE, memory_order_seq_cst);
    if (weft__counters_inactive(old) + 1 ==
        s->threads) /* only workers search (contexts never do) */
        weft__leave_pool_quiet(s);
}

static void fall_asleep(weft__sleep *s, weft__idle *idle, weft__latch *latch) {
    if (!weft__latch_get_sleepy(latch))
        return; /* set: the caller's loop ends */
    weft__debug_yield();
    weft__sleep_slot *slot = &s->slots[idle->index];
    debug_point(s, WEFT__DEBUG_BEFORE_LOCK);
    pthread_mutex_lock(&slot->lock);
    if (!weft__latch_fall_asleep(latch)) {
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    /* Relaxed: published to wakers by the seq-cst CAS in count_sleeper. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_DROWSY, memory_order_relaxed);
    weft__debug_yield();
    debug_point(s, WEFT__DEBUG_BEFORE_COUNT);
    if (!count_sleeper(s, idle)) {
        back_out(slot, idle, latch, true); /* a job was posted */
        return;
    }
    debug_point(s, WEFT__DEBUG_BEFORE_FINAL_CHECK);
    weft__debug_yield();
    /* SleepFence. Either the injector's PushFence comes first and the push is
     * visible to the check below, or this fence does and the poster's
     * counter read sees us counted and wakes someone. */
    weft__fence_seq_cst();
    weft__debug_yield();
    if (weft__pool_final_check(s->pool, idle->index)) {
        uncount_sleeper(s, 0); /* nobody woke us: we hold our lock */
        back_out(slot, idle, latch, false);
        return;
    }
    bool timed_out = block(s, slot, idle);
    debug_point(s, WEFT__DEBUG_WOKEN);
    weft__debug_yield();
    count_searching(s); /* our waker took us out of inactive (invariant 2) */
    weft__leave_record_wake(&slot->leave, idle->search_ns);
    if (timed_out && weft__leave_pool_due(s, idle->index, idle->search_ns))
        rally(s);
    idle->sleepy = idle->spent = false;
    idle->backoff = 0;
    weft__latch_wake_up(latch);
}

/* ---- Wake-all protocol (the legacy Rayon sleep) -------------------------- */

static uint64_t legacy_sleepy(unsigned index) {
    return ((uint64_t)index + 1) << 1;
}

static WEFT__COLD void legacy_tickle_cold(weft__sleep *s) {
    uint64_t old = atomic_exchange_explicit(&s->legacy_state, 0, memory_order_seq_cst);
    weft__debug_yield();
    if (!(old & LEGACY_ASLEEP))
        return;
    pthread_mutex_lock(&s->legacy_lock);
    /* Relaxed: only written under legacy_lock. */
    uint32_t e = atomic_load_explicit(&s->legacy_epoch, memory_order_relaxed);
    /* Release: pairs with a sleeper's acquire reload; the lock orders us after
     * any sleeper that read the old epoch. */
    atomic_store_explicit(&s->legacy_epoch, e + 1, memory_order_release);
    pthread_mutex_unlock(&s->legacy_lock);
    weft__debug_yield();
    weft__os_wake_all(&s->legacy_epoch);
}

/* Any event: a new job, a set latch. Seq-cst load: it follows the event in the
 * total order (PushFence, or the latch's seq-cst exchange), see sleep.md. */
static void legacy_tickle(weft__sleep *s) {
    weft__debug_yield();
    if (atomic_load_explicit(&s->legacy_state, memory_order_seq_cst) != 0)
        legacy_tickle_cold(s);
}

static bool legacy_get_sleepy(weft__sleep *s, unsigned index) {
    uint64_t st = atomic_load_explicit(&s->legacy_state, memory_order_seq_cst);
    while ((st >> 1) == 0) {
        weft__debug_yield();
        if (atomic_compare_exchange_weak_explicit(&s->legacy_state, &st, st | legacy_sleepy(index),
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return true;
    }
    return false; /* another worker is the sleepy one */
}

static bool legacy_still_sleepy(weft__sleep *s, unsigned index) {
    uint64_t st = atomic_load_explicit(&s->legacy_state, memory_order_seq_cst);
    return (st & ~LEGACY_ASLEEP) == legacy_sleepy(index);
}

/* Move from sleepy to asleep under the lock, and read the epoch to wait on.
 * False: we were tickled meanwhile. */
static bool legacy_mark_asleep(weft__sleep *s, unsigned index, uint32_t *epoch) {
    pthread_mutex_lock(&s->legacy_lock);
    uint64_t st = atomic_load_explicit(&s->legacy_state, memory_order_seq_cst);
    bool ok = (st & ~LEGACY_ASLEEP) == legacy_sleepy(index) &&
              atomic_compare_exchange_strong_explicit(&s->legacy_state, &st, LEGACY_ASLEEP,
                                                      memory_order_seq_cst, memory_order_seq_cst);
    *epoch = atomic_load_explicit(&s->legacy_epoch, memory_order_relaxed);
    pthread_mutex_unlock(&s->legacy_lock);
    return ok;
}

static void legacy_fall_asleep(weft__sleep *s, weft__idle *idle, weft__latch *latch) {
    idle->sleepy = false;
    idle->rounds = 0;
    uint32_t epoch;
    debug_point(s, WEFT__DEBUG_LEGACY_BEFORE_ASLEEP);
    if (!legacy_mark_asleep(s, idle->index, &epoch))
        return;
    weft__debug_yield();
    /* weft's addition to legacy Rayon: its sleep module's SleepFence and final check, for
     * the injector and our latch. Without it an injected job or a latch set
     * whose tickle read the state before we got sleepy is lost (sleep.md). */
    weft__fence_seq_cst();
    weft__debug_yield();
    if (weft__pool_final_check(s->pool, idle->index) || weft__latch_probe(latch))
        return; /* the stale ASLEEP bit costs at most one spurious tickle */
    /* One wait, no loop (legacy Rayon): the search loop is the loop. */
    uint64_t slept_at = stats_before_sleep(idle);
    weft__trace(&s->pool->trace.on, &idle->stats->trace, WEFT__TRACE_SLEEP, 0);
    weft__os_wait(&s->legacy_epoch, epoch);
    stats_after_sleep(idle, slept_at);
    weft__trace(&s->pool->trace.on, &idle->stats->trace, WEFT__TRACE_SEARCH, 0);
}

/* Before getting sleepy: legacy Rayon's rounds, unless a phase (or its fast
 * leave) decides (leave.c). */
static bool legacy_keep_searching(weft__sleep *s, weft__idle *idle, uint64_t now) {
    if (weft__phase_active(&s->phase) || weft__phase_fast_leave(&s->phase))
        return weft__leave_keep_searching(s, idle, now);
    return idle->rounds < s->legacy_rounds;
}

static void legacy_no_work_found(weft__sleep *s, weft__idle *idle, weft__latch *latch,
                                 uint64_t now) {
    if (!idle->sleepy) {
        if (legacy_keep_searching(s, idle, now)) {
            idle->rounds++;
            weft__os_yield();
        } else if (legacy_get_sleepy(s, idle->index)) {
            idle->sleepy = true;
            idle->rounds = 0;
        } else {
            weft__os_yield(); /* only one worker may be sleepy at a time */
        }
    } else if (idle->rounds < (s->leave_fast ? 0u : LEGACY_SLEEPY_ROUNDS)) {
        weft__os_yield();
        if (legacy_still_sleepy(s, idle->index))
            idle->rounds++;
        else /* tickled: start over */
            idle->sleepy = false, idle->rounds = 0;
    } else {
        legacy_fall_asleep(s, idle, latch);
    }
}

/* ---- Entry points -------------------------------------------------------- */

void weft__sleep_start_looking(weft__sleep *s, weft__idle *idle, unsigned index,
                               weft__stats *stats) {
    *idle = (weft__idle){.index = index, .stats = stats};
    /* search_ns and idle_ns stay 0: a search that succeeds at once costs no
     * clock read. */
    if (s->wake_all)
        return;
    count_searching(s);
}

/* Targeted: leave the inactive count. True if we were the last searcher while
 * someone sleeps, so that what we leave behind would wait for us. */
static bool leave_searching(weft__sleep *s) {
    weft__debug_yield();
    /* Seq-cst, like every access to the counters: the proof's total order. */
    uint64_t old = atomic_fetch_sub_explicit(&s->counters, ONE_INACTIVE, memory_order_seq_cst);
    unsigned sleepers = weft__counters_sleeping(old);
    return sleepers > 0 && weft__counters_inactive(old) - sleepers == 1;
}

void weft__sleep_work_found(weft__sleep *s, weft__idle *idle, bool more) {
    if (idle->search_ns) {
        uint64_t now = weft__now_ns();
        stats_search_end(idle, now);
        weft__leave_record_idle(s, idle->index, now - idle->idle_ns);
    } else {
        weft__leave_record_idle(s, idle->index, 0);
    }
    idle->stats->woken_without_job = false;
    if (s->wake_all) {
        if (idle->sleepy)
            legacy_tickle(s); /* give up being the sleepy one (legacy Rayon) */
        return;
    }
    weft__leave_pool_busy(s);
    /* We were the last searcher and left work behind: hand over to a sleeper
     * so the rest does not wait for us (the sleep RFC's "missed hazards"). */
    if (leave_searching(s) && more)
        wake_any(s, 1);
}

/* A poster that saw us searching woke nobody (idle >= n in new_jobs); now we
 * leave without looking again. If we were the last searcher and someone
 * sleeps, look once more after a fence, and hand over to a sleeper if an
 * outside job is waiting; otherwise it would wait for however long our
 * caller's continuation runs. Found by the spin model (verify/, leave
 * hand-over): the fence pairs with the poster's PushFence as the SleepFence
 * does, so either we see its push or it saw us gone. */
void weft__sleep_stop_looking(weft__sleep *s, weft__idle *idle) {
    debug_point(s, WEFT__DEBUG_LEAVING);
    if (s->wake_all) {
        weft__sleep_work_found(s, idle, false);
        return;
    }
    if (idle->search_ns)
        stats_search_end(idle, weft__now_ns());
    idle->stats->woken_without_job = false;
    if (!leave_searching(s))
        return;
    weft__debug_yield();
    weft__fence_seq_cst();
    weft__debug_yield();
    if (weft__pool_final_check(s->pool, idle->index))
        wake_any(s, 1);
}

void weft__sleep_no_work_found(weft__sleep *s, weft__idle *idle, weft__latch *latch) {
    uint64_t now = weft__now_ns();
    if (!idle->search_ns)
        stats_search_begin(idle, now);
    if (!idle->idle_ns)
        idle->idle_ns = now;
    if (s->wake_all) {
        legacy_no_work_found(s, idle, latch, now);
    } else if (idle->sleepy) {
        fall_asleep(s, idle, latch);
    } else if (!idle->spent && weft__leave_keep_searching(s, idle, now)) {
        weft__leave_backoff(idle);
    } else {
        /* Get sleepy: make the JEC even and remember it; search once more. */
        idle->jec = weft__counters_jec(jec_increment_if(s, false));
        idle->sleepy = true;
    }
}

void weft__sleep_wake_sleepers(weft__sleep *s) {
    if (s->wake_all) {
        legacy_tickle(s);
        return;
    }
    /* Every slot, under its lock: a worker on its way to sleep (DROWSY, not
     * yet counted) must be waited for too, not just the counted ones. */
    for (unsigned i = 0; i < s->threads; i++)
        wake_specific(s, i, false);
}

void weft__sleep_new_jobs_cold(weft__sleep *s, unsigned n, bool queue_was_empty) {
    if (s->wake_all)
        legacy_tickle(s);
    else
        new_jobs(s, n, queue_was_empty);
}

void weft__sleep_new_injected_jobs(weft__sleep *s, unsigned n, bool queue_was_empty) {
    /* PushFence. Either the SleepFence of a worker going to sleep comes first
     * and our counter read below sees it counted, or ours does and its final
     * injector check sees our push. */
    weft__debug_yield();
    weft__fence_seq_cst();
    weft__debug_yield();
    weft__sleep_new_jobs_cold(s, n, queue_was_empty);
}

void weft__sleep_latch_set(weft__sleep *s, unsigned owner, bool was_sleeping) {
    if (owner >= s->threads) { /* a context sleeps on its own slot, whatever the protocol */
        if (was_sleeping)
            wake_specific(s, owner, false);
    } else if (s->wake_all) {
        legacy_tickle(s);
    } else if (was_sleeping) {
        wake_specific(s, owner, false);
    }
}

/* A context thread waiting for its latch with nothing of its own left to run
 * (context.c): the latch protocol alone (Rayon's sleep RFC, Appendix A), without the
 * counters: a context takes no new jobs, so nobody needs to count or wake it
 * for them; only the latch's set wakes it. */
void weft__sleep_owner_wait(weft__sleep *s, unsigned index, weft__latch *latch) {
    if (!weft__latch_get_sleepy(latch))
        return;
    weft__debug_yield();
    weft__sleep_slot *slot = &s->slots[index];
    pthread_mutex_lock(&slot->lock);
    if (!weft__latch_fall_asleep(latch)) {
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    /* Relaxed: under the lock; a setter that saw SLEEPING takes the lock. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_ASLEEP, memory_order_relaxed);
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    /* Acquire: pairs with the waker's release store of AWAKE. */
    while (atomic_load_explicit(&slot->word, memory_order_acquire) == WEFT__SLOT_ASLEEP)
        weft__os_wait(&slot->word, WEFT__SLOT_ASLEEP);
    weft__latch_wake_up(latch);
}

void weft__sleep_debug_set_jec(weft__sleep *s, uint32_t jec) {
    uint64_t c = atomic_load_explicit(&s->counters, memory_order_seq_cst);
    while (!atomic_compare_exchange_weak_explicit(&s->counters, &c, weft__counters_with_jec(c, jec),
                                                  memory_order_seq_cst, memory_order_seq_cst)) {
    }
}

uint64_t weft__sleep_debug_counters(weft__sleep *s) {
    return atomic_load_explicit(&s->counters, memory_order_seq_cst);
}

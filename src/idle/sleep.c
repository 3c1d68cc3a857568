/* SPDX-License-Identifier: MIT */
/* The targeted sleep protocol (Rayon's sleep RFC and module) and the sleep
 * module's entry points (sleep.h; wake-all pools go to wake_all.c). This
 * block is what a maintainer must keep true; docs/sleep.md has the proof.
 *
 * Packed counters (jobs event counter, inactive and sleeping threads) decide
 * whether a new job needs a sleeper woken, and then exactly one (n for n
 * jobs), unless a worker woken a moment ago is on its way (in_flight.h); a
 * set latch wakes only its owner. When a worker gets sleepy, and
 * whether it sleeps until a time, the leave policy says (leave.c); this file
 * counts, sleeps and wakes. Thread states: active (running a job), idle
 * (searching: counted inactive), sleeping (blocked on its slot's futex word:
 * counted inactive and sleeping). Before sleeping a worker gets *sleepy*: it
 * announces itself through the JEC and searches once more.
 *
 * Invariants (targeted):
 *  1. sleeping <= inactive, each fits in 16 bits. inactive may exceed threads
 *     by the wake-ups in flight (a woken worker adds itself back before its
 *     waker's decrement lands); inactive - sleeping, the searchers, is exact.
 *  2. A worker is counted sleeping exactly while its slot word is DROWSY or
 *     ASLEEP and nobody has woken it; whoever wakes it (a waker holding the
 *     slot lock, or the worker itself: in the final-check undo, or under the
 *     lock when its timed wait runs out, wake_self) removes it from the
 *     count, so posters see the new count at once. The waker also removes it
 *     from inactive, and the worker adds itself back once it runs: a woken
 *     thread not yet scheduled cannot search, so posters must not count it
 *     idle (on a busy or virtualised machine that wait lasts milliseconds).
 *  3. A worker holds its slot lock from before it is counted until its word
 *     is ASLEEP (or it backed out); so a waker that saw it counted and takes
 *     the lock finds it ASLEEP, or AWAKE and searching again.
 *  4. JEC parity: even = a worker got sleepy and no job was posted since; odd
 *     = a job was posted since. A poster makes it odd; a sleepy worker makes
 *     it even and remembers it; a changed JEC cancels the sleep.
 *
 * Injected jobs (Rayon's sleep module, "Using seq-cst fences to prevent
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
 * References: Rayon RFC #5 (the sleep RFC), rayon-core's sleep/README.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "idle/sleep.h"

#include "idle/budget.h"
#include "os/futex.h"
#include "os/clock.h"

#define ONE_SLEEPING ((uint64_t)1)
#define ONE_INACTIVE ((uint64_t)1 << 16)
#define ONE_JEC      ((uint64_t)1 << 32)

/* Benchmark builds only (bench/CMakeLists.txt builds the library again with
 * it): a push onto a non-empty queue always wakes a sleeper (Rayon's rule,
 * new_jobs), to measure Go's rule against it. */
#ifndef WEFT__SLEEP_RAYON_WAKE
#define WEFT__SLEEP_RAYON_WAKE 0
#endif

int weft__sleep_init(weft__sleep *s, const weft__idle_env *env, unsigned threads,
                     unsigned spares_first, unsigned slots, unsigned cpus, bool wake_all,
                     bool leave_fast) {
    size_t bytes = (size_t)slots * sizeof(weft__sleep_slot);
    s->slots = aligned_alloc(WEFT__CACHELINE, bytes);
    if (!s->slots)
        return ENOMEM;
    for (unsigned i = 0; i < slots; i++) {
        pthread_mutex_init(&s->slots[i].lock, NULL);
        atomic_init(&s->slots[i].word, WEFT__SLOT_AWAKE);
        s->slots[i].woken_at_ns = 0;
        s->slots[i].sampled = false;
        s->slots[i].wake_ns = 0;
        s->slots[i].flow = 0;
        weft__leave_init(&s->slots[i].leave);
    }
    /* JEC starts odd: no worker is sleepy yet. */
    atomic_init(&s->counters, ONE_JEC);
    weft__in_flight_init(&s->in_flight);
    s->threads = threads;
    s->spares_first = spares_first;
    s->nslots = slots;
    s->wake_all = wake_all;
    s->env = env;
    weft__leave_pool_init(&s->leave, threads, cpus, leave_fast);
    weft__wake_all_init(&s->all, env, leave_fast);
    return 0;
}

void weft__sleep_destroy(weft__sleep *s) {
    for (unsigned i = 0; i < s->nslots; i++)
        pthread_mutex_destroy(&s->slots[i].lock);
    weft__wake_all_destroy(&s->all);
    weft__sleep_abandon(s);
}

void weft__sleep_abandon(weft__sleep *s) {
    free(s->slots);
}

/* ---- Targeted protocol: counters ---------------------------------------- */

/* Add one to the JEC if its parity says `when_sleepy` (even); return the counters
 * after. Seq-cst, as every counter access: all take part in the fence argument. */
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

/* Count ourselves asleep unless the JEC moved since we got sleepy (seq-cst: above). */
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
    /* Seq-cst, like every counter access: posters read the new count at once. */
    atomic_fetch_sub_explicit(&s->counters, ONE_SLEEPING + also, memory_order_seq_cst);
}

/* ---- Targeted protocol: waking ------------------------------------------ */

/* Under slot i's lock, its word ASLEEP: wake it up in the counters. */
static void mark_awake(weft__sleep *s, weft__sleep_slot *slot, unsigned i) {
    /* Release: pairs with the sleeper's acquire reload after its wait. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_AWAKE, memory_order_release);
    weft__debug_yield();
    if (weft__sleep_slot_searches(s, i))  /* contexts are not counted (context.c) */
        uncount_sleeper(s, ONE_INACTIVE); /* invariant 2: the waker decrements */
}

/* The futex call that wakes a sleeper marked AWAKE. If its sleep is sampled
 * (leave.c: the CPU a sleep/wake round trip costs), measure the waker's share,
 * this call: the system call and the wake-up's scheduling dominate it. */
static void wake_call(weft__sleep *s, weft__sleep_slot *slot, bool sampled) {
    uint64_t cpu = sampled ? weft__os_thread_cpu_ns() : 0;
    weft__os_wake_one(&slot->word);
    if (cpu)
        weft__leave_wake_call(&s->leave, weft__os_thread_cpu_ns() - cpu);
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
    bool sampled = woke && slot->sampled;
    if (woke) {
        slot->woken_at_ns = weft__now_ns();  /* the sleeper learns its wake cost */
        if (weft__sleep_slot_searches(s, i)) /* before AWAKE (in_flight.h) */
            weft__in_flight_woken(&s->in_flight, slot->woken_at_ns, slot->wake_ns);
        /* Relaxed: a flag that turns tracing on and off (trace_buf.h). */
        if (WEFT__UNLIKELY(atomic_load_explicit(s->env->tracing, memory_order_relaxed)))
            slot->flow = s->env->trace_wake(s->env->ctx); /* an arrow to the sleeper */
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

/* The workers first, then the spares (none sleeps while no job blocks). */
static void wake_any(weft__sleep *s, unsigned n) {
    for (unsigned i = 0; i < s->nslots && n > 0; i = i + 1 == s->threads ? s->spares_first : i + 1)
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
    unsigned idle = weft__counters_inactive(c) - sleepers, want;
    /* A non-empty queue shows the idle workers are not keeping up (Rayon's
     * rule, WEFT__SLEEP_RAYON_WAKE). weft wakes only when nobody searches
     * (Go's rule): a searcher will take the job, and a sleeper woken besides
     * mostly finds it gone and sleeps again, after costing this pusher a
     * futex call and the machine a time slice (docs/performance.md). */
    if (!queue_was_empty)
        want = idle == 0 || WEFT__SLEEP_RAYON_WAKE ? n : 0;
    else
        want = idle < n ? n - idle : 0;
    if (want && !queue_was_empty && WEFT__RULE(DEFER) && weft__in_flight_defer(&s->in_flight, want))
        return; /* a worker on its way takes the job, and wakes for the rest */
    wake_any(s, want < sleepers ? want : sleepers);
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

/* Wait on the slot word until a waker sets it AWAKE, or, with a deadline,
 * until then, and wake ourselves (leave.c: the pool's work is due). True if
 * the deadline woke us. */
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

/* This worker counts itself inactive (searching); if every worker now is
 * (contexts never search), the pool went quiet (rhythm.c). A woken worker
 * counts itself back here too, and may be the last: its waker uncounted it
 * while its job ran. */
static void count_searching(weft__sleep *s) {
    weft__debug_yield();
    /* Seq-cst, like every access to the counters: the proof's total order. */
    uint64_t old = atomic_fetch_add_explicit(&s->counters, ONE_INACTIVE, memory_order_seq_cst);
    if (weft__counters_inactive(old) + 1 == s->threads)
        weft__rhythm_quiet(&s->leave.rhythm, weft__now_ns());
}

/* Sleep until woken or the leave policy's deadline, then take a budget slot
 * (budget.c); tell the policy how it went. */
static void block(weft__sleep *s, weft__sleep_slot *slot, weft__idle *idle, weft__latch *latch) {
    slot->flow = 0;
    slot->woken_at_ns = 0;
    slot->wake_ns = slot->leave.wake_ns; /* under the lock: its waker reads these */
    slot->sampled = idle->sampled;
    /* Relaxed: under the lock; a waker reads it under the same lock. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_ASLEEP, memory_order_relaxed);
    pthread_mutex_unlock(&slot->lock);
    weft__debug_yield();
    uint64_t slept_at = weft__idle_sleep_begin(idle, s->env->tracing);
    uint64_t cpu = idle->sampled ? weft__os_thread_cpu_ns() : 0;
    bool timed_out = wait_awake(s, slot, idle->index, idle->wake_at);
    weft__leave_wake w = {.deadline = idle->wake_at,
                          .cpu_ns = cpu ? weft__os_thread_cpu_ns() - cpu : 0,
                          .woken_ns = slot->woken_at_ns}; /* AWAKE's acquire: the waker's */
    w.now = weft__idle_sleep_end(idle, slept_at);
    if (timed_out)
        weft__stat_add(&idle->stats->early_wakeups, 1);
    if (slot->flow)
        weft__trace(s->env->tracing, &idle->stats->trace, WEFT__TRACE_WOKEN, slot->flow);
    weft__trace(s->env->tracing, &idle->stats->trace, WEFT__TRACE_SEARCH, 0);
    weft__idle_debug_point(s->env, WEFT__DEBUG_WOKEN);
    weft__debug_yield();
    count_searching(s); /* our waker took us out of inactive (invariant 2) */
    unsigned owed = w.woken_ns ? weft__in_flight_arrive(&s->in_flight) : 0;
    if (owed && weft__idle_left_behind(s->env, idle->index))
        wake_any(s, owed); /* the wake-ups posters left to us (in_flight.h), if work waits */
    weft__idle_take_slot(s->env, latch); /* counted searching meanwhile */
    weft__leave_woke(&slot->leave, &w);
}

static void fall_asleep(weft__sleep *s, weft__idle *idle, weft__latch *latch) {
    if (!weft__latch_get_sleepy(latch))
        return; /* set: the caller's loop ends */
    weft__debug_yield();
    weft__sleep_slot *slot = &s->slots[idle->index];
    weft__idle_debug_point(s->env, WEFT__DEBUG_BEFORE_LOCK);
    pthread_mutex_lock(&slot->lock);
    if (!weft__latch_fall_asleep(latch)) {
        pthread_mutex_unlock(&slot->lock);
        return;
    }
    /* A phase's warm-up passed while we were sleepy and found us awake: it
     * counted its begin before it took this lock, so we see it. Take it as a
     * wake-up: search afresh, retained by the phase from now. */
    if (weft__phase_begins(s->env->phase) != idle->begins) {
        back_out(slot, idle, latch, false);
        weft__idle_search_end(idle, weft__now_ns());
        return;
    }
    /* Relaxed: published to wakers by the seq-cst CAS in count_sleeper. */
    atomic_store_explicit(&slot->word, WEFT__SLOT_DROWSY, memory_order_relaxed);
    weft__debug_yield();
    weft__idle_debug_point(s->env, WEFT__DEBUG_BEFORE_COUNT);
    if (!count_sleeper(s, idle)) {
        back_out(slot, idle, latch, true); /* a job was posted */
        return;
    }
    weft__idle_debug_point(s->env, WEFT__DEBUG_BEFORE_FINAL_CHECK);
    weft__debug_yield();
    /* SleepFence. Either the injector's PushFence comes first and the push is
     * visible to the check below, or this fence does and the poster's
     * counter read sees us counted and wakes someone. */
    weft__fence_seq_cst();
    weft__debug_yield();
    if (weft__idle_must_stay(s->env, idle->index)) {
        uncount_sleeper(s, 0); /* nobody woke us: we hold our lock */
        back_out(slot, idle, latch, false);
        return;
    }
    block(s, slot, idle, latch);
    idle->sleepy = idle->spent = false;
    idle->backoff = 0;
    weft__latch_wake_up(latch);
}

/* ---- Entry points -------------------------------------------------------- */

void weft__sleep_start_looking(weft__sleep *s, weft__idle *idle, unsigned index,
                               weft__stats *stats) {
    /* search_ns, idle_ns 0: a search that succeeds at once reads no clock. */
    *idle = (weft__idle){.index = index, .stats = stats};
    if (WEFT__LIKELY(!s->wake_all))
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
    uint64_t idle_for = 0;
    if (idle->search_ns) {
        uint64_t now = weft__now_ns();
        weft__idle_search_end(idle, now);
        idle_for = now - idle->idle_ns;
    }
    idle->stats->woken_without_job = false;
    if (WEFT__UNLIKELY(s->wake_all)) {
        weft__wake_all_stop_looking(&s->all, idle);
        return;
    }
    weft__leave_found(&s->leave, &s->slots[idle->index].leave, idle_for);
    weft__idle_debug_point(s->env, WEFT__DEBUG_FOUND);
    /* We were the last searcher and left work behind, seen in our search or
     * posted since: hand over to a sleeper so it does not wait for our job
     * (the sleep RFC's "missed hazards"; idle.h). */
    if (leave_searching(s) && (more || weft__idle_left_behind(s->env, idle->index)))
        wake_any(s, 1);
}

/* A poster that saw us searching woke nobody (idle >= n in new_jobs); now we
 * leave for our caller's continuation. If we were the last searcher and
 * someone sleeps, look once more and hand over (idle.h), or the job waits for
 * however long that continuation runs. Found by the spin model (verify/,
 * leave hand-over). */
void weft__sleep_stop_looking(weft__sleep *s, weft__idle *idle) {
    weft__idle_debug_point(s->env, WEFT__DEBUG_LEAVING);
    if (idle->search_ns)
        weft__idle_search_end(idle, weft__now_ns());
    idle->stats->woken_without_job = false;
    if (WEFT__UNLIKELY(s->wake_all)) {
        weft__wake_all_stop_looking(&s->all, idle);
        return;
    }
    if (leave_searching(s) && weft__idle_left_behind(s->env, idle->index))
        wake_any(s, 1);
}

/* Ask the leave policy: search again, or get sleepy (make the JEC even and
 * remember it; search once more, then sleep). */
static void no_work_found(weft__sleep *s, weft__idle *idle, uint64_t now) {
    /* Before the policy reads the phase: a later begin is caught in fall_asleep. */
    uint32_t begins = weft__phase_begins(s->env->phase);
    weft__leave_now in = {.now = now,
                          .search_ns = idle->search_ns,
                          .phase = s->env->phase,
                          .spent = idle->spent,
                          .wanted = weft__budget_wanted()};
    weft__leave *lv = &s->slots[idle->index].leave;
    if (weft__leave_decide(&s->leave, lv, &in, &idle->wake_at, &idle->sampled) ==
        WEFT__LEAVE_SEARCH) {
        weft__leave_backoff(&idle->backoff);
        return;
    }
    idle->jec = weft__counters_jec(jec_increment_if(s, false));
    idle->begins = begins;
    idle->sleepy = true;
}

void weft__sleep_no_work_found(weft__sleep *s, weft__idle *idle, weft__latch *latch) {
    uint64_t now = weft__idle_missed(idle);
    if (WEFT__UNLIKELY(s->wake_all))
        weft__wake_all_no_work_found(&s->all, idle, latch, now);
    else if (idle->sleepy)
        fall_asleep(s, idle, latch);
    else
        no_work_found(s, idle, now);
}

void weft__sleep_wake_sleepers(weft__sleep *s) {
    if (WEFT__UNLIKELY(s->wake_all)) {
        weft__wake_all_tickle(&s->all);
        return;
    }
    /* Every slot, under its lock: one on its way to sleep holds it until it
     * is ASLEEP; one not there yet sees under it what our caller posted (a
     * phase's begin, fall_asleep; a broadcast, the final check). */
    for (unsigned i = 0; i < s->threads; i++)
        wake_specific(s, i, false);
}

void weft__sleep_new_jobs_cold(weft__sleep *s, unsigned n, bool queue_was_empty) {
    if (WEFT__UNLIKELY(s->wake_all))
        weft__wake_all_tickle(&s->all);
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

void weft__sleep_set_latch(weft__sleep *s, weft__latch *l) {
    unsigned owner = l->owner; /* copied: l may be gone right after the swap */
    weft__debug_yield();
    if (WEFT__UNLIKELY(s->wake_all) && weft__sleep_slot_searches(s, owner)) {
        weft__wake_all_set_latch(&s->all, l);
        return;
    }
    /* Release: the owner's acquire probe sees the job's writes. An owner that
     * saw the latch unset moves it SLEEPY -> SLEEPING under its slot lock with
     * a CAS, which the swap precedes (the CAS fails) or follows (we see
     * SLEEPING and take that lock): one word's order, which needs no fence. */
    uint32_t old = atomic_exchange_explicit(&l->state, WEFT__LATCH_SET, memory_order_release);
    weft__debug_yield();
    if (old == WEFT__LATCH_SLEEPING) /* a context sleeps on its slot under either protocol */
        wake_specific(s, owner, false);
}

void weft__sleep_nudge_context(weft__sleep *s, weft__latch *l) {
    /* Relaxed: a hint; the slot's lock decides. */
    if (atomic_load_explicit(&l->state, memory_order_relaxed) == WEFT__LATCH_SLEEPING)
        wake_specific(s, l->owner, false);
}

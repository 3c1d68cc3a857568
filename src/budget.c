/* SPDX-License-Identifier: MIT */
/* The CPU budget: one count of slots shared by the workers of every pool of
 * the process (weft_set_concurrency; seed 004's composability concern, the
 * role of oneTBB's market and global_control). A worker of a budgeted pool
 * runs jobs or searches only while it holds a slot. It takes one when it
 * starts and whenever it comes back from a block, and gives it back whenever
 * it blocks (it sleeps, or a wait of its job sleeps: a participating wait
 * that blocks hands its slot on) and when it exits. So at most `cap` workers
 * of all pools are runnable for weft at once, and pools that each size
 * themselves to the machine no longer make the OS time-slice several times
 * more threads than there are CPUs. Outside threads and contexts hold no
 * slot: they do not count against the budget.
 *
 * When the cap binds: a cap set by weft_set_concurrency always; the default
 * one (the CPUs available) while two budgeted pools or more have workers.
 * A pool alone keeps the workers its owner gave it: oversubscribing the
 * machine with one pool is a choice, with several an accident. It also
 * costs: with exactly as many runnable workers as CPUs, the kernel leaves a
 * CPU idle whenever it queues two of them on the other (docs/performance.md
 * measures it), where a pool oversubscribed on its own has a spare thread
 * queued on each. Slots are counted either way, so a cap that starts to
 * bind finds the count right.
 *
 * Two kinds of waiter. A worker woken with its latch set (the join, scope,
 * run or event it waits in is done) holds a continuation that no other
 * worker can run: it waits as URGENT, is woken first, and a NORMAL taker
 * leaves a free slot to it. Any other waiter was woken to look for work that
 * a slot holder may find as well.
 *
 * Invariants:
 *  1. running is the number of slots held. It exceeds cap only while the
 *     cap does not bind, after it was lowered or began to bind (holders keep
 *     their slots until they block), or while a pool is destroyed (a
 *     stopping worker that found no slot finishes without one).
 *  2. A thread holds at most one slot (me.held), and only a worker of a
 *     budgeted pool takes one (me.stop set).
 *  3. No waiter sleeps while a slot is free for it. A releaser decrements
 *     running, then reads the waiters (URGENT first); a waiter adds itself
 *     to the waiters of its kind, then reads running to take a slot. All
 *     these accesses are seq-cst: either the releaser sees the waiter (or
 *     an URGENT one, which takes the slot) and wakes one, or the waiter sees
 *     the freed slot. A waiter reads its kind's `turn` before it tries and
 *     blocks only while `turn` still holds that value, so a bump after its
 *     read ends the block.
 *  4. A releaser may wake a kind whose waiter takes another slot, or leaves
 *     without one: every waiter, once it stops counting itself, looks again
 *     (seq-cst, after its decrement) and wakes the next waiter if a slot is
 *     free. With 3 this leaves no free slot unclaimed while anyone waits: a
 *     releaser that read the departing waiter still counted is seen by its
 *     look.
 *
 * Liveness: a slot holder gives the slot back when it blocks in weft or
 * exits, and a holder that searches in vain while a continuation, or a
 * worker of another pool, waits for a slot sleeps at once
 * (weft__budget_wanted). A job that blocks outside weft (on I/O, a lock, or
 * a spin on another job) keeps its slot while it waits: with every slot
 * held by such jobs, the other workers wait too. weft.h says so, and offers
 * pools exempt from the budget for such work.
 */
#include <errno.h>

#include <weft.h>

#include "budget.h"

#include "cpus.h"
#include "os.h"

enum { NORMAL, URGENT };

/* One line: a release reads the waiters right after running. */
static _Alignas(WEFT__CACHELINE) struct {
    _Atomic uint32_t running;    /* A: slots held */
    _Atomic uint32_t cap;        /* A: slots there are; 0 until first read */
    _Atomic uint32_t waiters[2]; /* A: threads in take()'s wait, by kind */
    _Atomic uint32_t turn[2];    /* A: futex words, by kind; a bump ends the waits */
    _Atomic uint32_t pools;      /* A: budgeted pools with workers */
    _Atomic bool chosen;         /* A: the cap was set (weft_set_concurrency) */
} budget;

/* The calling thread. */
static _Thread_local struct {
    bool held;                      /* holds a slot */
    weft__latch *stop;              /* a budgeted worker: its terminate latch; else NULL */
    _Atomic uint32_t *pool_waiters; /* a budgeted worker: its pool's NORMAL waiters */
} me;

static uint32_t cpus(void) {
    unsigned n = weft__cpus_available();
    return n < WEFT_CONCURRENCY_MAX ? n : WEFT_CONCURRENCY_MAX;
}

static uint32_t cap_now(void) {
    /* Relaxed: the cap orders nothing; a changed cap bumps the turns, whose
     * release makes it visible to every waiter (wake). */
    uint32_t cap = atomic_load_explicit(&budget.cap, memory_order_relaxed);
    if (WEFT__LIKELY(cap))
        return cap;
    uint32_t unset = 0, n = cpus(); /* files read once, until the cap is set */
    /* Relaxed: as above; a racing weft_set_concurrency wins. */
    if (atomic_compare_exchange_strong_explicit(&budget.cap, &unset, n, memory_order_relaxed,
                                                memory_order_relaxed))
        return n;
    return unset;
}

static uint32_t waiting(int kind) {
    /* Seq-cst: invariants 3 and 4. */
    return atomic_load_explicit(&budget.waiters[kind], memory_order_seq_cst);
}

/* Does the cap bind? A chosen one always; the default one while two pools or
 * more draw from it (see the top of this file). Relaxed: a change that
 * unbinds wakes every waiter, and the bump's release makes it visible. */
static bool binding(void) {
    return atomic_load_explicit(&budget.chosen, memory_order_relaxed) ||
           atomic_load_explicit(&budget.pools, memory_order_relaxed) > 1;
}

static bool try_take(int kind) {
    uint32_t cap = binding() ? cap_now() : UINT32_MAX;
    /* Seq-cst: the waiter's side of invariant 3 (after its count). */
    uint32_t held = atomic_load_explicit(&budget.running, memory_order_seq_cst);
    while (held < cap) {
        if (kind == NORMAL && waiting(URGENT))
            return false; /* the slot is a continuation's */
        if (atomic_compare_exchange_weak_explicit(&budget.running, &held, held + 1,
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return true;
    }
    return false;
}

static void wake(int kind, bool all) {
    /* Release: a waiter whose acquire read of turn sees the bump sees what
     * came before it (a freed slot, a new cap). */
    atomic_fetch_add_explicit(&budget.turn[kind], 1, memory_order_release);
    if (all)
        weft__os_wake_all(&budget.turn[kind]);
    else
        weft__os_wake_one(&budget.turn[kind]);
}

/* A slot may be free: wake one waiter for it, URGENT first. */
static void wake_next(void) {
    if (waiting(URGENT))
        wake(URGENT, false);
    else if (waiting(NORMAL))
        wake(NORMAL, false);
}

static void give_back(void) {
    me.held = false;
    /* Seq-cst: the releaser's side of invariant 3 (before its reads). */
    uint32_t held = atomic_fetch_sub_explicit(&budget.running, 1, memory_order_seq_cst);
    if (held - 1 < cap_now())
        wake_next();
}

/* Take a slot, waiting for one; give up (without one) once me.stop is set. */
static void take(int kind) {
    if (try_take(kind)) {
        me.held = true;
        return;
    }
    if (kind == NORMAL) /* Relaxed: a hint for weft__budget_wanted (there, why). */
        atomic_fetch_add_explicit(me.pool_waiters, 1, memory_order_relaxed);
    /* Seq-cst: invariant 3, before the try below. */
    atomic_fetch_add_explicit(&budget.waiters[kind], 1, memory_order_seq_cst);
    for (;;) {
        /* Acquire: pairs with wake's release. */
        uint32_t turn = atomic_load_explicit(&budget.turn[kind], memory_order_acquire);
        if (try_take(kind)) {
            me.held = true;
            break;
        }
        if (weft__latch_probe(me.stop))
            break;
        weft__os_wait(&budget.turn[kind], turn);
    }
    /* Seq-cst: invariant 4, before the look below. */
    atomic_fetch_sub_explicit(&budget.waiters[kind], 1, memory_order_seq_cst);
    if (kind == NORMAL) /* Relaxed: a hint, as above. */
        atomic_fetch_sub_explicit(me.pool_waiters, 1, memory_order_relaxed);
    /* Seq-cst: invariant 4. */
    if (atomic_load_explicit(&budget.running, memory_order_seq_cst) < cap_now())
        wake_next();
}

void weft__budget_enter(weft__latch *stop, _Atomic uint32_t *pool_waiters) {
    me.stop = stop;
    me.pool_waiters = pool_waiters;
    take(NORMAL);
}

void weft__budget_exit(void) {
    if (me.held)
        give_back();
    me.stop = NULL;
}

void weft__budget_block(void) {
    if (me.held)
        give_back();
}

void weft__budget_unblock(bool continuation) {
    if (me.stop && !me.held)
        take(continuation ? URGENT : NORMAL);
}

bool weft__budget_wanted(void) {
    if (!me.held)
        return false;
    /* Relaxed: a hint, never needed for progress: a waiter we miss gets our
     * slot when we sleep; one we misjudge costs a search or a sleep. */
    if (atomic_load_explicit(&budget.waiters[URGENT], memory_order_relaxed))
        return true;
    uint32_t ours = atomic_load_explicit(me.pool_waiters, memory_order_relaxed);
    return atomic_load_explicit(&budget.waiters[NORMAL], memory_order_relaxed) > ours;
}

static void wake_all(void) {
    wake(NORMAL, true);
    wake(URGENT, true);
}

void weft__budget_pool_add(void) {
    /* Relaxed: read as a hint of binding(); a pool's workers count as they
     * take slots, whenever the cap starts to bind. */
    atomic_fetch_add_explicit(&budget.pools, 1, memory_order_relaxed);
}

void weft__budget_pool_remove(void) {
    /* Relaxed: published by the bump's release in wake_all. */
    atomic_fetch_sub_explicit(&budget.pools, 1, memory_order_relaxed);
    wake_all(); /* its workers see their latches; a cap that stops binding frees all */
}

void weft__budget_fork_child(void) {
    /* Relaxed: the child has one thread. The cap stays the parent's. */
    atomic_store_explicit(&budget.running, 0, memory_order_relaxed);
    atomic_store_explicit(&budget.waiters[NORMAL], 0, memory_order_relaxed);
    atomic_store_explicit(&budget.waiters[URGENT], 0, memory_order_relaxed);
    atomic_store_explicit(&budget.pools, 0, memory_order_relaxed); /* the parent's are stale */
    me.held = false;
    me.stop = NULL; /* forked inside a job: an outside thread from now on */
}

int weft_set_concurrency(unsigned max_running) {
    if (max_running > WEFT_CONCURRENCY_MAX)
        return EINVAL;
    /* Relaxed: published by the bump's release in wake_all. */
    atomic_store_explicit(&budget.cap, max_running ? max_running : cpus(), memory_order_relaxed);
    atomic_store_explicit(&budget.chosen, max_running != 0, memory_order_relaxed);
    wake_all(); /* a raised cap: every waiter tries again */
    return 0;
}

unsigned weft_concurrency(void) {
    return cap_now();
}

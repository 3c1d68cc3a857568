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
 * Waiters queue, first come first served, in two queues. A worker woken with
 * its latch set (the join, scope, run or event it waits in is done) holds a
 * continuation that no other worker can run, and one woken in a pool with
 * high-priority work queued has that work: both queue as URGENT, served
 * before NORMAL. A freed slot goes to the first waiter directly (its `word`
 * set GRANTED; the slot stays counted in running), so a thread that takes
 * slots without waiting cannot overtake the queue, and only takes one while
 * nobody queues. A holder between two jobs that has kept its slot for a
 * slice while an URGENT waiter, or a waiter of another pool, queues hands
 * the slot to the first such waiter (unless the wait it ran the job in is
 * over: it holds a continuation then) and queues at the end for the next: a
 * pool with a stream of jobs shares the budget with the others, as the
 * kernel would share a CPU (weft__budget_between_jobs). So a NORMAL waiter
 * is passed over only by a hand-over from a holder of its own pool to
 * another pool's waiter, and is served once the waiters ahead of it are
 * (URGENT ones first).
 *
 * Invariants:
 *  1. running counts the slots held or granted. It exceeds cap only while
 *     the cap does not bind, after it was lowered or began to bind (holders
 *     keep their slots until they block), or while a pool is destroyed (a
 *     stopping worker that found no slot finishes without one).
 *  2. A thread holds at most one slot (me.held), and only a worker of a
 *     budgeted pool takes one (me.stop set).
 *  3. No waiter stays queued while a slot is free: the queues change only
 *     under the lock, and every change that may free a slot for a waiter (a
 *     waiter queued, a cap raised, the cap unbound, a waiter cancelled)
 *     grants free slots to the heads before it unlocks (grant_free). A
 *     release outside the lock decrements running, then reads `queued`; a
 *     waiter adds itself to `queued`, then (grant_free) reads running; all
 *     seq-cst: either the release sees the waiter and grants under the lock,
 *     or the waiter's grant sees the freed slot.
 *  4. A granted waiter takes the lock once before it returns, so the granter,
 *     which wakes it under the lock, is done with the waiter's node (on the
 *     waiter's stack) before it can go.
 *
 * Liveness: a slot holder gives the slot back when it blocks in weft or
 * exits, hands it over between jobs as above, and sleeps at once, after a
 * search in vain, while a waiter wants its slot (weft__budget_wanted). A
 * job that blocks outside weft (on I/O, a lock, or a spin on another job)
 * keeps its slot while it waits, and a job that runs for long keeps it
 * until it returns: with every slot held by such jobs, the other workers
 * wait too. weft.h says so, and offers pools exempt from the budget for
 * such work.
 */
#include <errno.h>
#include <pthread.h>

#include <weft.h>

#include "idle/budget.h"

#include "os/cpus.h"
#include "os/error.h"
#include "os/futex.h"
#include "os/clock.h"

enum { NORMAL, URGENT };
enum { WAITING, GRANTED, CANCELLED }; /* a waiter's word */

typedef struct waiter {
    _Atomic uint32_t word;          /* A: futex word, WAITING until granted or cancelled */
    struct waiter *next;            /* L */
    weft__latch *stop;              /* I: its worker's terminate latch */
    _Atomic uint32_t *pool_waiters; /* I: its pool's NORMAL waiters */
} waiter;

static struct {
    /* Written at every take and release, by every budgeted worker. */
    _Alignas(WEFT__CACHELINE) _Atomic uint32_t running; /* A: slots held or granted */
    /* Read after every job (weft__budget_between_jobs), written only when a
     * worker queues: a line of their own, which running's writes do not take
     * from the readers. A release reads both lines. */
    _Alignas(WEFT__CACHELINE) _Atomic uint32_t queued; /* A, written under lock: waiters */
    _Atomic uint32_t urgent;                           /* A, written under lock: of them URGENT */
    _Atomic uint32_t cap;      /* A: slots there are; 0 until a pool or the API sets it */
    _Atomic uint32_t pools;    /* A: budgeted pools with workers */
    _Atomic bool chosen;       /* A: the cap was set (weft_set_concurrency) */
    pthread_mutex_t lock;      /* the queues */
    waiter *head[2], *tail[2]; /* L: FIFO, by kind */
} budget = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The calling thread. Initial-exec, as weft__tls_worker (join.h): a load
 * from the thread pointer on every job's way out (weft__budget_between_jobs). */
static _Thread_local struct {
    bool held;                      /* holds a slot */
    uint64_t since;                 /* when it took it */
    weft__latch *stop;              /* a budgeted worker: its terminate latch; else NULL */
    _Atomic uint32_t *pool_waiters; /* a budgeted worker: its pool's NORMAL waiters */
} me __attribute__((tls_model("initial-exec")));

static uint32_t cpus(void) {
    unsigned n = weft__cpus_available();
    return n < WEFT_CONCURRENCY_MAX ? n : WEFT_CONCURRENCY_MAX;
}

/* Set the default cap to n unless a cap is set; return the cap. The library
 * never reads the files on a worker by itself: reading them (malloc in
 * fopen) at an arbitrary time would let a fork child inherit an allocator
 * lock held (the ASan runtime of gcc 12 does not take it around fork;
 * test_fork.c). Only a job's own call of the API can. */
static uint32_t cap_or(uint32_t n) {
    uint32_t unset = 0;
    /* Relaxed: the cap orders nothing; whoever changes it grants under the
     * lock what the change frees. A racing weft_set_concurrency wins. */
    if (atomic_compare_exchange_strong_explicit(&budget.cap, &unset, n, memory_order_relaxed,
                                                memory_order_relaxed))
        return n;
    return unset;
}

/* The slots there are for now: the cap where it binds (a chosen one always;
 * the default one while two pools or more draw from it), else no limit.
 * Relaxed: whoever changes either grants under the lock what it frees. The
 * cap a worker reads is never the unset 0: its own pool set it (pool_add)
 * before opening the start gate the worker passed, and weft_set_concurrency
 * writes it under the lock, which a queued worker's grant takes. */
static uint32_t limit(void) {
    if (atomic_load_explicit(&budget.chosen, memory_order_relaxed) ||
        atomic_load_explicit(&budget.pools, memory_order_relaxed) > 1)
        return atomic_load_explicit(&budget.cap, memory_order_relaxed);
    return UINT32_MAX;
}

/* A slot, if one is free. Seq-cst: invariant 3. */
static bool take_free(void) {
    uint32_t cap = limit();
    uint32_t held = atomic_load_explicit(&budget.running, memory_order_seq_cst);
    while (held < cap)
        if (atomic_compare_exchange_weak_explicit(&budget.running, &held, held + 1,
                                                  memory_order_seq_cst, memory_order_seq_cst))
            return true;
    return false;
}

static void got(void) {
    me.held = true;
    me.since = weft__now_ns();
}

/* ---- The queues (under the lock) ------------------------------------------ */

/* At the tail of its queue. */
static void enqueue(waiter *w, int kind) {
    w->next = NULL;
    if (budget.tail[kind])
        budget.tail[kind]->next = w;
    else
        budget.head[kind] = w;
    budget.tail[kind] = w;
    if (kind == URGENT) /* Relaxed: written under the lock; read as a hint */
        atomic_fetch_add_explicit(&budget.urgent, 1, memory_order_relaxed);
    else /* Relaxed: a hint for weft__budget_wanted */
        atomic_fetch_add_explicit(w->pool_waiters, 1, memory_order_relaxed);
    /* Seq-cst: invariant 3, before grant_free reads running. */
    atomic_fetch_add_explicit(&budget.queued, 1, memory_order_seq_cst);
}

/* Unlink w, whose predecessor in its queue is prev (NULL: the head); wake
 * it with `how`. */
static void dequeue(waiter *w, waiter *prev, int kind, uint32_t how) {
    *(prev ? &prev->next : &budget.head[kind]) = w->next;
    if (budget.tail[kind] == w)
        budget.tail[kind] = prev;
    if (kind == URGENT) /* Relaxed: as in enqueue */
        atomic_fetch_sub_explicit(&budget.urgent, 1, memory_order_relaxed);
    else /* Relaxed: as in enqueue */
        atomic_fetch_sub_explicit(w->pool_waiters, 1, memory_order_relaxed);
    /* Relaxed: ordered by the lock for every reader that matters (a
     * release that misses the decrement takes the lock for nothing). */
    atomic_fetch_sub_explicit(&budget.queued, 1, memory_order_relaxed);
    /* Release: the waiter's acquire load of its word. */
    atomic_store_explicit(&w->word, how, memory_order_release);
    weft__os_wake_one(&w->word); /* under the lock: invariant 4 */
}

/* Give free slots to the first waiters, URGENT first. */
static void grant_free(void) {
    /* Relaxed: written under the lock, which we hold. */
    while (atomic_load_explicit(&budget.queued, memory_order_relaxed) && take_free()) {
        int kind = budget.head[URGENT] ? URGENT : NORMAL;
        dequeue(budget.head[kind], NULL, kind, GRANTED);
    }
}

/* Called under the lock with w queued: unlock, and wait until w is granted
 * a slot or cancelled. */
static void wait_in(waiter *w) {
    pthread_mutex_unlock(&budget.lock);
    uint32_t word;
    /* Acquire: pairs with dequeue's release. */
    while ((word = atomic_load_explicit(&w->word, memory_order_acquire)) == WAITING)
        weft__os_wait(&w->word, WAITING);
    /* Invariant 4: whoever set our word wakes us under the lock. */
    pthread_mutex_lock(&budget.lock);
    pthread_mutex_unlock(&budget.lock);
    if (word == GRANTED)
        got();
}

static waiter waiter_of_mine(void) {
    waiter w = {.stop = me.stop, .pool_waiters = me.pool_waiters};
    atomic_init(&w.word, WAITING);
    return w;
}

/* A free slot, if nobody queues for it. */
static bool take_unqueued(void) {
    /* Relaxed: a hint; nobody queues, so a free slot overtakes no one. */
    if (atomic_load_explicit(&budget.queued, memory_order_relaxed) || !take_free())
        return false;
    got();
    return true;
}

/* Take a slot, waiting for one in the queue of `kind`; none once me.stop is
 * set (a stopping worker does not wait for other pools). */
static void take_queued(int kind) {
    waiter w = waiter_of_mine();
    pthread_mutex_lock(&budget.lock);
    if (weft__latch_probe(me.stop)) {
        pthread_mutex_unlock(&budget.lock);
        return;
    }
    if (!budget.head[kind] && (kind == URGENT || !budget.head[URGENT]) && take_free()) {
        pthread_mutex_unlock(&budget.lock);
        got();
        return;
    }
    enqueue(&w, kind);
    grant_free(); /* invariant 3: a release that missed us */
    wait_in(&w);
}

static void give_back(void) {
    me.held = false;
    /* Seq-cst: invariant 3, the release's side. */
    atomic_fetch_sub_explicit(&budget.running, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&budget.queued, memory_order_seq_cst)) {
        pthread_mutex_lock(&budget.lock);
        grant_free();
        pthread_mutex_unlock(&budget.lock);
    }
}

void weft__budget_enter(weft__latch *stop, _Atomic uint32_t *pool_waiters) {
    me.stop = stop;
    me.pool_waiters = pool_waiters;
    if (!take_unqueued())
        take_queued(NORMAL);
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

void weft__budget_unblock(bool (*urgent)(const void *arg), const void *arg) {
    if (me.stop && !me.held && !take_unqueued())
        take_queued(urgent(arg) ? URGENT : NORMAL); /* asked only here: it may scan */
}

bool weft__budget_wanted(void) {
    if (!me.held)
        return false;
    /* Relaxed: hints, never needed for progress: a waiter we miss gets our
     * slot when we sleep or between jobs; one we misjudge costs a search or
     * a sleep. */
    uint32_t queued = atomic_load_explicit(&budget.queued, memory_order_relaxed);
    if (!queued)
        return false;
    if (atomic_load_explicit(&budget.urgent, memory_order_relaxed))
        return true;
    return queued > atomic_load_explicit(me.pool_waiters, memory_order_relaxed);
}

/* A slot again, in the middle of a job, as a finished wait takes one. */
static void take_back(void) {
    if (!take_unqueued())
        take_queued(URGENT);
}

void weft__budget_resume(void) {
    if (me.stop && !me.held)
        take_back();
}

void weft__budget_block_on(weft__latch *l) {
    weft__budget_block();
    weft__latch_wait_outside(l);
    weft__budget_resume();
}

void weft__budget_lock(pthread_mutex_t *m) {
    if (pthread_mutex_trylock(m) == 0)
        return;
    bool held = me.held;
    if (held)
        give_back();
    pthread_mutex_lock(m);
    if (held)
        take_back();
}

/* Our slot leaves us: to `to` directly, or, over a cap that was lowered or
 * began to bind, back to the count. */
static void hand_over(waiter *to, waiter *prev, int kind) {
    me.held = false;
    /* Seq-cst: as give_back's (invariant 3); the lock is held. */
    if (atomic_load_explicit(&budget.running, memory_order_seq_cst) > limit())
        atomic_fetch_sub_explicit(&budget.running, 1, memory_order_seq_cst);
    else
        dequeue(to, prev, kind, GRANTED); /* running stays: the slot is its */
}

void weft__budget_between_jobs(weft__latch *latch) {
    if (!weft__budget_wanted() || weft__now_ns() - me.since < WEFT__BUDGET_SLICE_NS)
        return;
    /* The wait is over: the continuation is what a waiter queues URGENT for,
     * first in line, so a hand-over would only make it wait, and since the
     * holder queues NORMAL, behind every waiter. A latch set after this look
     * is the case of any worker whose latch is set while it queues. */
    if (weft__latch_probe(latch))
        return;
    pthread_mutex_lock(&budget.lock);
    if (weft__latch_probe(me.stop)) { /* stopping: it must not wait for others */
        pthread_mutex_unlock(&budget.lock);
        return;
    }
    /* The first URGENT waiter, else the first of another pool: not the
     * queue's head, which may be one of ours and would pass the slot back. */
    int kind = budget.head[URGENT] ? URGENT : NORMAL;
    waiter *prev = NULL, *to = budget.head[kind];
    for (; kind == NORMAL && to && to->pool_waiters == me.pool_waiters; to = to->next)
        prev = to;
    if (!to) { /* gone meanwhile */
        pthread_mutex_unlock(&budget.lock);
        return;
    }
    /* We wait at the end of the line, as every waiter does: at its head,
     * two pools' holders would pass the slot to each other for as long as
     * their jobs last, and every waiter behind them would starve. */
    hand_over(to, prev, kind);
    waiter w = waiter_of_mine();
    enqueue(&w, NORMAL);
    grant_free(); /* invariant 3: a release that missed us */
    wait_in(&w);
}

void weft__budget_pool_add(unsigned cpus_available) {
    cap_or(cpus_available < WEFT_CONCURRENCY_MAX ? cpus_available : WEFT_CONCURRENCY_MAX);
    /* Relaxed: a cap that starts to bind frees nothing; read by limit(). */
    atomic_fetch_add_explicit(&budget.pools, 1, memory_order_relaxed);
}

void weft__budget_pool_remove(void) {
    /* Relaxed: the grant below, under the lock, acts on it. */
    atomic_fetch_sub_explicit(&budget.pools, 1, memory_order_relaxed);
    pthread_mutex_lock(&budget.lock);
    for (int kind = NORMAL; kind <= URGENT; kind++) { /* its stopping workers */
        waiter *prev = NULL;
        for (waiter *w = budget.head[kind], *next; w; w = next) {
            next = w->next;
            if (weft__latch_probe(w->stop))
                dequeue(w, prev, kind, CANCELLED);
            else
                prev = w;
        }
    }
    grant_free(); /* a cap that stopped binding */
    pthread_mutex_unlock(&budget.lock);
}

void weft__budget_fork_prepare(void) {
    pthread_mutex_lock(&budget.lock);
}

void weft__budget_fork_parent(void) {
    pthread_mutex_unlock(&budget.lock);
}

void weft__budget_fork_child(void) {
    /* Relaxed: the child has one thread. The cap stays the parent's; its
     * holders, waiters and pools are gone. */
    atomic_store_explicit(&budget.running, 0, memory_order_relaxed);
    atomic_store_explicit(&budget.queued, 0, memory_order_relaxed);
    atomic_store_explicit(&budget.urgent, 0, memory_order_relaxed);
    atomic_store_explicit(&budget.pools, 0, memory_order_relaxed);
    budget.head[NORMAL] = budget.head[URGENT] = budget.tail[NORMAL] = budget.tail[URGENT] = NULL;
    me.held = false;
    me.stop = NULL; /* forked inside a job: an outside thread from now on */
    pthread_mutex_unlock(&budget.lock);
}

int weft_set_concurrency(unsigned max_running) {
    if (max_running > WEFT_CONCURRENCY_MAX)
        return weft__error_set(EINVAL, "max_running %u is above WEFT_CONCURRENCY_MAX %u",
                               max_running, WEFT_CONCURRENCY_MAX);
    uint32_t cap = max_running ? max_running : cpus(); /* files read outside the lock */
    pthread_mutex_lock(&budget.lock);
    /* Relaxed: the grant below acts on them, under the lock; other readers
     * take them as hints (limit). */
    atomic_store_explicit(&budget.cap, cap, memory_order_relaxed);
    atomic_store_explicit(&budget.chosen, max_running != 0, memory_order_relaxed);
    grant_free(); /* a raised cap */
    pthread_mutex_unlock(&budget.lock);
    return 0;
}

unsigned weft__budget_waiting(bool urgent) {
    /* Relaxed: a snapshot for tests. */
    uint32_t u = atomic_load_explicit(&budget.urgent, memory_order_relaxed);
    return urgent ? u : atomic_load_explicit(&budget.queued, memory_order_relaxed) - u;
}

unsigned weft__budget_held(void) {
    /* Relaxed: a snapshot for tests. */
    return atomic_load_explicit(&budget.running, memory_order_relaxed);
}

unsigned weft_concurrency(void) {
    /* Relaxed: a value alone. */
    uint32_t cap = atomic_load_explicit(&budget.cap, memory_order_relaxed);
    return cap ? cap : cap_or(cpus()); /* the files, read on the caller's thread */
}

/* SPDX-License-Identifier: MIT */
/* The process's CPU budget: slots shared by the workers of every pool
 * (weft_set_concurrency). See budget.c. */
#ifndef WEFT_BUDGET_H
#define WEFT_BUDGET_H

#include <pthread.h>
#include <stdbool.h>

#include "idle/latch.h"

/* A worker of a budgeted pool starts: take a slot, waiting for one if need
 * be. stop is its terminate latch: once set, a wait for a slot ends without
 * one (the pool is being destroyed, and must not wait for other pools).
 * pool_waiters counts the pool's workers waiting for a slot. */
WEFT__HIDDEN void weft__budget_enter(weft__latch *stop, _Atomic uint32_t *pool_waiters);

/* The worker exits: give its slot back. */
WEFT__HIDDEN void weft__budget_exit(void);

/* The calling thread is about to block in weft (it sleeps, or a wait of it
 * sleeps): give its slot back, if it holds one. */
WEFT__HIDDEN void weft__budget_block(void);

/* Back from a block: a budgeted worker takes a slot again, waiting for one
 * if need be; before the other waiters if urgent(arg) (the latch its job
 * waits for is set, so only this thread can go on with that job, or its pool
 * has high-priority work queued; idle.h), asked only when it must wait, as
 * the answer may take a look at every deque. No-op on any other thread. */
WEFT__HIDDEN void weft__budget_unblock(bool (*urgent)(const void *arg), const void *arg);
/* Back from a block in the middle of a job (weft__budget_block before it):
 * a budgeted worker takes a slot again, queued as urgent (only this thread
 * can go on with its job). No-op on any other thread. */
WEFT__HIDDEN void weft__budget_resume(void);

/* Wait for l, a latch made as an outside thread's, on any thread, running no
 * job meanwhile and holding no slot: for a wait made with an internal lock
 * held (a new pool's start, under default_lock when it is the default
 * pool), which a job of the waiter's own could want. */
WEFT__HIDDEN void weft__budget_block_on(weft__latch *l);

/* How long a holder keeps its slot from waiters of other pools while it has
 * jobs to run: a bound on starvation, not a time slice. A hand-over
 * interrupts fork-join work (the holder's private jobs wait until it runs
 * again), so it must be rare against the work it interrupts: slices of the
 * kernel's order cost busy pools a share of their time that this one does
 * not (docs/performance.md measures both). Tests read it too. */
#define WEFT__BUDGET_SLICE_NS ((uint64_t)50000000)

/* A worker between two jobs of its wait for latch (at the top level, its
 * terminate latch): if it has held its slot for a slice while an urgent
 * waiter or one of another pool waits, it hands the slot over and waits its
 * turn; not once latch is set, when what it goes back to is a continuation
 * that no other thread can run. */
WEFT__HIDDEN void weft__budget_between_jobs(weft__latch *latch);

/* Does the calling thread hold a slot that a continuation, or a worker of
 * another pool, waits for? Then its search is worth less than the slot: it
 * should sleep (sleep.c). Any other waiter of its own pool would only search
 * in its place. */
WEFT__HIDDEN bool weft__budget_wanted(void);

/* A budgeted pool starts its workers / stops them (after setting their
 * terminate latches: its workers waiting for a slot see them). */
WEFT__HIDDEN void weft__budget_pool_add(unsigned cpus_available);
WEFT__HIDDEN void weft__budget_pool_remove(void);

/* Lock m, an internal lock that its holder may keep across a wait in weft
 * (default_lock while the default pool starts; fork() takes it too): a
 * worker that must block for it gives its slot back meanwhile. Else the
 * holder, whose wait gave its slot away, and this worker, holding the slot
 * and blocked on m, would wait for each other. */
WEFT__HIDDEN void weft__budget_lock(pthread_mutex_t *m);

/* Waiters queued, URGENT ones or NORMAL ones; slots held or granted (tests). */
WEFT__HIDDEN unsigned weft__budget_waiting(bool urgent);
WEFT__HIDDEN unsigned weft__budget_held(void);

/* fork(): prepare takes the queues' lock, parent releases it; in the child
 * the parent's workers, their slots and their places in the queues are
 * gone, and the lock is released. */
WEFT__HIDDEN void weft__budget_fork_prepare(void);
WEFT__HIDDEN void weft__budget_fork_parent(void);
WEFT__HIDDEN void weft__budget_fork_child(void);

#endif

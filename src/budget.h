/* SPDX-License-Identifier: MIT */
/* The process's CPU budget: slots shared by the workers of every pool
 * (weft_set_concurrency). See budget.c. */
#ifndef WEFT_BUDGET_H
#define WEFT_BUDGET_H

#include <stdbool.h>

#include "latch.h"

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
 * if need be; first among the waiters if continuation (the latch its job
 * waits for is set: only this thread can go on with that job). No-op on any
 * other thread. */
WEFT__HIDDEN void weft__budget_unblock(bool continuation);

/* Does the calling thread hold a slot that a continuation, or a worker of
 * another pool, waits for? Then its search is worth less than the slot: it
 * should sleep (sleep.c). Any other waiter of its own pool would only search
 * in its place. */
WEFT__HIDDEN bool weft__budget_wanted(void);

/* A budgeted pool starts its workers / stops them (after setting their
 * terminate latches: its workers waiting for a slot see them). */
WEFT__HIDDEN void weft__budget_pool_add(void);
WEFT__HIDDEN void weft__budget_pool_remove(void);

/* fork() child: the parent's workers, and the slots they held, are gone. */
WEFT__HIDDEN void weft__budget_fork_child(void);

#endif

/* SPDX-License-Identifier: MIT */
/* The random-yield build (liburcu's debug-yield): a hook placed at every
 * atomic step of the protocols (deque, sleep, latches, pending work, the
 * injector, events) that, in a build configured with -DWEFT_DEBUG_YIELD=ON,
 * sometimes yields the CPU or spins a little. It widens the windows between
 * the steps of a protocol, so that interleavings a stress test would hit once
 * in a million runs (a thread preempted between its exchange and its wake-up)
 * happen in every run.
 *
 * Reproducible: each thread draws from its own PRNG, seeded from
 * $WEFT_DEBUG_YIELD_SEED (read once; 1 when unset) plus the order in which
 * threads first reach a hook. The schedule still depends on the OS, so a seed
 * names a distribution of interleavings, not one.
 *
 * In every other build the hook is ((void)0): no code, no cost.
 */
#ifndef WEFT_DEBUG_YIELD_H
#define WEFT_DEBUG_YIELD_H

#include "atomics.h"

#ifdef WEFT_DEBUG_YIELD
/* Any thread: maybe sched_yield, maybe spin a few hundred pauses, maybe
 * nothing. Touches no shared state but the seed and a thread counter. */
WEFT__HIDDEN void weft__debug_yield_slow(void);
#define weft__debug_yield() weft__debug_yield_slow()
#else
#define weft__debug_yield() ((void)0)
#endif

#endif

/* SPDX-License-Identifier: MIT */
/* Contexts (context.c): a thread that holds a slot of the pool runs its own
 * jobs while it waits and sleeps on its latch; and what the pool asks of
 * contexts and caller slots. */
#ifndef WEFT_CONTEXT_H
#define WEFT_CONTEXT_H

#include "idle/latch.h"
#include "os/atomics.h"

typedef struct weft__worker weft__worker;

/* weft__worker_wait_until for a context: its own jobs only, then sleep on
 * the latch. */
WEFT__HIDDEN void weft__context_wait_until(weft__worker *ctx, weft__latch *latch);

/* w shared jobs: wake the context asleep on the job w runs, if one is, to
 * take them back (context.c). */
WEFT__HIDDEN void weft__context_nudge(weft__worker *w);

/* Run what is still queued on a context or caller slot that its holder gives
 * back (jobs nobody waited for). */
WEFT__HIDDEN void weft__context_run_leftovers(weft__worker *ctx);

#endif

/* SPDX-License-Identifier: MIT */
/* Caller slots: an outside thread takes part in its own work for the length
 * of a call. See callers.c. */
#ifndef WEFT_CALLERS_H
#define WEFT_CALLERS_H

#include "weft.h"

#include "os/atomics.h"

typedef struct weft__worker weft__worker;

/* An outside thread (no worker, no context) that calls into pool: take a
 * free caller slot and make it this thread's worker; NULL if none is free. */
WEFT__HIDDEN weft__worker *weft__caller_take(weft_pool *pool);

/* Give the slot back (the thread is an outside thread again). */
WEFT__HIDDEN void weft__caller_give_back(weft__worker *slot);

#endif

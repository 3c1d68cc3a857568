/* SPDX-License-Identifier: MIT */
/* weft_broadcast: run a function once on every worker. See broadcast.c. */
#ifndef WEFT_BROADCAST_H
#define WEFT_BROADCAST_H

#include "os/atomics.h"

typedef struct weft_pool weft_pool;

/* weft_broadcast without its checks: pool is resolved, fn is set, and the
 * workers may already be past their drain (weft_pool_destroy's trace stop). */
WEFT__HIDDEN void weft__broadcast_run(weft_pool *pool, void (*fn)(unsigned index, void *arg),
                                      void *arg);

#endif

/* SPDX-License-Identifier: MIT */
/* Timeline tracing's start and stop (weft_trace_start, weft_trace_stop):
 * trace.c. */
#ifndef WEFT_TRACE_H
#define WEFT_TRACE_H

#include "weft.h"

#include "atomics.h"

/* weft_trace_stop for weft_pool_destroy, once the pool has drained: every
 * public stop has returned (each is pending work), and no other can begin. */
WEFT__HIDDEN void weft__trace_stop_drained(weft_pool *pool);

#endif

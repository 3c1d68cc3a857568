/* SPDX-License-Identifier: MIT */
/* Asymmetric fences: a Dekker pair whose one side runs millions of times a
 * second (a worker's pop) and whose other side runs rarely (a thief taking a
 * private job, deque.c).
 *
 * The pattern is store-buffering: thread F (fast) stores x then loads y;
 * thread S (slow) stores or reads y then loads x; one of them must see the
 * other's access. Symmetric fences (a seq-cst fence on both sides) cost F a
 * full barrier each time. Here F issues only a compiler barrier
 * (weft__fence_light), and S a process-wide barrier (weft__fence_heavy: Linux
 * membarrier, as liburcu's memb flavour uses it) that makes every running
 * thread execute a full barrier during the call. That barrier lands in F's
 * program either before F's store, and then F's load comes after it and sees
 * what S did before the call, or after F's store, and then S, loading after
 * the call, sees the store. Either way one side sees the other, as with two
 * seq-cst fences.
 *
 * The POSIX seam has no such barrier: there both are seq-cst fences
 * (WEFT_FENCE_SYMMETRIC, set by the build), correct, and F pays. On Linux the
 * light side is a compiler barrier at compile time, so F pays nothing, not
 * even a test of which fences are in use; if the kernel refuses membarrier
 * (before 4.14, or a sandbox), weft__fence_heavy_available is false and no
 * thief may rely on the pair: private jobs are then never taken by force. */
#ifndef WEFT_FENCE_H
#define WEFT_FENCE_H

#include <stdbool.h>

#include "os/atomics.h"

/* Choose the heavy fence; idempotent and thread-safe (pool creation calls it). */
WEFT__HIDDEN void weft__fence_init(void);

/* May the slow side run (weft__fence_init has run)? */
WEFT__HIDDEN bool weft__fence_heavy_available(void);

/* The fast side. */
static inline void weft__fence_light(void) {
#ifdef WEFT_FENCE_SYMMETRIC
    weft__fence_seq_cst();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* The slow side: a process-wide barrier (it includes a full barrier of the
 * caller), or a seq-cst fence on the POSIX seam. Only where
 * weft__fence_heavy_available. */
WEFT__HIDDEN void weft__fence_heavy(void);

#endif

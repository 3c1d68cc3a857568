/* SPDX-License-Identifier: MIT */
/* weft_join: fork-join without allocation.
 *
 * Job B lives in this frame, linked from the worker (frame.c). A runs
 * inline, then B runs inline if it is still private. If it was published or
 * taken, the worker takes it back from its deque or runs other jobs until
 * whoever ran B sets its latch, which wakes this worker only if it fell
 * asleep waiting for exactly this latch. The frame outlives B because we do
 * not return before the latch is set.
 */
#include <assert.h>

#include "frame.h"
#include "pool.h"

typedef struct join_args {
    weft_fn *a, *b;
    void *a_arg, *b_arg;
} join_args;

static void join_inside(void *arg) {
    join_args *j = arg;
    if (weft__current_worker()) {
        weft_join(j->a, j->a_arg, j->b, j->b_arg);
    } else { /* no default pool could be created: run serially */
        j->a(j->a_arg);
        j->b(j->b_arg);
    }
}

void weft_join(weft_fn *a, void *a_arg, weft_fn *b, void *b_arg) {
    /* The fork-join hot path: the misuse check must stay this cheap. It
     * tests two arguments already in registers, no memory access; gcc and
     * clang emit two test-and-branch pairs (each fused into one
     * instruction), never taken, so always predicted. Folding them into one
     * branch takes more instructions (sete, adc, test), not fewer. */
    if (WEFT__UNLIKELY(!a || !b)) {
        assert(!"weft_join: a or b is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    weft__worker *w = weft__current_worker();
    if (WEFT__UNLIKELY(!w)) {
        join_args j = {.a = a, .a_arg = a_arg, .b = b, .b_arg = b_arg};
        weft_run(NULL, join_inside, &j);
        return;
    }
    /* B in this frame (frame.c): its fields, then the link, then claim. */
    weft__frame fr;
    fr.b.fn = b;
    fr.b.arg = b_arg;
    fr.b.job.group = w->group;
    atomic_init(&fr.b.done.state, WEFT__LATCH_UNSET);
    weft__frame *prev = atomic_load_explicit(&w->frames, memory_order_relaxed); /* ours */
    fr.prev = (uintptr_t)prev | (uintptr_t)w->prio;
    /* Release: a thief that reads frames (acquire) sees fr's fields. */
    atomic_store_explicit(&w->frames, &fr, memory_order_release);
    weft__debug_yield();
    /* Relaxed: fr's first private frame takes the fenced cold path. */
    uintptr_t c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if (WEFT__UNLIKELY(weft__claim_frame(c) == prev || (c & WEFT__CLAIM_BITS)))
        weft__frame_fork_cold(w, &fr);
    a(a_arg);
    /* Release: a thief reading frames sees the fields of what it links. */
    atomic_store_explicit(&w->frames, prev, memory_order_release);
    weft__fence_light(); /* our store of frames, then claim: against a thief's heavy fence */
    weft__debug_yield();
    /* Relaxed: ordered by the fence pair (frame.c). */
    c = atomic_load_explicit(&w->claim, memory_order_relaxed);
    if (WEFT__LIKELY(!(c & WEFT__CLAIM_BITS) && weft__claim_frame(c) != &fr)) {
        weft__stat_add(&w->stats.jobs, 1);
        b(b_arg); /* still private: nobody else can have it */
        return;
    }
    weft__frame_pop_cold(w, &fr);
}

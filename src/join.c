/* SPDX-License-Identifier: MIT */
/* weft_join: fork-join without allocation.
 *
 * Job B lives in this frame. It is pushed on the worker's deque, A runs
 * inline, then B is popped back and run inline if nobody stole it. If it was
 * stolen, the worker runs other jobs until the thief sets B's latch, which
 * wakes this worker only if it fell asleep waiting for exactly this latch.
 * The frame outlives B because we do not return before the latch is set.
 */
#include <assert.h>

#include "pool.h"

/* After A: take B back, or wait for whoever stole it. */
static void join_finish(weft__worker *w, weft__stack_job *b) {
    weft__job *job;
    while ((job = weft__worker_pop(w)) != NULL) {
        weft__stat_add(&w->stats.jobs, 1);
        if (job == &b->job) {
            b->fn(b->arg);
            return;
        }
        weft__job_execute(job); /* left behind by A (weft_spawn) */
    }
    weft__worker_wait_until(w, &b->done);
}

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
    weft__stack_job jb;
    weft__stack_job_init(&jb, b, b_arg, w->group);
    weft__latch_init_owned(&jb.done, w->pool, w->index);
    if (WEFT__UNLIKELY(weft__worker_push(w, &jb.job) != 0)) {
        a(a_arg); /* the deque could not grow: run both here */
        b(b_arg);
        return;
    }
    a(a_arg);
    join_finish(w, &jb);
}

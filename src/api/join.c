/* SPDX-License-Identifier: MIT */
/* weft_join: fork-join without allocation, the out-of-line call.
 *
 * The fork and the pop after A are include/weft/join.h's weft__join, inline
 * in C callers and run from here for everyone else: B lives in the caller's
 * frame, linked from the worker (frame.c). A runs inline, then B runs inline
 * if it is still private. If it was published or taken, the worker takes it
 * back from its deque or runs other jobs until whoever ran B sets its latch,
 * which wakes this worker only if it fell asleep waiting for exactly this
 * latch. The frame outlives B because we do not return before the latch is
 * set.
 */
#include <assert.h>

/* The random-yield build widens the windows of the fork run here: the
 * out-of-line weft_join, which that build's programs call (CMakeLists.txt
 * defines WEFT_NO_INLINE_JOIN there). */
#include "os/atomics.h"
#define WEFT__JOIN_YIELD() weft__debug_yield()

#include "core/frame.h"
#include "core/current.h"

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

/* The out-of-line weft_join: for C++, FFI, programs built with
 * WEFT_NO_INLINE_JOIN and old binaries; and the misuse and outside-caller
 * answers of the inline one. */
void(weft_join)(weft_fn *a, void *a_arg, weft_fn *b, void *b_arg) {
    if (WEFT__UNLIKELY(!a || !b)) {
        assert(!"weft_join: a or b is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    if (WEFT__UNLIKELY(!weft__current_worker())) {
        join_args j = {.a = a, .a_arg = a_arg, .b = b, .b_arg = b_arg};
        weft_run(NULL, join_inside, &j);
        return;
    }
    weft__join(a, a_arg, b, b_arg); /* include/weft/join.h */
}

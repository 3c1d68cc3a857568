/* SPDX-License-Identifier: MIT */
/* Join frames: weft_join's B waits in the joining function's own frame,
 * linked from the worker's newest frame, not in a deque slot. See frame.c
 * for the protocol; verify/frames.pml checks it. */
#ifndef WEFT_FRAME_H
#define WEFT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "os/atomics.h"
#include "core/deque.h"
#include "core/job.h"

/* A join frame, as the library sees it: the fork part (include/weft/join.h:
 * B's function and argument and the link to the older frame, which
 * weft_join's fast path writes; B's group, and its priority and the stamp
 * mark in the link's low bits, which frame.c writes); then a job header and
 * a latch, written only when the frame stops being private (frame.c). The fast path declares it as
 * struct weft__join_frame, the same layout; both reach the fork part through struct weft__fork. */
typedef struct weft__frame {
    struct weft__fork fork;
    weft__job job;
    weft__latch done;
} weft__frame;

_Static_assert(sizeof(weft__frame) == sizeof(struct weft__join_frame) &&
                   offsetof(weft__frame, job) == offsetof(struct weft__join_frame, library) &&
                   _Alignof(weft__frame) == _Alignof(struct weft__join_frame),
               "join.h's frame and the library's have one layout");

/* The frame a fast path handed over: the same object. */
static inline weft__frame *weft__frame_of(struct weft__join_frame *f) {
    return (weft__frame *)f;
}

/* The claim word (join.h): the newest frame that is not private (NULL:
 * every frame is), a thief's request and a lock in the two low bits, free
 * because frames are pointer-aligned. */
static inline weft__frame *weft__claim_frame(uintptr_t claim) {
    return (weft__frame *)(claim & ~(uintptr_t)WEFT__CLAIM_BITS);
}

static inline weft__frame *weft__frame_prev(const weft__frame *f) {
    return (weft__frame *)(f->fork.prev & ~(uintptr_t)WEFT__FORK_BITS);
}

/* Out of line, in frame.c; the owner's paths take its worker. */
typedef struct weft__worker weft__worker;

/* The owner is about to change the group or priority that its forks
 * inherit: stamp its private frames that take theirs from the head (frame.c,
 * "Stamps"). weft__worker_retag_begin (worker.h) calls it when it sees
 * private frames. */
WEFT__HIDDEN WEFT__COLD void weft__frame_stamp_private(weft__worker *w);

/* The owner's slow paths are join.h's weft__join_fork_cold (the fork of fr
 * began an episode or saw a bit raised) and weft__join_pop_cold (after A: fr
 * is not private, or a bit was raised; runs B, or waits for whoever runs
 * it). */

/* The frame whose B job is (NULL: job is not a join frame's). */
WEFT__HIDDEN weft__frame *weft__frame_of_job(weft__job *job);

/* The owner, in a participating wait that found nothing of its own to run:
 * publish every private frame, oldest first, for the wait to pop the
 * newest. True if one was published. */
WEFT__HIDDEN bool weft__frame_publish_own(weft__worker *w);

/* A thief found nothing public on v: ask v to publish its private frames. */
WEFT__HIDDEN void weft__frame_request(weft__worker *v);
/* Any thread, a hint: does v seem to hold private frames? */
WEFT__HIDDEN bool weft__frame_private_in_view(weft__worker *v);
/* A starving thief: take v's oldest private frame's B (on WEFT__STEAL_OK,
 * *more tells whether private frames remain, *prio the priority it was
 * forked at). Costs a process-wide barrier; WEFT__STEAL_EMPTY without one
 * (fence.h). */
WEFT__HIDDEN WEFT__COLD weft__steal_result weft__frame_steal(weft__worker *v, weft__job **job,
                                                             bool *more, weft_priority *prio);

#endif

/* SPDX-License-Identifier: MIT */
/* Join frames: weft_join's B waits in the joining function's own frame,
 * linked from the worker's newest frame, not in a deque slot. See frame.c
 * for the protocol; verify/frames.pml checks it. */
#ifndef WEFT_FRAME_H
#define WEFT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "weft.h"

#include "atomics.h"
#include "deque.h"
#include "job.h"

/* B, and the link to the frame forked before it on the same thread. Only
 * fn, arg, group, the latch's state and prev are written at the fork; the
 * job's execute and the latch's owner when the frame stops being private
 * (frame.c). */
typedef struct weft__frame {
    weft__stack_job b;
    uintptr_t prev; /* the older frame, with its priority in the low bit */
} weft__frame;

/* A worker's claim word: the newest frame that is not private (NULL: every
 * frame is private), and two bits. Frames are pointer-aligned, so the bits
 * are free. */
enum {
    WEFT__CLAIM_REQUEST = 1, /* a thief found nothing public: publish */
    WEFT__CLAIM_LOCK = 2,    /* the owner or a starving thief is changing it */
    WEFT__CLAIM_BITS = 3,
};

static inline weft__frame *weft__claim_frame(uintptr_t claim) {
    return (weft__frame *)(claim & ~(uintptr_t)WEFT__CLAIM_BITS);
}

static inline weft__frame *weft__frame_prev(const weft__frame *f) {
    return (weft__frame *)(f->prev & ~(uintptr_t)1);
}

static inline weft_priority weft__frame_prio(const weft__frame *f) {
    return (weft_priority)(f->prev & 1);
}

/* Out of line, in frame.c; the owner's paths take its worker. */
typedef struct weft__worker weft__worker;

/* Owner: the fork of fr began an episode or saw a bit raised. */
WEFT__HIDDEN WEFT__COLD void weft__frame_fork_cold(weft__worker *w, weft__frame *fr);
/* Owner, after A: fr is not private, or a bit was raised. Runs B, or waits
 * for whoever runs it. */
WEFT__HIDDEN WEFT__COLD void weft__frame_pop_cold(weft__worker *w, weft__frame *fr);

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

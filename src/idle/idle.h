/* SPDX-License-Identifier: MIT */
/* An idle worker: the state of one search loop (from the moment a worker has
 * no job until it finds one or its latch is set), what the two sleep
 * protocols (sleep.c, wake_all.c) need from the pool above them, and the
 * statistics of searching and sleeping both keep alike (idle.c). */
#ifndef WEFT_IDLE_H
#define WEFT_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "os/atomics.h"
#include "idle/budget.h"
#include "idle/latch.h"
#include "idle/leave.h"
#include "obs/stats.h"

/* What the sleep protocols need from the pool, passed in at creation: they
 * sit below the pool and reach it through nothing else. */
typedef struct weft__idle_env {
    /* After a sleeper's SleepFence (or a leaving searcher's fence): is there
     * work nobody may have been told about, an injected job or a broadcast
     * worker `index` has not run? */
    bool (*final_check)(void *ctx, unsigned index);
    /* After a sleeper's final check: does another worker hold private jobs
     * (deque.c, "the episode")? Then it searches again instead of sleeping,
     * and may take one by force. */
    bool (*private_check)(void *ctx, unsigned index);
    /* After a searcher's fence: does another worker's deque show jobs,
     * public or private? */
    bool (*queued_check)(void *ctx, unsigned index);
    /* Is high-priority work queued where a woken worker would find it? */
    bool (*high_queued)(void *ctx);
    /* A waker woke a worker while tracing is on: record the wake-up and
     * return its flow id (trace_buf.c). */
    uint32_t (*trace_wake)(void *ctx);
    const _Atomic bool *tracing; /* the pool's trace flag */
    const weft__phase *phase;    /* the pool's parallel phases (leave.h) */
    void *ctx;                   /* the pool */
} weft__idle_env;

/* A sleeper's look after its SleepFence: is there work it must not sleep on? */
static inline bool weft__idle_must_stay(const weft__idle_env *env, unsigned index) {
    return env->final_check(env->ctx, index) || env->private_check(env->ctx, index);
}

/* A woken worker takes a slot of the CPU budget again (budget.c); if it must
 * wait, it waits first when its latch is set (its job's continuation can run
 * on no other thread) or high-priority work is queued. */
typedef struct weft__idle_waking {
    const weft__idle_env *env;
    weft__latch *latch;
} weft__idle_waking;

static inline bool weft__idle_urgent(const void *arg) {
    const weft__idle_waking *w = arg;
    return weft__latch_probe(w->latch) || w->env->high_queued(w->env->ctx);
}

static inline void weft__idle_take_slot(const weft__idle_env *env, weft__latch *latch) {
    weft__budget_unblock(weft__idle_urgent, &(weft__idle_waking){env, latch});
}

/* A searcher that stops counting as one (it found a job, or its latch was
 * set), the last while someone sleeps: a poster that saw it searching woke
 * nobody (Go's wake rule: it will take the job), and a pusher kept its job
 * private (the searcher would ask for it), yet it takes another job or none.
 * So it looks once more, after a fence that pairs with the poster's
 * PushFence and the pusher's episode fence as the SleepFence does (either it
 * sees the job or the poster saw it gone): is a job waiting that nobody looks
 * for, queued or on a deque, public or private? Then it wakes a sleeper, who
 * asks for a private one and takes it by force if need be. */
static inline bool weft__idle_left_behind(const weft__idle_env *env, unsigned index) {
    weft__debug_yield(); /* the random-yield build widens both windows */
    weft__fence_seq_cst();
    weft__debug_yield();
    return env->final_check(env->ctx, index) || env->queued_check(env->ctx, index);
}

/* A worker's search loop, local to it. */
typedef struct weft__idle {
    unsigned index;     /* the searching worker */
    bool sleepy;        /* announced that it will sleep; one more search first */
    bool spent;         /* targeted: get sleepy after the next fruitless search */
    unsigned backoff;   /* pause rounds so far (weft__leave_backoff) */
    unsigned rounds;    /* wake-all: fruitless searches so far (legacy Rayon) */
    uint32_t jec;       /* targeted: the JEC seen when it got sleepy */
    uint32_t begins;    /* targeted: the phases begun when it got sleepy */
    uint64_t wake_at;   /* targeted: the leave policy's deadline for the sleep; 0: none */
    bool sampled;       /* targeted: measure the sleep's CPU (leave.c) */
    weft__stats *stats; /* the worker's statistics */
    uint64_t search_ns; /* the current search began (statistics); 0: none */
    uint64_t idle_ns;   /* this idle period's first fruitless search; 0: none */
} weft__idle;

/* Test hooks. weft__idle_debug_hook, when set, is called on the sleeping
 * worker's thread, with the pool, at these points of the (cold) falling-asleep
 * path, so tests can inject interleavings or random yields there (liburcu's
 * debug-yield). */
typedef enum {
    WEFT__DEBUG_BEFORE_LOCK,  /* targeted: sleepy, searched once more, about to lock its slot */
    WEFT__DEBUG_BEFORE_COUNT, /* targeted: sleepy, about to check the JEC and count */
    WEFT__DEBUG_BEFORE_FINAL_CHECK,   /* targeted: counted, before the SleepFence */
    WEFT__DEBUG_LEGACY_BEFORE_ASLEEP, /* wake-all: sleepy, about to mark itself asleep */
    WEFT__DEBUG_WOKEN,                /* targeted: woken, before it counts itself searching */
    WEFT__DEBUG_LEAVING,              /* its latch is set: about to stop searching */
    WEFT__DEBUG_FOUND,                /* targeted: found a job, about to stop searching */
} weft__debug_point;
WEFT__HIDDEN extern void (*_Atomic weft__idle_debug_hook)(void *pool, weft__debug_point p);

static inline void weft__idle_debug_point(const weft__idle_env *env, weft__debug_point p) {
    /* Relaxed: tests set the hook before the pool has work. */
    void (*hook)(void *, weft__debug_point) =
        atomic_load_explicit(&weft__idle_debug_hook, memory_order_relaxed);
    if (WEFT__UNLIKELY(hook != NULL))
        hook(env->ctx, p);
}

/* A fruitless search: the first one of a search and of an idle period starts
 * their clocks (a search that succeeds at once reads no clock). Returns now. */
WEFT__HIDDEN uint64_t weft__idle_missed(weft__idle *idle);
/* The search ends (work found, latch set, or about to block). */
WEFT__HIDDEN void weft__idle_search_end(weft__idle *idle, uint64_t now);
/* About to block: statistics, a trace event if *tracing, and the slot of
 * the CPU budget goes back (budget.c; the protocol takes one again once it
 * counts itself searching). Returns now. */
WEFT__HIDDEN uint64_t weft__idle_sleep_begin(weft__idle *idle, const _Atomic bool *tracing);
/* Back from a block that began at slept_at: a new search begins; returns now. */
WEFT__HIDDEN uint64_t weft__idle_sleep_end(weft__idle *idle, uint64_t slept_at);

#endif

/* SPDX-License-Identifier: MIT */
/* Jobs that wait (weft.h): blocking regions, a job suspended until another
 * thread resumes it, and events that hold a job's completion.
 *
 * Every one of them ends in the same place: the job's thread sleeps in the
 * kernel inside a blocking region, and a spare thread (core/spare.c) runs
 * the pool's work meanwhile. A suspended job keeps its thread, stack and
 * all: weft has no fibers (C offers no portable stack switch), and a
 * participating wait that ran other jobs on the thread instead would bury
 * the suspended job under them, to resume only when the newest of them
 * returned.
 *
 * Entering a region shares what the job leaves runnable: its private join
 * frames (the B halves nobody took yet) and the private part of its deques.
 * A job that blocks on what its own B does would otherwise wait for a thief
 * that takes B by force, and none comes where the others run long jobs.
 *
 * The permit (weft_task_block/unblock): IDLE, PERMIT, BLOCKED, one word.
 * Only the job leaves PERMIT (a block spends it) and enters BLOCKED (with
 * the latch it sleeps on published before); only an unblock leaves BLOCKED,
 * by a CAS to IDLE that makes it the one waker, and then sets the latch, the
 * last it touches: the job may return and its record go as soon as the
 * latch is set.
 *
 * Events: one word, events << 1 | running. The job's return clears
 * `running`; whoever brings the word to zero completes the job: the return
 * itself (no events left: no wait), or the last decrease, which sets `done`
 * for the job's thread waiting in its region, and touches nothing after.
 */
#include <errno.h>
#include <stdint.h>

#include <weft.h>

#include "core/current.h"
#include "core/spare.h"
#include "core/task.h"
#include "idle/budget.h"
#include "idle/sleep.h"
#include "os/error.h"

/* ---- Blocking regions --------------------------------------------------- */

/* Make what w leaves runnable takeable: its private frames go public on its
 * deque, its deques' private jobs are shared, and the sleep protocol hears
 * of them (a sleeper wakes for them if nobody searches). */
static void share_own_work(weft__worker *w) {
    bool published = weft__frame_publish_own(w);
    for (int p = 0; p < WEFT__PRIORITIES; p++) {
        weft__deque *d = &w->deques[p];
        if (weft__deque_private_count(d) > 0)
            weft__worker_offer(w, d);
        else if (published && p == WEFT_PRIORITY_NORMAL)
            weft__sleep_new_jobs_cold(&w->pool->sleep, 1, true);
    }
}

static void region_begin(weft__worker *w) {
    if (w->blocking++ > 0)
        return;
    share_own_work(w);
    weft__spares_block(w->pool);
    weft__budget_block(); /* a budgeted worker's slot: the spare's to take */
}

static void region_end(weft__worker *w) {
    if (w->blocking == 0 || --w->blocking > 0)
        return;
    weft__spares_unblock(w->pool);
    weft__budget_resume(); /* before other waiters: only we can go on with this job */
}

/* The calling thread's worker if it runs a job, else NULL. */
static weft__worker *in_job(void) {
    weft__worker *w = weft__current_worker();
    return w && w->task ? w : NULL;
}

static int not_in_job(const char *call) {
    return weft__error_set(EINVAL, "%s: the calling thread runs no job of a pool", call);
}

int weft_blocking_begin(void) {
    weft__worker *w = in_job();
    if (!w)
        return not_in_job("weft_blocking_begin");
    region_begin(w);
    return 0;
}

void weft_blocking_end(void) {
    weft__worker *w = weft__current_worker();
    if (w)
        region_end(w);
}

/* Sleep on l, an outside thread's latch, inside a blocking region. */
static void wait_blocking(weft__worker *w, weft__latch *l) {
    region_begin(w);
    weft__latch_wait_outside(l);
    region_end(w);
}

/* ---- The task ------------------------------------------------------------ */

static weft_task *task_of(weft__worker *w) {
    weft_task *t = w->task;
    if (!t->used) {
        atomic_init(&t->permit, WEFT__TASK_IDLE);
        t->blocked = NULL;
        atomic_init(&t->events, 1); /* running, no events */
        weft__latch_init_owned(&t->done, NULL, WEFT__LATCH_OUTSIDE);
        t->used = true;
    }
    return t;
}

weft_task *weft_task_self(void) {
    weft__worker *w = in_job();
    return w ? task_of(w) : NULL;
}

int weft_task_block(void) {
    weft__worker *w = in_job();
    if (!w)
        return not_in_job("weft_task_block");
    weft_task *t = task_of(w);
    uint32_t st = WEFT__TASK_PERMIT;
    /* Acquire: the unblock's writes before it gave the permit are ours. */
    if (atomic_compare_exchange_strong_explicit(&t->permit, &st, WEFT__TASK_IDLE,
                                                memory_order_acquire, memory_order_relaxed))
        return 0;
    weft__latch l;
    weft__latch_init_owned(&l, NULL, WEFT__LATCH_OUTSIDE);
    t->blocked = &l;
    st = WEFT__TASK_IDLE;
    /* Release: publishes `blocked` (and l) to the unblock that sees
     * BLOCKED. Acquire on failure: the permit came meanwhile, with it the
     * unblock's writes; only we leave PERMIT, so the store below is safe. */
    if (!atomic_compare_exchange_strong_explicit(&t->permit, &st, WEFT__TASK_BLOCKED,
                                                 memory_order_release, memory_order_acquire)) {
        atomic_store_explicit(&t->permit, WEFT__TASK_IDLE, memory_order_relaxed);
        return 0;
    }
    wait_blocking(w, &l); /* the latch's acquire: the unblock's writes */
    return 0;
}

int weft_task_unblock(weft_task *task) {
    if (!task)
        return weft__error_set(EINVAL, "weft_task_unblock: task is NULL");
    /* Acquire: a BLOCKED seen makes the block's `blocked` visible. */
    uint32_t st = atomic_load_explicit(&task->permit, memory_order_acquire);
    for (;;) {
        if (st == WEFT__TASK_PERMIT)
            return 0; /* one permit at most */
        uint32_t next = st == WEFT__TASK_IDLE ? WEFT__TASK_PERMIT : WEFT__TASK_IDLE;
        /* Release: our writes before the unblock go to the job (with the
         * permit, or through the latch's release below). Acquire: as the
         * load above, for a BLOCKED read by a failed CAS. */
        if (atomic_compare_exchange_weak_explicit(&task->permit, &st, next, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
    }
    if (st == WEFT__TASK_BLOCKED)
        weft__latch_set_outside(task->blocked); /* last: the job may return after it */
    return 0;
}

int weft_task_events_increase(weft_task *task, unsigned n) {
    if (!task)
        return weft__error_set(EINVAL, "weft_task_events_increase: task is NULL");
    /* Relaxed: the count alone; an increase happens while the job runs or
     * has events outstanding, so it cannot complete the job. */
    uint64_t cur = atomic_load_explicit(&task->events, memory_order_relaxed);
    do {
        if ((cur >> 1) + n > UINT32_MAX)
            return weft__error_set(EOVERFLOW,
                                   "weft_task_events_increase: %u more events than the %u "
                                   "allowed outstanding",
                                   n, (unsigned)UINT32_MAX);
    } while (!atomic_compare_exchange_weak_explicit(&task->events, &cur, cur + ((uint64_t)n << 1),
                                                    memory_order_relaxed, memory_order_relaxed));
    return 0;
}

int weft_task_events_decrease(weft_task *task, unsigned n) {
    if (!task)
        return weft__error_set(EINVAL, "weft_task_events_decrease: task is NULL");
    uint64_t cur = atomic_load_explicit(&task->events, memory_order_relaxed), next;
    do {
        if ((cur >> 1) < n)
            return weft__error_set(EINVAL,
                                   "weft_task_events_decrease: %u events, but %llu outstanding", n,
                                   (unsigned long long)(cur >> 1));
        next = cur - ((uint64_t)n << 1);
        /* Release: our writes reach the job's completion (its acquire in
         * finish, or the latch's). Relaxed on failure: we try again. */
    } while (!atomic_compare_exchange_weak_explicit(&task->events, &cur, next, memory_order_release,
                                                    memory_order_relaxed));
    if (next == 0 && n > 0)
        weft__latch_set_outside(&task->done); /* last: the job completes after it */
    return 0;
}

void weft__task_finish(weft__worker *w, weft_task *t) {
    /* Acq_rel: acquire, the decreases' writes before they ended; release,
     * the job's writes to whoever completes it. */
    uint64_t left =
        atomic_fetch_and_explicit(&t->events, ~(uint64_t)1, memory_order_acq_rel) & ~(uint64_t)1;
    if (left != 0)
        wait_blocking(w, &t->done);
}

/* SPDX-License-Identifier: MIT */
/* weft_broadcast: run a function exactly once on every worker of a pool.
 *
 * No allocation: the broadcast's descriptor lives in the caller's frame, on a
 * list the pool keeps under a lock, numbered by a pool-wide sequence. Every
 * worker remembers the number of the last broadcast it ran; before looking
 * for other work it compares that with the sequence (one load of a word that
 * only broadcasts write) and runs what it has not run, oldest first. Each run
 * drops one count of the descriptor's count latch, owned by the caller, who
 * waits for it (participating if it is a worker) and then unlinks the
 * descriptor.
 *
 * Sleepers: the caller publishes the new sequence, executes a seq-cst fence
 * (PushFence) and wakes every sleeping worker specifically; a worker going to
 * sleep checks the sequence after its SleepFence, next to the injector
 * (idle_env.c, final_check). The argument of docs/sleep.md applies unchanged:
 * either the worker sees the broadcast, or the caller sees it asleep.
 */
#include "api/broadcast.h"

#include <errno.h>

#include "core/current.h"
#include "core/latch_owner.h"
#include "os/error.h"

void weft__broadcast_run(weft_pool *pool, void (*fn)(unsigned index, void *arg), void *arg) {
    weft__broadcast d = {.fn = fn, .arg = arg};
    weft__count_latch_init(&d.done, pool->threads); /* owned by the caller */
    weft__worker *caller = weft__current_worker();
    bool foreign = caller && caller->pool != pool;
    weft__guest guest;
    if (foreign)
        weft__pool_serve_begin(pool, caller->pool, &guest); /* pool now works for caller's pool */
    weft__pool_ref(pool); /* the unlink comes after the last share: pool may be going */
    weft__broadcast_post(&pool->broadcasts, &d);
    weft__fence_seq_cst(); /* PushFence, as for an injected job (docs/sleep.md) */
    weft__sleep_wake_sleepers(&pool->sleep);
    weft__latch_wait(&d.done.latch);
    weft__broadcast_unlink(&pool->broadcasts, &d);
    if (foreign)
        weft__pool_serve_end(pool, &guest);
    weft__pool_unref(pool);
}

int weft_broadcast(weft_pool *pool, void (*fn)(unsigned index, void *arg), void *arg) {
    if (!fn)
        return weft__error_set(EINVAL, "fn is NULL");
    int err = weft__pool_lookup(pool, &pool);
    if (err)
        return err; /* EAGAIN, ECHILD */
    /* Pending work of the pool until it returns (pending.h): a destroy
     * started meanwhile keeps the workers, whose shares it needs. Closed:
     * they are stopping (on_exit), and some would never run their share. */
    if (!weft__pending_hold(&pool->pending))
        return weft__pool_closed_error();
    weft__broadcast_run(pool, fn, arg);
    weft__pending_release(&pool->pending);
    return 0;
}

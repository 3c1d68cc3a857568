/* SPDX-License-Identifier: MIT */
/* weft's wake-all protocol (WEFT_WAKE_ALL, the legacy Rayon sleep) with the
 * latches of worker owners and of an outside owner, for SPIN.
 * verify/README.md ("The wake-all protocol") maps every step to src/;
 * verify/run.sh runs the checks. shared.pml and shared_procs.pml hold what
 * this model shares with sleep.pml (the targeted protocol): the latches, the
 * injector and its store buffer, running a job, the submitter's destroy, the
 * setter, Memory.
 *
 * Processes (the same as sleep.pml's, without the context):
 *   Worker(0..W-1)  weft__worker_wait_until_cold under wake-all: probe the
 *                   latch, search the injector, weft__wake_all_no_work_found (rounds,
 *                   get_sleepy, still_sleepy,
 *                   fall_asleep; wake_all.c), run the jobs it finds, tickle when
 *                   it finds work or leaves while sleepy. Worker 0 first
 *                   waits for the job latch LJOB inside a job of its own
 *                   (which holds a count of the pending latch), then, like
 *                   every worker, for its terminate latch.
 *   Submitter       an outside thread: weft__pool_inject NJOBS times (push,
 *                   PushFence, tickle), then weft_pool_destroy (wait for the
 *                   pending latch as its outside owner; set every terminate
 *                   latch: each set tickles).
 *   Setter          another thread that sets LJOB at any moment
 *                   (weft__latch_set: seq-cst exchange of SET, then
 *                   weft__sleep_set_latch: a worker owner, wake-all: tickle).
 *   Memory          drains the submitter's store buffer (and, LATCH_RELEASE,
 *                   the setter's) at any moment.
 *
 * Property: as in sleep.pml, every process runs to its end; a job left in the
 * injector or a latch set while every thread that could act is blocked is an
 * "invalid end state". Assertions: a worker blocked on the epoch is covered,
 * by the asleep bit or by a tickle between its exchange and its wake-all
 * (epoch_check); a worker owner's latch never leaves UNSET but to SET.
 *
 * Memory model: as sleep.pml's (shared.pml): C11 by default (seq-cst
 * operations and fences in one interleaving, the submitter's push in a store
 * buffer, stale relaxed loads of the injector within happens-before), TSO
 * with -DTSO. The latch set's seq-cst exchange is one step of the
 * interleaving, so it is in the total order ahead of its tickle's load.
 *
 * Switches (spin -DNAME):
 *   W=2|3  NJOBS=n  TSO
 *   OWNER_LEAVES     worker 0 never comes back once LJOB is set (its job
 *                    runs for ever and holds no pending count)
 *   Broken variants, which SPIN must reject:
 *   NO_FINAL_CHECK   fall_asleep without SleepFence and final check
 *                    (injector and latch probe): legacy Rayon as it was
 *   NO_SLEEP_FENCE   the final check without the SleepFence (its injector
 *                    load is then unordered; TSO ignores this)
 *   NO_PUSH_FENCE    the submitter's PushFence removed (its store buffer
 *                    keeps the push invisible)
 *   LATCH_RELEASE    the setter's exchange is release only: its SET may wait
 *                    in its store buffer past its tickle's load (C11)
 *   NO_TICKLE_LOCK   weft__wake_all_tickle_cold bumps the epoch without its lock,
 *                    so it can land between a sleeper's CAS to asleep and its
 *                    read of the epoch
 */

#ifdef CONTEXT
#error "wake_all.pml has no context: a context sleeps on its slot whatever the protocol (sleep.pml)"
#endif

/* Worker 0's own job, the one waiting for LJOB, holds a count of the pending
 * latch until it ends: a set of LJOB that worker 0 misses then keeps
 * weft_pool_destroy from ever setting the terminate latches (whose tickles
 * would wake every sleeper). With OWNER_LEAVES the job never ends. */
#ifndef OWNER_LEAVES
#define PENDING_EXTRA 1
#endif

#include "shared.pml"

#if W == 2
#define ALL 3
#elif W == 3
#define ALL 7
#else
#error "W must be 2 or 3"
#endif

#define BIT(m, i) (((m) >> (i)) & 1)

/* ---- the wake-all protocol's state (shared.pml: latches, injector) ------- */

/* weft__wake_all.state, one word, every access seq-cst: the index + 1 of
 * the single sleepy worker (bits 1..), and the asleep bit (bit 0) */
byte lsleepy = 0;
bit lasleep = 0;

/* weft__wake_all.epoch. A sleeper compares it only with the value it read
 * under its lock (futex_wait), so the model keeps, per worker, whether it
 * changed since that read: bit i of `stale` (set, too, while worker i holds no
 * value). The 32-bit epoch does not wrap within a sleep. */
byte stale = ALL;
byte eq = 0;           /* bit i: worker i is queued in futex_wait on the epoch */

/* ghost: tickles between their exchange (which saw the asleep bit) and their
 * futex wake-all */
byte bumping = 0;

inline normalize_model() {
    skip
}

/* A worker blocked on the epoch is covered: the asleep bit is set (the next
 * tickle wakes everybody) or a tickle that cleared it has yet to wake. */
inline epoch_check() {
    assert(eq == 0 || lasleep || bumping > 0)
}

/* ---- tickle (sleep.c) ------------------------------------------------------ */

/* LATCH_RELEASE: the setter's own locked RMW drains its buffer (as for the
 * submitter's, drain_if_submitter) */
inline drain_if_setter() {
#ifdef LATCH_RELEASE
    if
    :: _pid == 1 && lsb -> latch[LJOB] = SET; lsb = 0
    :: else
    fi
#else
    skip
#endif
}

/* weft__wake_all_tickle: a seq-cst load of the state; if nonzero,
 * weft__wake_all_tickle_cold: exchange 0 (a locked RMW); if the asleep bit was set,
 * under its lock the epoch + 1 (relaxed store), unlock, futex-wake
 * everybody on the epoch. The locked section is one step, as is the
 * sleeper's (mark_asleep): that is the lock. */
inline tickle() {
    atomic { ok = (lsleepy != 0 || lasleep); cnt_acq() }
    if
    :: ok ->
        atomic {
            ok = lasleep; lsleepy = 0; lasleep = 0; cnt_rmw();
            drain_if_submitter(); drain_if_setter();
            if :: ok -> bumping++ :: else fi;
            epoch_check()
        }
        if
        :: ok ->
            stale = ALL;                       /* epoch + 1 */
            atomic { eq = 0; bumping-- }       /* weft__os_wake_all */
        :: else
        fi
    :: else
    fi;
    ok = 0
}

/* weft__latch_set + weft__sleep_latch_set for worker o's latch l. The
 * exchange is seq-cst: one step, ahead of the tickle's load. A worker never
 * moves its latch under wake-all (fall_asleep only probes it), so the
 * exchange finds UNSET and was_sleeping is false: the tickle is the wake-up.
 * LATCH_RELEASE (broken): a release exchange; the SET may stay in the
 * setter's store buffer while its tickle loads the state. */
inline set_latch(l, o) {
    atomic {
        assert(latch[l] == UNSET || latch[l] == SET);
#ifdef LATCH_RELEASE
        if
        :: _pid == 1 -> lsb = 1
        :: else -> latch[l] = SET
        fi
#else
        latch[l] = SET
#endif
    }
    tickle()
}

/* ---- falling asleep (sleep.c) ---------------------------------------------- */

/* fall_asleep: idle->sleepy = false; mark_asleep (under
 * the lock: CAS "me sleepy" -> asleep, read the epoch); SleepFence; the
 * final check (weft__pool_final_check, weft__latch_probe); one futex_wait on
 * the epoch. Woken or not, back to the search loop. */
inline fall_asleep() {
    atomic {
        phase = SEARCHING;
        ok = (lsleepy == me + 1);
        if
        :: ok ->
            lsleepy = 0; lasleep = 1; cnt_rmw()
#ifndef NO_TICKLE_LOCK
            ; stale = stale & ~(1 << me)       /* *epoch = a->epoch */
#endif
        :: else -> cnt_acq()
        fi
    }
#ifdef NO_TICKLE_LOCK
    if
    :: ok -> stale = stale & ~(1 << me)        /* broken: a tickler may have bumped meanwhile */
    :: else
    fi;
#endif
    if
    :: ok ->
        atomic {
            final_check();
#ifndef NO_FINAL_CHECK
            nonempty = (nonempty || latch[cur] == SET)
#endif
        }
        if
        :: nonempty -> nonempty = 0            /* the stale asleep bit costs one spurious tickle */
        :: else ->
            /* weft__os_wait(&a->epoch, epoch): queue only if unchanged */
            atomic {
                if
                :: BIT(stale, me) -> skip
                :: else -> eq = eq | (1 << me); epoch_check()
                fi
            }
            atomic { BIT(eq, me) == 0 -> stale = stale | (1 << me) }
        fi
    :: else
    fi;
    ok = 0
}

/* ---- the worker: weft__worker_wait_until_cold ------------------------------ */

proctype Worker(byte me) {
    byte cur, phase, old;
    bit got, ok, nonempty, stop;

    cur = (me == 0 -> LJOB : me);
    /* weft__sleep_start_looking: nothing counted under wake-all */
loop:
    /* weft__latch_probe, then find_work (the injector pop), one step */
    atomic {
        if
        :: latch[cur] == SET -> stop = 1
        :: else -> pop_or_miss()
        fi
    }
    if
    :: stop ->
        /* weft__sleep_stop_looking: weft__sleep_work_found(false): a sleepy
         * worker gives up being the sleepy one */
        if
        :: phase == IS_SLEEPY -> phase = SEARCHING; tickle()
        :: else
        fi;
        goto after
    :: else
    fi;
    if
    :: got ->
        /* weft__sleep_work_found(more): tickle if sleepy; the job runs;
         * weft__sleep_start_looking */
        got = 0;
        if
        :: phase == IS_SLEEPY -> phase = SEARCHING; tickle()
        :: else
        fi;
        job_done();
        goto loop
    :: else
    fi;
    /* weft__sleep_no_work_found: weft__wake_all_no_work_found */
    if
    :: phase == SEARCHING ->
        if
        :: skip                                /* keep_searching: a round */
        :: atomic {                            /* get_sleepy */
               if
               :: lsleepy == 0 -> lsleepy = me + 1; cnt_rmw(); phase = IS_SLEEPY
               :: else -> cnt_acq()            /* another worker is the sleepy one */
               fi
           }
        fi
    :: phase == IS_SLEEPY ->
        if
        :: atomic {                            /* rounds left: still_sleepy */
               cnt_acq();
               if
               :: lsleepy != me + 1 -> phase = SEARCHING   /* tickled: start over */
               :: else
               fi
           }
        :: fall_asleep()
        fi
    fi;
    goto loop;
after:
    stop = 0;
    if
#ifndef OWNER_LEAVES
    :: cur == LJOB -> job_done(); cur = me; goto loop   /* its job ends; back in the pool's loop */
#else
    :: cur == LJOB -> skip                 /* runs the rest of its job for ever */
#endif
    :: else
    fi
}

/* ---- the outside thread: submit, then destroy the pool --------------------- */

active proctype Submitter() {
    byte old, i, s;
    bit ok;

    do
    :: pushes < NJOBS ->
        /* weft__pool_inject: push, PushFence (weft__sleep_new_injected_jobs),
         * weft__sleep_new_jobs_cold: tickle (was_empty does not matter) */
        injector_push();
        tickle()
    :: else -> break
    od;
    destroy()
}

#include "shared_procs.pml"

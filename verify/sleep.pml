/* SPDX-License-Identifier: MIT */
/* weft's targeted sleep protocol and its latch protocol, for SPIN.
 * verify/README.md maps every step to src/ and argues every abstraction;
 * verify/run.sh runs the checks. shared.pml and shared_procs.pml hold what
 * this model shares with wake_all.pml (the wake-all protocol): the latches,
 * the injector and its store buffer, the submitter's destroy, the setter,
 * Memory.
 *
 * Processes:
 *   Worker(0..W-1)  weft__worker_wait_until_cold: probe the latch, search the
 *                   injector, get sleepy, fall asleep (sleep.c: fall_asleep,
 *                   count_sleeper, back_out, block), run the jobs it finds.
 *                   Worker 0 first waits for the job latch LJOB (the latch of
 *                   a join or weft_run it is inside), then, like every
 *                   worker, for its terminate latch (worker_main).
 *   Submitter       an outside thread: weft__pool_inject NJOBS times (push,
 *                   PushFence, new_jobs + wake_any), then weft_pool_destroy:
 *                   wait as the outside owner of the pending count latch,
 *                   then set every terminate latch (stop_workers).
 *   Setter          another thread that sets LJOB (and LCTX) at any moment
 *                   (weft__latch_set: swap SET, wake the owner if SLEEPING).
 *   Memory          drains the submitter's store buffer at any moment.
 *   Context         with CONTEXT: a context thread (context.c) waiting for
 *                   its latch LCTX through owner_wait (context.c), the latch
 *                   protocol alone, on slot W, uncounted.
 *
 * Property: every process runs to its end. A job left in the injector, or a
 * latch set, while every thread that could act is blocked is a state with no
 * enabled transition that is not an end state: SPIN reports an "invalid end
 * state". Safety invariants are assertions (check, slotcheck, and others).
 *
 * Memory model. Default, C11: seq-cst operations and fences happen in one
 * interleaving; relaxed loads of the injector's `length` that nothing orders
 * may return stale values (within what happens-before allows: ghosts `kn`,
 * `rel`, `lrel`, `wk`), and so may the wake hint (`seen`); the submitter's
 * push sits in a store buffer until a fence or locked RMW drains it.
 * TSO: every load reads memory; the store buffer is the only relaxation.
 *
 * Switches (spin -DNAME):
 *   W=2|3  NJOBS=n  JEC_MOD=2|4|8 (even; 8 never wraps for NJOBS <= 3)
 *   TSO              x86-TSO instead of C11
 *   CONTEXT          add the context owner and its latch
 *   OWNER_LEAVES     worker 0 never comes back to search once LJOB is set
 *                    (it runs the rest of its job for an unbounded time)
 *   Broken variants, which SPIN must reject:
 *   NO_FINAL_CHECK   the sleeper's final injector check removed
 *   NO_PUSH_FENCE    the submitter's PushFence removed (its store buffer
 *                    keeps the push invisible)
 *   NO_SLEEP_FENCE   the sleeper's SleepFence removed (its final check is
 *                    then an unordered relaxed load; under TSO the locked
 *                    counting CAS already orders it, so TSO ignores this)
 *   NO_WAKER_LOCK    wake_specific does not take the slot lock
 *   DROWSY_AFTER_COUNT  the sleeper stores DROWSY after its counting CAS, so
 *                    a waker's counter read no longer publishes it
 *   LATCH_NO_CAS     the owner stores SLEEPING instead of CAS SLEEPY->SLEEPING
 *   CONTEXT_NO_CAS   the same in owner_wait (context.c) (needs CONTEXT)
 *   OLD_WAKE         weft before e0e49d2: the waker subtracts the sleeper
 *                    from `sleeping` only, and the woken worker stays
 *                    inactive (sleep.c's invariant 1 then fails)
 *   STRICT_INV1      assert invariant 1's inactive <= threads as sleep.c
 *                    states it (fails: README, "Findings", 2)
 *   Suggested change (README, "Findings", 3):
 *   NO_LEAVE_HANDOVER  without weft__sleep_stop_looking's hand-over: a worker
 *                    leaving its loop because its latch is set does not wake
 *                    a sleeper for work left in the injector
 *   FINDER_MAY_STAY  a worker that found a job may run it for ever (after
 *                    counting it done): a job posted while it searched must
 *                    not wait for it
 *   NO_FOUND_HANDOVER  weft before the found hand-over: a worker that found
 *                    a job hands over only for work its search saw (`more`),
 *                    not for a job posted while it still counted as a
 *                    searcher (README, "Findings", 4)
 *   DEFER_UNGUARDED  a post onto a non-empty queue leaves its wake-up to a
 *                    wake-up in flight even when none is (in_flight.h)
 */

#ifndef JEC_MOD
#define JEC_MOD 2
#endif

#include "shared.pml"

#ifdef CONTEXT
#define NSLOTS (W + 1)          /* slot W: the context's */
#else
#define NSLOTS W
#endif

/* slot words (sleep.h) */
#define AWAKE  0
#define DROWSY 1
#define ASLEEP 2

/* ---- the targeted protocol's state (shared.pml: latches, injector) ------- */

/* weft__sleep.counters, one atomic word: JEC | inactive | sleeping */
byte jec = 1;          /* starts odd: nobody sleepy */
byte inactive = 0;
byte sleeping = 0;

/* weft__in_flight (in_flight.h): wake-ups in flight (woken by a waker, not
 * yet arrived: counted back in `inactive`) and the wake-ups posters left to
 * them; whether a wake-up is due is a nondeterministic choice of the
 * poster's */
byte inflight = 0;
byte owed = 0;
bit byother[W];        /* worker i's wake-up is in `inflight` */

/* ghosts, for the invariants */
bit counted[W];        /* worker i's +1 is in `sleeping` */
bit waking[NSLOTS];    /* a waker holding i's lock stored AWAKE, has not uncounted */

/* Ghost for C11 visibility (shared.pml explains the others): the knowledge
 * released with a waker's AWAKE store into word[i], which the sleeper
 * acquires when it sees AWAKE. */
byte wk[W];

/* sleep slots */
byte word[NSLOTS];     /* AWAKE / DROWSY / ASLEEP */
byte slot_lock[NSLOTS];/* 0 free, else holder's _pid + 1 */
bit futex_q[NSLOTS];   /* the slot's owner is queued in futex_wait on its word */

/* normalize (shared.pml): the waker hand-offs too */
inline normalize_model() {
#if W == 3
    wk[2] = MAX(wk[2], pops);
#endif
    wk[0] = MAX(wk[0], pops); wk[1] = MAX(wk[1], pops)
}

/* ---- invariants ------------------------------------------------------------ */

#if W == 2
#define SUMC  (counted[0] + counted[1])
#define MASKC (counted[0] + 2 * counted[1])
#elif W == 3
#define SUMC  (counted[0] + counted[1] + counted[2])
#define MASKC (counted[0] + 2 * counted[1] + 4 * counted[2])
#else
#error "W must be 2 or 3"
#endif

#if NSLOTS == 2
#define SUMW  (waking[0] + waking[1])
#else
#define SUMW  (waking[0] + waking[1] + waking[2])
#endif

/* Invariant 1 (sleep.c): sleeping <= inactive <= threads, and `sleeping` is
 * exactly the number of workers counted (so it never goes negative; bytes
 * would wrap to 255). A woken worker adds itself back to `inactive` as soon
 * as it runs, possibly before its waker has taken it out, so for that moment
 * it counts twice: inactive <= threads + (workers being woken). STRICT_INV1
 * asserts inactive <= threads as documented. */
#ifdef STRICT_INV1
#define INV1B (inactive <= W)
#else
#define INV1B (inactive <= W + SUMW)
#endif
inline check() {
    assert(sleeping <= inactive && INV1B && sleeping == SUMC)
}

/* Invariant 2: a counted worker is DROWSY or ASLEEP, and an ASLEEP worker is
 * counted, except while a waker holding its lock is between its AWAKE store
 * and its uncount. Checked after every step that changes word[], counted[]
 * or waking[]. Contexts are never counted. */
inline slotcheck(t) {
    assert(t >= W ||
           ((!counted[t] || word[t] != AWAKE || waking[t]) &&
            (word[t] != ASLEEP || counted[t] || waking[t])))
}

inline UNLOCK(t) {
    assert(slot_lock[t] == _pid + 1);
    slot_lock[t] = 0
}

/* ---- waking (sleep.c) ------------------------------------------------------ */

/* uncount_sleeper(s, ONE_INACTIVE) for a woken worker: out of `sleeping` and,
 * since e0e49d2, out of `inactive` too (it adds itself back once it runs);
 * contexts are not counted */
inline uncount_woken(t) {
    if
    :: t < W ->
        sleeping--;
#ifndef OLD_WAKE
        inactive--;
#endif
        counted[t] = 0; cnt_rmw(); check()
    :: else
    fi;
    waking[t] = 0; slotcheck(t)
}

/* wake_specific(s, t, hinted); result in `woke`. With `hinted`, an AWAKE word
 * means nothing to do, without the lock. Under C11 that relaxed load may be
 * stale, except that if the caller's seq-cst counter read included t's
 * counting CAS (t's bit in `seen`) it synchronised with it, so t's DROWSY
 * store is visible; for t not in `seen` the load may return AWAKE whatever the
 * word holds. Lock and the check under it are one step (an acquire is a right
 * mover; no one else writes the word while we hold the lock). */
inline wake_specific(t, hinted) {
    if
    :: hinted && word[t] == AWAKE -> woke = 0
#if !defined(TSO) && !defined(DROWSY_AFTER_COUNT)
    :: hinted && word[t] != AWAKE && ((seen >> t) & 1) == 0 -> woke = 0   /* stale */
#elif !defined(TSO)
    :: hinted && word[t] != AWAKE -> woke = 0   /* stale: the count no longer publishes DROWSY */
#endif
    :: !hinted || word[t] != AWAKE ->
#ifndef NO_WAKER_LOCK
        atomic {
            slot_lock[t] == 0 -> slot_lock[t] = _pid + 1;
            drain_if_submitter();        /* a lock acquire is a locked RMW */
            assert(word[t] != DROWSY);   /* invariant 3: a DROWSY sleeper holds its lock */
            if
            :: word[t] == ASLEEP ->
                woke = 1;
                if :: t < W -> inflight++; byother[t] = 1 :: else fi;   /* weft__in_flight_woken */
                word[t] = AWAKE; G(if :: t < W -> wk[t] = kn :: else fi); waking[t] = 1; slotcheck(t)   /* release store */
            :: else -> woke = 0; UNLOCK(t)
            fi
        }
        if
        :: woke ->
            atomic { uncount_woken(t); UNLOCK(t) }
            futex_q[t] = 0                 /* weft__os_wake_one(&word) */
        :: else
        fi
#else
        /* broken: no lock; at least the ASLEEP -> AWAKE step is a CAS */
        atomic { if :: word[t] == ASLEEP -> if :: t < W -> inflight++; byother[t] = 1 :: else fi; word[t] = AWAKE; G(if :: t < W -> wk[t] = kn :: else fi); waking[t] = 1; woke = 1 :: else -> woke = 0 fi }
        if
        :: woke ->
            atomic { uncount_woken(t) }
            futex_q[t] = 0
        :: else
        fi
#endif
    fi
}

/* wake_self (sleep.c): a sleeper whose timed wait ran out wakes itself as a
 * waker would, under its own slot lock; if a waker got there first the word is
 * AWAKE and there is nothing to do. Its knowledge is its own (no wk[] hand-off).
 * Broken variant: the check and the wake-up without the lock, so a waker can
 * wake (and uncount) it in between. */
inline wake_self() {
#ifndef SELF_WAKE_NO_LOCK
    atomic {
        slot_lock[me] == 0 -> slot_lock[me] = _pid + 1;
        if
        :: word[me] == ASLEEP -> word[me] = AWAKE; waking[me] = 1; slotcheck(me); old = 1
        :: else -> old = 0; UNLOCK(me)
        fi
    }
    if
    :: old -> atomic { uncount_woken(me); UNLOCK(me) }
    :: else
    fi;
#else
    if
    :: word[me] == ASLEEP -> old = 1
    :: else -> old = 0
    fi;
    if
    :: old -> atomic { word[me] = AWAKE; waking[me] = 1 }; atomic { uncount_woken(me) }
    :: else
    fi;
#endif
    old = 0
}

/* wake_any(s, n): the worker slots in order until n are woken */
inline wake_any() {
    i = 0;
    do
    :: i < W && n > 0 ->
        wake_specific(i, 1);
        if
        :: woke -> n--
        :: else
        fi;
        i++
    :: else -> break
    od;
    i = 0; n = 0; woke = 0
}

/* weft__latch_set for a latch owned by slot o: seq-cst swap; only a
 * SLEEPING owner is woken, always through its lock (hinted = false) */
inline set_latch(l, o) {
    atomic { old = latch[l]; latch[l] = SET }
    if
    :: old == SLEEPING -> wake_specific(o, 0)
    :: else
    fi;
    old = 0; woke = 0
}

/* ---- falling asleep (sleep.c) ---------------------------------------------- */

/* no_work_found, getting sleepy: jec_increment_if(s, false) makes the JEC
 * even; remember it */
inline get_sleepy() {
    atomic {
        if
        :: jec % 2 == 1 -> jec = (jec + 1) % JEC_MOD; cnt_rmw()
        :: else -> cnt_acq()
        fi;
        myjec = jec;
        phase = IS_SLEEPY
    }
}

/* weft__latch_wake_up: CAS SLEEPING -> UNSET */
inline latch_wake_up(l) {
    atomic {
        if
        :: latch[l] == SLEEPING -> latch[l] = UNSET
        :: else
        fi
    }
}

inline fall_asleep() {
    /* weft__latch_get_sleepy: CAS UNSET -> SLEEPY; fails only if SET */
    atomic { ok = (latch[cur] == UNSET); if :: ok -> latch[cur] = SLEEPY :: else fi }
    if
    :: ok ->
        /* lock our slot; weft__latch_fall_asleep (CAS SLEEPY -> SLEEPING);
         * word = DROWSY, or unlock if the latch was set */
        atomic {
            slot_lock[me] == 0 -> slot_lock[me] = _pid + 1;
#ifndef LATCH_NO_CAS
            ok = (latch[cur] == SLEEPY);
#else
            ok = 1;                        /* broken: a plain store of SLEEPING */
#endif
            if
#ifndef DROWSY_AFTER_COUNT
            :: ok -> latch[cur] = SLEEPING; word[me] = DROWSY; slotcheck(me)
#else
            :: ok -> latch[cur] = SLEEPING
#endif
            :: else -> UNLOCK(me)
            fi
        }
        if
        :: ok ->
            /* count_sleeper: CAS sleeping+1 if the JEC is what we remembered;
             * else back_out(spent): word AWAKE, unlock, latch back to UNSET;
             * search once more, then get sleepy again */
            atomic {
                ok = (jec == myjec);
                if
                :: ok -> sleeping++; counted[me] = 1; cnt_rmw(); check(); slotcheck(me)
                :: else -> cnt_acq(); word[me] = AWAKE; slotcheck(me); UNLOCK(me); latch_wake_up(cur); phase = AT_SLEEPY
                fi
            }
#ifdef DROWSY_AFTER_COUNT
            if
            :: ok -> word[me] = DROWSY   /* broken: published after the count */
            :: else
            fi;
#endif
            if
            :: ok ->
                /* SleepFence; the final check; if it finds nothing: block's
                 * word = ASLEEP and unlock (to a hinted reader ASLEEP and
                 * DROWSY look the same, and we hold the lock) */
                atomic {
                    final_check();
                    if
                    :: nonempty -> skip
                    :: else -> word[me] = ASLEEP; slotcheck(me); UNLOCK(me)
                    fi
                }
                if
                :: nonempty ->
                    /* uncount_sleeper(s, 0); back_out(!spent) */
                    atomic {
                        sleeping--; counted[me] = 0; cnt_rmw(); check();
                        word[me] = AWAKE; slotcheck(me); UNLOCK(me);
                        latch_wake_up(cur); phase = SEARCHING; nonempty = 0
                    }
                :: else ->
                    /* block: while (word == ASLEEP) futex_wait(&word, ASLEEP);
                     * then back in `inactive` (our waker took us out), and
                     * the latch back to UNSET */
                    do
                    :: atomic { word[me] == ASLEEP -> futex_q[me] = 1 };
#ifndef TIMED
                       futex_q[me] == 0
#else
                       /* weft__os_wait_until: woken, or the deadline passed
                        * (leave.c's prediction); then wake_self */
                       if
                       :: futex_q[me] == 0
                       :: atomic { futex_q[me] == 1 -> futex_q[me] = 0; timed = 1 }
                       fi;
                       if
                       :: timed -> timed = 0; wake_self()
                       :: else
                       fi
#endif
                    :: atomic {
                           word[me] != ASLEEP ->
                           G(kn = MAX(kn, wk[me]); wk[me] = pops);
#ifndef OLD_WAKE
                           inactive++; cnt_rmw(); check();
#endif
                           phase = SEARCHING
                       };
                       break
                    od;
                    /* weft__in_flight_arrive: a worker a waker woke, counted
                     * searching again, ends its wake-up and takes what posters
                     * left to it; if its fenced look sees work, it wakes that
                     * many (weft__idle_left_behind). The look may see the
                     * injector as it is, or empty: progress must not depend on
                     * these wake-ups (in_flight.h), so the model lets them be
                     * skipped whatever the injector holds */
                    atomic {
                        if
                        :: byother[me] -> byother[me] = 0; inflight--; n = owed; owed = 0
                        :: else
                        fi
                    }
                    if
                    :: n > 0 ->
                        if
                        :: nonempty = (length > 0)
                        :: nonempty = 0
                        fi;
                        if
                        :: nonempty -> wake_any()
                        :: else
                        fi;
                        nonempty = 0; n = 0
                    :: else
                    fi;
                    latch_wake_up(cur)
                fi
            :: else
            fi
        :: else
        fi
    :: else
    fi;
    ok = 0
}

/* ---- the worker: weft__worker_wait_until_cold ------------------------------ */

proctype Worker(byte me) {
    byte cur, phase, myjec, c_in, c_sl, seen, n, i, old;
    bit timed;
    bit got, more, ok, nonempty, woke, stop;

    cur = (me == 0 -> LJOB : me);
wait_until:
    /* weft__worker_wait_until's probe; weft__sleep_start_looking */
    atomic {
        stop = (latch[cur] == SET);
        if
        :: !stop -> inactive++; cnt_rmw(); phase = SEARCHING; check()
        :: else
        fi
    }
    if
    :: stop -> goto after
    :: else
    fi;
loop:
    /* weft__latch_probe, then find_work (deques and stealing abstracted
     * away; the injector pop). One step: see README, "merged steps". If the
     * latch is set: leave, weft__sleep_work_found(false) */
    atomic {
        if
        :: latch[cur] == SET ->
#ifndef NO_LEAVE_HANDOVER
            c_in = inactive; c_sl = sleeping; seen = MASKC;
#endif
            inactive--; cnt_rmw(); check(); stop = 1
        :: else ->
            pop_or_miss()
        fi
    }
    if
    :: stop ->
#ifndef NO_LEAVE_HANDOVER
        /* weft__sleep_stop_looking: leaving with the latch set, the last
         * searcher hands over to a sleeper if the injector holds work
         * (fence, then check) */
        fenced_check();
        if
        :: nonempty && c_sl > 0 && c_in - c_sl == 1 -> n = 1; wake_any()
        :: else
        fi;
        nonempty = 0; c_in = 0; c_sl = 0; seen = 0;
#endif
        goto after
    :: else
    fi;
    if
    :: got ->
        /* find_work's `more`: a relaxed is_empty load after the pop; it
         * may miss later pushes or see them, and a wake it causes is never
         * wrong, so the model lets it be either. weft__sleep_work_found(more):
         * leave inactive; if we were the last searcher and left work behind,
         * hand over to a sleeper */
        atomic {
            if
            :: more = 1
            :: more = 0
            fi;
            c_in = inactive; c_sl = sleeping; seen = MASKC;
            inactive--; cnt_rmw(); check();
            ok = (more && c_sl > 0 && c_in - c_sl == 1);
            got = 0
        }
#ifndef NO_FOUND_HANDOVER
        /* ... or posted since: a poster that saw us searching woke nobody
         * (Go's wake rule), so the last searcher looks again after a fence
         * (weft__idle_left_behind) */
        if
        :: !more && c_sl > 0 && c_in - c_sl == 1 ->
            fenced_check();
            ok = nonempty;
            nonempty = 0
        :: else
        fi;
#endif
        more = 0; c_in = 0; c_sl = 0;
        if
        :: ok -> n = 1; wake_any()
        :: else
        fi;
        ok = 0; seen = 0;
        job_done();                        /* the job runs */
#ifdef FINDER_MAY_STAY
        /* ... for ever (after counting itself done, so that only the job it
         * left behind can keep the pool's destroy waiting) */
        if
        :: goto gone
        :: skip
        fi;
#endif
        atomic { inactive++; cnt_rmw(); phase = SEARCHING; check() }   /* start_looking */
        goto loop
    :: else
    fi;
    /* weft__sleep_no_work_found */
    if
    :: phase == SEARCHING ->
        if
        :: skip                            /* the leave policy: keep searching */
        :: get_sleepy()                    /* ... or get sleepy */
        fi
    :: phase == AT_SLEEPY -> get_sleepy()
    :: phase == IS_SLEEPY -> fall_asleep()
    fi;
    goto loop;
after:
    stop = 0;
    if
#ifndef OWNER_LEAVES
    :: cur == LJOB -> cur = me; goto wait_until   /* back in the pool's loop */
#else
    :: cur == LJOB -> skip        /* runs the rest of its job for ever */
#endif
    :: else
    fi;
gone:
    skip
}

/* ---- the outside thread: submit, then destroy the pool --------------------- */

active proctype Submitter() {
    byte c_in, c_sl, seen, n, i, old, s;
    bit was_empty, woke, ok;

    do
    :: pushes < NJOBS ->
        /* weft__pool_inject: was_empty, a relaxed load (our own buffered
         * store forwards to it). It may be stale: a drained queue read as
         * non-empty (a pop not yet visible, or in C another poster's push
         * since taken), which lets the post defer to a wake-up in flight
         * onto a queue that holds only its own job. */
        if
        :: was_empty = (length + sb == 0)
        :: was_empty = 0
        fi;
        injector_push();                   /* push, PushFence */
        /* new_jobs(s, 1, was_empty): jec_increment_if(s, true) (its CAS,
         * taken only when the JEC is even, is a locked RMW that drains the
         * buffer too), then the wake rule; n = 1, so min(n, sleepers) and
         * min(n - idle, sleepers) are 1; idle = inactive - sleepers is
         * unsigned in C (huge if inactive < sleepers, which invariant 1
         * rules out since e0e49d2). Under Go's rule (the default) a
         * non-empty queue wakes only when nobody searches, so was_empty
         * does not matter for one job; RAYON_WAKE: Rayon's rule, a
         * non-empty queue always wakes */
        atomic {
            if
            :: jec % 2 == 0 ->
                if :: sb -> length++; sb = 0; G(lrel = pushes) :: else fi; G(uf = 0);
                jec = (jec + 1) % JEC_MOD; cnt_rmw()
            :: else
            fi;
            c_in = inactive; c_sl = sleeping; seen = MASKC;
#ifdef RAYON_WAKE
            ok = (c_sl > 0 && (!was_empty || (c_in >= c_sl && c_in - c_sl < 1)));
#else
            ok = (c_sl > 0 && c_in >= c_sl && c_in - c_sl < 1);
#endif
            c_in = 0; c_sl = 0
        }
        /* weft__in_flight_defer: onto a non-empty queue, a wake-up in flight
         * not yet due takes ours over; due or not is either (DEFER_UNGUARDED:
         * defer with no wake-up in flight) */
        if
#ifndef DEFER_UNGUARDED
        :: ok && !was_empty && inflight > 0 -> ok = 0; owed++   /* not yet due */
#else
        :: ok && !was_empty -> ok = 0; owed++
#endif
        :: true                                                   /* due */
        fi;
        was_empty = 0;
        if
        :: ok -> n = 1; wake_any()
        :: else
        fi;
        ok = 0; seen = 0
    :: else -> break
    od;

    destroy()
}

#ifdef CONTEXT
/* weft__context_wait_until with no jobs of its own left: the loop around
 * owner_wait in context.c (get_sleepy, lock, fall_asleep, ASLEEP, unlock,
 * wait while ASLEEP, wake_up) */
proctype Context() {
    bit ok;
    do
    :: latch[LCTX] == SET -> break         /* weft__latch_probe */
    :: else ->
        atomic { ok = (latch[LCTX] == UNSET); if :: ok -> latch[LCTX] = SLEEPY :: else fi }
        if
        :: ok ->
            /* lock; CAS SLEEPY -> SLEEPING; ASLEEP; unlock (one step: only
             * a setter that takes the lock looks at this slot) */
            atomic {
                slot_lock[W] == 0 ->
#ifndef CONTEXT_NO_CAS
                ok = (latch[LCTX] == SLEEPY);
#else
                ok = 1;                    /* broken: a plain store of SLEEPING */
#endif
                if
                :: ok -> latch[LCTX] = SLEEPING; word[W] = ASLEEP
                :: else
                fi
            }
            if
            :: ok ->
                do
                :: atomic { word[W] == ASLEEP -> futex_q[W] = 1 };
                   futex_q[W] == 0
                :: word[W] != ASLEEP -> break
                od;
                latch_wake_up(LCTX)
            :: else
            fi
        :: else
        fi;
        ok = 0
    od
}
#endif

#include "shared_procs.pml"

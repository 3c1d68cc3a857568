/* SPDX-License-Identifier: MIT */
/* weft's targeted sleep protocol and its latch protocol, for SPIN.
 * verify/README.md maps every step to src/ and argues every abstraction;
 * verify/run.sh runs the checks.
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
 *                   its latch LCTX through weft__sleep_owner_wait, the latch
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
 *   CONTEXT_NO_CAS   the same in weft__sleep_owner_wait (needs CONTEXT)
 *   OLD_WAKE         weft before e0e49d2: the waker subtracts the sleeper
 *                    from `sleeping` only, and the woken worker stays
 *                    inactive (sleep.c's invariant 1 then fails)
 *   STRICT_INV1      assert invariant 1's inactive <= threads as sleep.c
 *                    states it (fails: README, "Findings", 2)
 *   Suggested change (README, "Findings", 3):
 *   NO_LEAVE_HANDOVER  without weft__sleep_stop_looking's hand-over: a worker
 *                    leaving its loop because its latch is set does not wake
 *                    a sleeper for work left in the injector
 */

#ifndef W
#define W 2
#endif
#ifndef NJOBS
#define NJOBS 2
#endif
#ifndef JEC_MOD
#define JEC_MOD 2
#endif

#ifdef CONTEXT
#define NSLOTS (W + 1)          /* slot W: the context's */
#else
#define NSLOTS W
#endif

/* latch states (latch.h) */
#define UNSET    0
#define SLEEPY   1
#define SLEEPING 2
#define SET      3

/* slot words (sleep.h) */
#define AWAKE  0
#define DROWSY 1
#define ASLEEP 2

/* where a worker is in its search (weft__idle.sleepy and .spent) */
#define SEARCHING 0 /* !sleepy, !spent: search again (leave policy) or get sleepy */
#define AT_SLEEPY 1 /* !sleepy, spent: get sleepy at the next miss             */
#define IS_SLEEPY 2 /* sleepy: fall asleep at the next miss                     */

#define LJOB W       /* latch[LJOB]: the job latch worker 0 waits for first */
#define LCTX (W + 1) /* latch[LCTX]: the context's latch */

/* ---- shared state -------------------------------------------------------- */

/* weft__sleep.counters, one atomic word: JEC | inactive | sleeping */
byte jec = 1;          /* starts odd: nobody sleepy */
byte inactive = 0;
byte sleeping = 0;

/* ghosts, for the invariants */
bit counted[W];        /* worker i's +1 is in `sleeping` */
bit waking[NSLOTS];    /* a waker holding i's lock stored AWAKE, has not uncounted */

/* the injector, as its `length` word: memory's value, and sb = the
 * submitter's store buffer holds its last push (length store + unlock) */
byte length = 0;
bit sb = 0;
bit uf = 0;            /* ghost: memory holds a push whose PushFence has not run */

/* Ghosts for C11 visibility (not used under TSO). A relaxed load of `length`
 * may return a stale value, but not older than the last push that
 * happens-before it. Each process has `kn`: how many of the submitter's
 * pushes happen-before its next step. Knowledge travels along the
 * synchronisation the code has: every counter access is seq-cst (acquire;
 * the counters word only ever changes by RMWs, so every later reader
 * synchronises with every earlier writer: `rel`), the injector lock (`lrel`),
 * and a waker's release store of AWAKE read by the sleeper (`wk`). The model
 * leaves out other synchronisation (the slot locks, futexes), which only
 * makes it allow more stale reads. Knowledge below `pops` means the same as
 * `pops` (those jobs are gone), so a pop raises every value to at least
 * `pops`: equal states get equal ghosts. */
byte pushes = 0;       /* jobs the submitter has pushed */
byte pops = 0;         /* jobs the workers have popped (FIFO: the injector holds pushes pops..) */
byte rel = 0;          /* knowledge released into the counters word */
byte lrel = 0;         /* knowledge released through the injector lock */
byte wk[W];            /* knowledge released with the AWAKE store into word[i] */
byte know[4 + W];      /* each process's knowledge, by _pid (Submitter 0, Setter 1,
                        * Workers 4..); `kn` is the running process's */
#define kn know[_pid]

/* sleep slots */
byte word[NSLOTS];     /* AWAKE / DROWSY / ASLEEP */
byte slot_lock[NSLOTS];/* 0 free, else holder's _pid + 1 */
bit futex_q[NSLOTS];   /* the slot's owner is queued in futex_wait on its word */

/* latches: 0..W-1 the terminate latches, LJOB worker 0's job latch, LCTX */
byte latch[W + 2];

/* the pending count latch (weft_pool_destroy holds one count); its owner is
 * the outside submitter */
byte pending = NJOBS + 1;
byte olatch = UNSET;
bit ofutex_q = 0;

#define MAX(a, b) ((a) > (b) -> (a) : (b))

/* ghost updates: C11 only (G: plain statement list) */
#ifndef TSO
#define G(x) x
#else
#define G(x) skip
#endif

/* a seq-cst load of the counters (acquire) / a read-modify-write of them */
inline cnt_acq() {
    G(kn = MAX(kn, rel))
}
inline cnt_rmw() {
    G(kn = MAX(kn, rel); rel = kn)
}

/* after a pop: knowledge below `pops` is raised to it (same meaning) */
inline normalize() {
    know[0] = MAX(know[0], pops); know[1] = MAX(know[1], pops);
    know[4] = MAX(know[4], pops); know[5] = MAX(know[5], pops);
#if W == 3
    know[6] = MAX(know[6], pops); wk[2] = MAX(wk[2], pops);
#endif
    wk[0] = MAX(wk[0], pops); wk[1] = MAX(wk[1], pops);
    rel = MAX(rel, pops); lrel = MAX(lrel, pops)
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

/* The submitter's locked instructions drain its store buffer (TSO); as with
 * the Memory process, the push is then visible but not yet fenced. */
inline drain_if_submitter() {
    if
    :: _pid == 0 && sb -> length++; sb = 0; G(uf = 1; lrel = pushes)
    :: else
    fi
}

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
        atomic { if :: word[t] == ASLEEP -> word[t] = AWAKE; G(if :: t < W -> wk[t] = kn :: else fi); waking[t] = 1; woke = 1 :: else -> woke = 0 fi }
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

/* The final check (weft__pool_final_check: the injectors; broadcasts are not
 * modelled), a relaxed load of `length`, after the SleepFence.
 * C11 (default): seq-cst fences are totally ordered; if the submitter's
 * PushFence came first, its push is visible here; if ours came first we may
 * miss it (and the submitter's counter read sees us counted). In the model a
 * push stays in the store buffer until its PushFence, so a check before that
 * fence misses it; and one the Memory process flushed early (uf) may be
 * missed too while its fence has not run. Without the SleepFence nothing
 * orders this load but happens-before: like the searches, it may be stale.
 * TSO: the load reads memory; our counting CAS was a locked instruction, so
 * no fence is needed for that (NO_SLEEP_FENCE changes nothing). */
inline fenced_check() {
#if defined(TSO)
    nonempty = (length > 0)
#else
    if
    :: nonempty = (length > 0)
    :: uf && length == 1 -> nonempty = 0
    fi
#endif
}

inline final_check() {
#if defined(NO_FINAL_CHECK)
    nonempty = 0
#elif defined(NO_SLEEP_FENCE) && !defined(TSO)
    if
    :: nonempty = (length > 0)
    :: pops >= kn -> nonempty = 0
    fi
#else
    fenced_check()
#endif
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
            if
            :: length > 0 -> length--; got = 1; G(pops++; kn = MAX(kn, lrel); lrel = kn; normalize())
            :: length == 0
#ifndef TSO
            :: length > 0 && pops >= kn    /* the relaxed is_empty check read a stale 0 */
#endif
            fi
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
            got = 0; more = 0; c_in = 0; c_sl = 0
        }
        if
        :: ok -> n = 1; wake_any()
        :: else
        fi;
        ok = 0; seen = 0;
        /* the job runs; it counts the pending latch down and the last one
         * sets it (set_outside: swap SET, futex-wake if SLEEPING) */
        atomic {
            pending--;
            if
            :: pending == 0 -> old = olatch; olatch = SET
            :: else
            fi
        }
        if
        :: old == SLEEPING -> ofutex_q = 0
        :: else
        fi;
        old = 0;
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
    fi
}

/* ---- the outside thread: submit, then destroy the pool --------------------- */

active proctype Submitter() {
    byte c_in, c_sl, seen, n, i, old, s;
    bit was_empty, woke, ok;

    do
    :: pushes < NJOBS ->
        /* weft__pool_inject: was_empty, a relaxed load (our own buffered
         * store forwards to it) */
        was_empty = (length + sb == 0);
        /* weft__injector_push: the lock is a locked RMW (drains our buffer);
         * the length store and the unlock go to the store buffer */
        atomic { if :: sb -> length++; G(uf = 1; lrel = pushes) :: else fi; sb = 1; pushes++; G(kn = pushes) }
#ifndef NO_PUSH_FENCE
        /* PushFence: drains the store buffer */
        atomic { if :: sb -> length++; sb = 0; G(lrel = pushes) :: else fi; G(uf = 0) }
#endif
        /* new_jobs(s, 1, was_empty): jec_increment_if(s, true) (its CAS,
         * taken only when the JEC is even, is a locked RMW that drains the
         * buffer too), then the wake rule; n = 1, so min(n, sleepers) and
         * min(n - idle, sleepers) are 1; idle = inactive - sleepers is
         * unsigned in C (huge if inactive < sleepers, which invariant 1
         * rules out since e0e49d2). Under the searcher cap (the default) a
         * non-empty queue wakes only when nobody searches, so was_empty
         * does not matter for one job; NO_CAP: Rayon's rule, a non-empty
         * queue always wakes */
        atomic {
            if
            :: jec % 2 == 0 ->
                if :: sb -> length++; sb = 0; G(lrel = pushes) :: else fi; G(uf = 0);
                jec = (jec + 1) % JEC_MOD; cnt_rmw()
            :: else
            fi;
            c_in = inactive; c_sl = sleeping; seen = MASKC;
#ifdef NO_CAP
            ok = (c_sl > 0 && (!was_empty || (c_in >= c_sl && c_in - c_sl < 1)));
#else
            ok = (c_sl > 0 && c_in >= c_sl && c_in - c_sl < 1);
#endif
            c_in = 0; c_sl = 0; was_empty = 0
        }
        if
        :: ok -> n = 1; wake_any()
        :: else
        fi;
        ok = 0; seen = 0
    :: else -> break
    od;

    /* weft_pool_destroy: drop our count of the pending latch (the last one
     * sets it), then wait_outside on it */
    atomic {
        pending--;
        if
        :: pending == 0 -> olatch = SET
        :: else
        fi
    }
    s = olatch;
    do
    :: s == SET -> break
    :: s == UNSET ->
        atomic { if :: olatch == UNSET -> olatch = SLEEPING; s = SLEEPING :: else -> s = olatch fi }
    :: s == SLEEPING ->
        atomic { if :: olatch == SLEEPING -> ofutex_q = 1 :: else fi };   /* futex_wait */
        ofutex_q == 0;
        s = olatch                         /* acquire load */
    od;
    assert(pending == 0 && length == 0 && sb == 0);

    /* stop_workers: set each terminate latch */
    i = 0;
    do
    :: i < W -> set_latch(i, i); i++
    :: else -> break
    od
}

active proctype Setter() {
    byte old, seen;
    bit woke;
#ifndef CONTEXT
    set_latch(LJOB, 0)
#else
    if
    :: set_latch(LJOB, 0); set_latch(LCTX, W)
    :: set_latch(LCTX, W); set_latch(LJOB, 0)
    fi
#endif
}

active proctype Memory() {
end:
    do
    :: atomic { sb -> length++; sb = 0; G(uf = 1; lrel = pushes) }
    od
}

#ifdef CONTEXT
/* weft__context_wait_until with no jobs of its own left: the loop around
 * weft__sleep_owner_wait (get_sleepy, lock, fall_asleep, ASLEEP, unlock,
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

init {
    atomic {
        run Worker(0);
        run Worker(1);
#if W == 3
        run Worker(2);
#endif
#ifdef CONTEXT
        run Context();
#endif
    }
}

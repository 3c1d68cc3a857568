/* SPDX-License-Identifier: MIT */
/* Join frames (src/core/frame.c): weft_join's B waits in
 * the joining function's own frame, linked from the worker's `top`, instead
 * of in a deque slot addressed by an index kept in memory. The owner's fork
 * stores B and the link and reads one word of the worker, `claim`; its pop
 * restores top and reads claim again, behind a compiler barrier only. claim
 * holds three things, changed together by CAS (or a fetch-or of req):
 *
 *   bnd   frames [0, bnd) are not private: published (pushed on the split
 *         deque, where thieves steal them as any job) or taken by force.
 *         Always the oldest: whoever makes a frame non-private makes every
 *         older one so first.
 *   req   a thief found nothing public and asks the owner to publish.
 *   lock  a starving thief is looking at the owner's private frames.
 *
 * Fork: frame fields, then top (release); then claim. The first private
 * frame (its depth == bnd) or a raised bit takes the cold path: wait while
 * a thief looks, a seq-cst fence (the episode's, as the deque's first
 * private push), then publish the oldest private frame if a thief asked, a
 * worker sleeps and none searches, or nothing is published (as the deque's
 * first private push shares when nothing is public; NO_PUBLISH_ALONE checks
 * the protocol without that rule too).
 * Pop: top lowered, light fence, claim read. Private (depth >= bnd) and no
 * bit raised: B runs inline. Otherwise the cold path (a CAS, so locked):
 * wait while a thief looks, lower bnd to this frame if it was not private,
 * publish the oldest private frame older than it if asked; then run B if
 * it is still ours (private, or published and taken back), else wait for
 * its latch.
 * A forced steal: set lock and req by CAS (one thief at a time), heavy
 * fence (membarrier: the owner's buffered stores drain, and its later loads
 * of claim see lock), read top, walk the links to the oldest private frame
 * (depth bnd), and take it by setting bnd past it and clearing lock. The
 * owner's pops before the fence are in the top it read; a pop after it sees
 * lock and waits in its cold path until the look is over; so every frame
 * the walk reads is live, and the one taken stays live until its latch.
 * The owner waits only for a walk down its own chain, never for a thief's
 * job.
 *
 * A look that finds nothing private is spent (the thief sleeps even if
 * private frames come into view, relying on its request) only until the
 * owner answers a request: a publish may go to another thief, and a frame
 * forked after it saw no request (`answered`; deque.pml's answer count).
 *
 * The code finds frame bnd by walking the links from top and comparing
 * frames; a walk that misses it (the owner has unlinked the boundary frame
 * and not yet lowered claim in its pop's cold path) takes nothing, as the
 * model's thief takes nothing when top <= bnd. (Without that, the code took
 * a published frame twice: tests/test_join.c, frames taken.)
 *
 * x86-TSO: the owner's store of top waits in its store buffer and its loads
 * may pass it; a CAS or fence drains it first; the heavy fence drains it at
 * the moment it runs. A frame's fields are written before top in program
 * order, and a thief reads them only after a drain (the heavy fence, or the
 * publishing CAS), so they are modelled as stored at once. Depths are
 * reused as the stack is: a frame popped and a new one forked at the same
 * depth holds another job.
 *
 * One owner, NT thieves, NJOBS forks. The owner forks and pops in any order,
 * and after its last fork stops for good (a long A); or, with WAIT_IN_A,
 * its innermost A waits for the B of a frame of its own (any of those
 * linked, chosen at random), then pops every frame. A waiting owner runs
 * its own work first (frame.c, weft__frame_publish_own): the newest frame
 * of its own that is published and not taken (its deque's pop); else, if
 * frames of its own are private, it publishes every one under its lock and
 * looks again; else it sleeps until the B it waits for has run. NT = 0 is
 * a pool whose other workers are all busy for ever; NO_FORCE, thieves
 * without the process-wide barrier (the POSIX seam), who never take a frame
 * by force. Thieves run worker.c's
 * search as verify/deque.pml models it: steal a published frame, or ask;
 * before sleeping count, fence and look (published frames: search again;
 * private frames: take one by force in the next sweep, unless a spent look
 * still stands); the last searcher leaving while someone sleeps hands over
 * if it sees work. Checks:
 *   - every B runs exactly once (assert);
 *   - no thief sleeps for ever while a frame is left that no running thread
 *     will take, and the owner never waits for ever (invalid end states);
 *     with WAIT_IN_A, that includes a wait for its own B when no thief
 *     helps (NT = 0, or NO_FORCE): no wait depends on another thread's
 *     progress for work the waiting thread owns. NO_SELF_PUBLISH removes
 *     the waiting owner's publish: such a wait then hangs.
 *
 * Stamps (frame.c): a fork writes neither B's group nor its priority, its
 * tag; they are the head's (`tag`) until the owner changes it. The owner
 * changes it (NRETAG times, at any point, flipping one bit: a group or a
 * priority) only after stamping, under the lock, its private frames that
 * have no stamp (from the newest down to the first stamped or non-private
 * one), answering a request as every locked step; it goes there when it
 * sees private frames or the lock (its read of claim may pass its buffered
 * store of top, as a fork's). A frame that leaves its owner, published or
 * taken by force, carries its stamp, or else the head's tag read then;
 * checked: always the tag it was forked under (`forked`). NO_STAMP changes
 * the tag without stamping: a B with another job's tag.
 */

#ifndef NJOBS
#define NJOBS 3
#endif
#define D NJOBS /* depth never exceeds the forks */
#ifndef NT
#define NT 2
#endif
#ifndef NRETAG
#ifdef WAIT_IN_A
#define NRETAG 0 /* frames-wait-retag checks it, with one thief */
#else
#define NRETAG 1
#endif
#endif

byte top = 0;         /* memory's value: frames [0, top) are linked */
bit sbt = 0;          /* the owner's store buffer holds a store of top */
byte sbv = 0;         /* ...of this value */
byte fid[D];          /* the frame at each depth: its B (a job id) */
bit fdone[D];         /* its latch, set by a thief that ran B */
bit inpub[D];         /* published and not yet taken (the split deque) */
byte npub = 0;        /* how many */
byte bnd = 0;         /* claim: frames [0, bnd) are not private */
bit req = 0;          /* claim: a thief asked */
byte lock = 0;        /* claim: the thief (1..NT) looking, 0 none */
byte sleepers = 0;    /* thieves counted asleep */
byte searching = NT;  /* thieves inactive and not asleep */
bit wake = 0;         /* a publish posted jobs while someone slept */
bit answered[NT + 2]; /* a publish since the thief's last private check (an
                         answer counter in the code: it ends a spent look) */
byte taken[NJOBS];
byte ntaken = 0;
bit tag = 0;          /* the head's group and priority, as one bit */
bit forked[D];        /* the tag each frame was forked under (the truth) */
bit stamped[D];       /* the frame carries its tag */
bit stamp[D];         /* ...this one */

inline store_top(v) {
    atomic { if :: sbt -> top = sbv :: else fi; sbt = 1; sbv = v }
}
inline drain() {
    atomic { if :: sbt -> top = sbv; sbt = 0 :: else fi }
}
inline take(j) {
    assert(taken[j] == 0); taken[j]++; ntaken++
}
/* Frame d leaves its owner (frame_tag): its stamp, or the head's tag. */
inline leaves(d) {
    assert((stamped[d] && stamp[d] == forked[d]) || (!stamped[d] && tag == forked[d]))
}

#define PUBLIC (npub > 0)
#define WANTED ((sleepers > 0 && searching == 0) || req)

/* Inside an atomic, after a drain: frames [bnd, limit) become public (the
 * deque's share, a seq-cst CAS), the request and any look are answered,
 * and the post wakes a sleeper if nobody searches. */
inline publish(limit) {
    lo = bnd;
    do
    :: lo < limit -> leaves(lo); inpub[lo] = 1; npub++; lo++
    :: else -> break
    od;
    if
    :: limit > bnd ->
        bnd = limit;
        if :: sleepers > 0 && searching == 0 -> wake = 1 :: else fi
    :: else
    fi;
    req = 0;
    answered[1] = 1;
    answered[NT] = 1
}

/* Every private frame below limit: the waiting owner's publish. */
inline publish_all(limit) {
    publish(limit)
}

/* The oldest private frame only, if there is one below limit (the code's
 * publish: thieves take one at a time, the oldest, and ask again). */
inline publish_one(limit) {
    if
    :: limit > bnd -> publish(bnd + 1)
    :: else -> publish(bnd)
    fi
}

proctype Owner() {
    byte depth = 0, k = 0, d, lo, cb, retags = 0;
    bit cl, cr, nonpriv, got;
#ifdef WAIT_IN_A
    byte target, dd;
    bit waited = 0;
#endif
    do
    :: k < NJOBS ->            /* fork: the frame, then top, then claim */
        d_step { cb = 0; cl = 0; cr = 0; lo = 0; nonpriv = 0; got = 0; d = 0 } /* dead: fewer states */
        fid[depth] = k;
        fdone[depth] = 0;
        forked[depth] = tag;
        stamped[depth] = 0;
        k++;
        store_top(depth + 1);
        depth++;
        atomic { cb = bnd; cl = lock != 0; cr = req };   /* may pass the store */
        if
#ifndef NO_FORK_BITS
        :: depth - 1 == cb || cl || cr ->
#else
        :: depth - 1 == cb ->
#endif
#ifndef NO_EPISODE_FENCE
            drain();           /* the episode's fence */
#endif
            atomic {
                lock == 0;     /* a thief is looking: wait until it is done */
                if
#ifndef NO_PUBLISH_ALONE
                :: npub == 0 || WANTED -> publish_one(depth)
#else
                :: WANTED -> publish_one(depth)
#endif
                :: else
                fi
            }
        :: else
        fi
    :: depth > 0 ->            /* pop */
        d_step { cb = 0; cl = 0; cr = 0; lo = 0; nonpriv = 0; got = 0 }
        depth--;
        d = depth;
        store_top(d);
        atomic { cb = bnd; cl = lock != 0; cr = req };   /* after the light fence */
        if
#ifndef NO_POP_BITS
        :: !cl && !cr && d >= cb -> atomic { take(fid[d]) }
#else
        :: d >= cb -> atomic { take(fid[d]) }
#endif
        :: else ->
            drain();           /* the cold path's CAS is locked */
            atomic {
                lock == 0;     /* a thief is looking: wait until it is done */
                nonpriv = d < bnd;
                if :: nonpriv -> bnd = d :: else fi;
                if :: req -> publish_one(d) :: else fi
            };
            if
            :: nonpriv ->
                atomic { if :: inpub[d] -> inpub[d] = 0; npub--; take(fid[d]); got = 1 :: else -> got = 0 fi };
                if
                :: !got -> fdone[d] == 1   /* wait for the thief */
                :: else
                fi
            :: else -> atomic { take(fid[d]) }
            fi
        fi
    :: retags < NRETAG ->      /* weft__worker_retag_begin, then the change */
        d_step { cb = 0; cl = 0; cr = 0; lo = 0; nonpriv = 0; got = 0 }
        retags++;
        atomic { cb = bnd; cl = lock != 0 };   /* may pass the store of top */
        if
#ifndef NO_STAMP
        :: depth > cb || cl ->
            drain();           /* the lock's CAS */
            atomic {
                lock == 0;     /* a thief is looking: wait until it is done */
                lo = depth;
                do
                :: lo > bnd && !stamped[lo - 1] -> lo--; stamped[lo] = 1; stamp[lo] = tag
                :: else -> break
                od;
                if :: req -> publish_one(depth) :: else fi
            }
#endif
        :: else
        fi;
        tag = 1 - tag
#ifndef WAIT_IN_A
    :: k == NJOBS -> break     /* its A runs for ever */
#else
    :: k == NJOBS && !waited && depth > 0 ->
        /* A waits for the B of frame `target`, running its own work. */
        waited = 1;
        target = 0;
        do
        :: target + 1 < depth -> target++
        :: break
        od;
        do
        :: taken[fid[target]] > 0 -> break /* the latch of A's wait */
        :: else ->
            /* The deque's pop: the newest published frame of its own. */
            atomic {
                dd = depth;
                got = 0;
                do
                :: dd > 0 && !inpub[dd - 1] -> dd--
                :: dd > 0 && inpub[dd - 1] -> dd--; inpub[dd] = 0; npub--; got = 1; break
                :: dd == 0 -> break
                od
            };
            if
            :: got -> atomic { take(fid[dd]); fdone[dd] = 1 } /* B, then its latch */
            :: else ->
                drain();       /* the lock's CAS */
                atomic {
                    lock == 0; /* a thief is looking: wait until it is done */
#ifndef NO_SELF_PUBLISH
                    if
                    :: depth > bnd -> publish_all(depth); got = 1
                    :: else
                    fi
#endif
                };
                if
                :: got         /* pop it next round */
                :: else -> taken[fid[target]] > 0 /* nothing of its own: sleep */
                fi
            fi
        od
    :: k == NJOBS && depth == 0 -> break /* every frame popped */
#endif
    od
}

/* After taking a job, as in verify/deque.pml: the last searcher leaving
 * while one sleeps wakes it if it saw more work, published or private. */
#ifndef NO_PRIVATE_HANDOVER
#define LEFT_PRIVATE (top > bnd)
#else
#define LEFT_PRIVATE 0
#endif
inline found(more) {
    atomic { searching--; last = searching == 0 && sleepers > 0 };
    if
    :: last ->
        atomic {
            if
            :: more || PUBLIC || LEFT_PRIVATE -> wake = 1
            :: else
            fi
        }
    :: else
    fi;
    if
    :: atomic { searching++ }
    :: break
    fi
}

proctype Thief(byte me) {
    byte t, bd, j, dd;
    bit more, force = 0, tried = 0, last, got;
    do
    :: ntaken == NJOBS -> break
    :: else ->
        d_step { t = 0; bd = 0; j = 0; dd = 0; more = 0; got = 0; last = 0 } /* dead: fewer states */
        if
        :: PUBLIC ->           /* a steal from the deque: the oldest */
            atomic {
                dd = 0;
                do
                :: dd < D && !inpub[dd] -> dd++
                :: else -> break
                od;
                if
                :: dd < D -> inpub[dd] = 0; npub--; got = 1
                :: else -> got = 0
                fi
            };
            if
            :: got ->
                j = fid[dd];
                take(j);
                fdone[dd] = 1;
                tried = 0;
                more = PUBLIC;
                found(more)
            :: else
            fi
#ifndef NO_FORCE
        :: !PUBLIC && force -> /* private frames left unanswered: force */
            force = 0;
            /* lock and req by one CAS: a look that finds nothing is spent, and the
             * request makes every later fork or pop publish (deque.pml's argument) */
            atomic { if :: lock == 0 -> lock = me; req = 1; got = 1 :: else -> got = 0 fi };
            if
            :: got ->
#ifndef NO_HEAVY
                drain();       /* weft__fence_heavy: lands between two owner steps */
#endif
                atomic { t = top; bd = bnd };
                if
                :: t > bd ->   /* the oldest private frame is ours: one CAS of claim */
                    atomic { assert(lock == me && bnd == bd); leaves(bd); bnd = bd + 1; lock = 0 };
                    j = fid[bd];   /* live until its latch */
                    take(j);
                    fdone[bd] = 1;
                    tried = 0;
                    more = t > bd + 1;
                    found(more)
                :: else ->     /* nothing private: the look is spent */
                    atomic { lock = 0 }
                fi
            :: else -> tried = 0       /* another thief is looking; the code first
                                          waits for it and tries again a few times,
                                          which is this CAS taken at a later step */
            fi
#else
        :: !PUBLIC && force -> force = 0 /* no barrier: a look takes nothing */
#endif
        :: !PUBLIC && !force ->
            req = 1;           /* ask */
            atomic { sleepers++; searching-- };   /* the counting CAS, then the SleepFence */
            if
            :: PUBLIC ->       /* the final check */
                atomic { sleepers--; searching++ }
#ifndef NO_PRIVATE_CHECK
#ifndef SPENT_ON_ANSWER
            :: !PUBLIC && top > bnd && (!tried || answered[me]) -> /* the private check */
#else
            :: !PUBLIC && top > bnd && !tried -> /* the private check */
#endif
                atomic { sleepers--; searching++; answered[me] = 0 };
                force = 1;
                tried = 1
#endif
            :: else ->
                atomic { wake == 1 || ntaken == NJOBS -> wake = 0; sleepers--; searching++ };
                tried = 0
            fi
        fi
    od
}

init {
    atomic {
        run Owner();
#if NT >= 1
        run Thief(1);
#endif
#if NT >= 2
        run Thief(2);
#endif
    }
}

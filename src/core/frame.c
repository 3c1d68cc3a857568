/* SPDX-License-Identifier: MIT */
/* Join frames: where weft_join keeps B until it runs.
 *
 * A fork writes B (function and argument) and a link to the previous
 * frame into the joining function's own stack frame and makes it the
 * worker's newest (`frames`); the pop after A restores `frames` and reads
 * one word, `claim`, behind a compiler barrier. Both run inline in C callers
 * (include/weft/join.h, weft__join), which enter this file only on the cold
 * paths below; the job header and latch of a frame are written here, when
 * it stops being private. No index in memory, no
 * slot whose address depends on a load: each store's address is the stack
 * pointer or a fixed word of the worker (bench/floor.c measures why that
 * matters). While a frame is private only its thread touches it.
 *
 * claim holds the newest frame that is not private (NULL: all are) and two
 * bits. Non-private frames are always the oldest: whoever makes a frame
 * non-private makes every older one so first. A frame stops being private
 * in two ways:
 *  - published: the owner pushes its oldest private frame on its split
 *    deque as a job, where thieves steal it as any other, when a thief
 *    asked (the REQUEST bit, raised by a search that found nothing public)
 *    or, at the first private frame of an episode, when nothing of its
 *    deque is public or a worker sleeps and none searches (the deque's
 *    first private push shares on the same rule); and every private frame
 *    at once, oldest first, when the owner waits inside A with nothing of
 *    its own left to run (weft__frame_publish_own), so that its wait pops
 *    the newest;
 *  - taken by force: a thief whose final check saw private frames and whose
 *    request stayed unanswered for a whole search (the owner runs a long A)
 *    takes the oldest one itself.
 *
 * The LOCK bit makes the owner's cold paths and a forced thief's look
 * exclusive. A thief sets it (with REQUEST) by CAS, makes the process-wide
 * barrier (fence.h), reads `frames` and walks the links down to the
 * non-private frames. The barrier lands in the owner's program between two
 * steps: its pops before it are in the `frames` the thief reads; a pop or
 * fork after it reads claim afterwards, sees LOCK, goes to its cold path
 * and waits there until the thief is done. So every frame the walk reads is
 * live, and the one it takes (by setting claim past it) stays live until its
 * latch is set: its owner waits for that latch in the cold pop. The owner
 * waits only for a walk down its own links, never for a thief's job.
 *
 * Fork: a fork whose previous frame is the newest non-private one (the
 * first private frame of an episode), or that sees a bit raised, takes the
 * cold path: a seq-cst fence between its store of `frames` and its read of
 * the sleep counters, paired with a sleeper's SleepFence before its look at
 * every worker's frames (private_work.c, weft__private_check), as the deque's episode
 * fence is; then it publishes as above. Later forks of the episode
 * need no fence: the first private frame stays in view until it is popped.
 * Pop: claim shows this frame private and no bit raised: B runs inline.
 * Otherwise the cold path takes the lock, answers a request by publishing
 * the oldest private frame older than this one, and runs B if the frame was
 * still private, or else takes it back from the deque or waits for its
 * latch.
 *
 * verify/frames.pml checks this under x86-TSO: every B runs once, no thief
 * sleeps beside a frame nobody will take, no owner waits for ever; and it
 * rejects the protocol without the barrier, without the pop's look at the
 * bits, without the episode fence, without the sleepers' look at private
 * frames, without the last searcher's hand-over, with a fork that ignores
 * the bits, and with a spent look that outlives an answer.
 *
 * Stamps. A fork writes neither B's group nor its priority: they are the
 * head's, the group and priority of the job that forks (its tag), and they
 * stay the head's while the frame lives unless the owner changes the tag
 * inside A: it runs another job there (in a wait, or a high job a loop
 * gives way to), or enters a scope, a loop, a graph or a priority. Every
 * such change goes through weft__worker_retag_begin (worker.h) first,
 * which, when the owner has private frames, stamps them here under the
 * lock: the group into the frame, the priority and WEFT__FORK_STAMPED into
 * the link's low bits. So (T): the private frames without a stamp are the
 * newest ones, a run down from `frames` (a stamp walks down from the newest
 * to the first stamped or non-private one, and forks add on top), and each
 * was forked under the head's present tag. A frame leaving its owner's
 * hands, published or taken by force, under the lock either way, gets its
 * group from the head when not stamped (frame_tag); after that nobody
 * reads the head for it. The owner reads an unstamped non-private frame's
 * priority from the head at its pop, when the tag is the fork's again:
 * every change inside A is undone before A returns. Only the owner writes
 * a link (the fork, or a stamp under the lock), so a typed task's pop
 * reads its own frame's link freely; a thief writes only the group of the
 * frame it takes. The head's tag is written by its owner only: under the
 * lock or after the stamp (no unstamped private frame is left for a thief
 * to read it for), and a thief that reads it for a frame forked later
 * acquired that frame's link from `frames`, after the tag's write.
 *
 * Memory orders: a frame's fields are published to a thief by the release
 * store of `frames` that links it (or a later one of the same thread) and
 * the thief's acquire load after the barrier, or by the deque's release CAS
 * when published.
 */
#include "core/frame.h"

#include "os/fence.h"
#include "os/thread.h"
#include "core/worker.h"

/* Wait while w's claim is locked, and return it unlocked. Whoever holds
 * the lock holds it for a short, bounded step: the owner's cold path, or a
 * thief's walk down the owner's links (never a job). Relaxed: the caller's
 * CAS acquires. */
static uintptr_t wait_unlocked(weft__worker *w) {
    uintptr_t c = atomic_load_explicit(&w->h.claim, memory_order_relaxed);
    for (unsigned spins = 0; c & WEFT__CLAIM_LOCK; spins++) {
        if (spins < 64)
            weft__cpu_relax();
        else
            weft__os_yield(); /* the holder lost its CPU mid-step */
        c = atomic_load_explicit(&w->h.claim, memory_order_relaxed);
    }
    return c;
}

/* The owner takes the lock. A request raised before is answered by this
 * holder (the caller), so the lock clears it; one raised meanwhile stays.
 * Returns claim as it was. Acquire: pairs with a thief's release of the
 * lock, so the frame it took (its latch's owner) is written. */
static uintptr_t owner_lock(weft__worker *w) {
    for (;;) {
        uintptr_t c = wait_unlocked(w);
        uintptr_t locked = (c & ~(uintptr_t)WEFT__CLAIM_REQUEST) | WEFT__CLAIM_LOCK;
        if (atomic_compare_exchange_weak_explicit(&w->h.claim, &c, locked, memory_order_acquire,
                                                  memory_order_relaxed))
            return c;
    }
}

/* Release the lock with bnd as the newest non-private frame, keeping a
 * request raised while it was held. Release: the links and frames written
 * under the lock, for the next holder and for thieves that steal what was
 * published. */
static void owner_unlock(weft__worker *w, weft__frame *bnd) {
    uintptr_t c = atomic_load_explicit(&w->h.claim, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&w->h.claim, &c,
                                                  (uintptr_t)bnd | (c & WEFT__CLAIM_REQUEST),
                                                  memory_order_release, memory_order_relaxed)) {
    }
}

/* A request answered: thieves whose forced look was spent on this worker's
 * request look again (private_work.c, weft__private_check). Counted with the deque's
 * answers, whose reason for its orders holds here too. */
static void count_answer(weft__worker *w) {
    weft__deque_count_answer(&w->deques[WEFT_PRIORITY_NORMAL]);
}

static bool stamped(const weft__frame *f) {
    return f->fork.prev & WEFT__FORK_STAMPED;
}

/* B's argument: the frame itself where its fork marked it so (a typed
 * task's, join.h) and wrote no arg. The mark is the fork's, in the link's
 * third bit, which no stamp touches; only whoever runs B reads it. */
static void *frame_arg(weft__frame *f) {
    return (f->fork.prev & WEFT__FORK_SELF) ? (void *)f : f->fork.arg;
}

/* The priority f was forked at, for its owner (see "Stamps"). */
static weft_priority frame_prio(const weft__worker *w, const weft__frame *f) {
    return stamped(f) ? (weft_priority)(f->fork.prev & 1) : (weft_priority)w->h.prio;
}

/* Under owner's lock, f leaving its owner's hands: its group into the
 * frame (from the head unless stamped: invariant T); returns its priority.
 * The link stays the owner's to write. */
static weft_priority frame_tag(weft__frame *f, const weft__worker *owner) {
    if (!stamped(f))
        f->fork.group = owner->h.group;
    return frame_prio(owner, f);
}

/* A frame's B run by whoever took it (a thief, or the owner from its
 * deque): in the group it was forked in; then its latch, last (the frame may
 * be gone after that: its owner waits for it). */
static weft__frame *frame_of(weft__job *job) {
    return (weft__frame *)((char *)job - offsetof(weft__frame, job));
}

static void frame_execute(weft__job *job) {
    weft__frame *f = frame_of(job);
    weft__worker_run_and_set(f->fork.fn, frame_arg(f), f->fork.group, &f->done);
}

weft__frame *weft__frame_of_job(weft__job *job) {
    return job->execute == frame_execute ? frame_of(job) : NULL;
}

/* B as a job of the owner's pool, for whoever runs it elsewhere: its latch
 * wakes the owner; returns its priority. Written by the owner before
 * publishing, or by the forcing thief while the frame is live and the owner
 * does not read these fields; the fork leaves them alone. Relaxed latch state: published with the
 * job, by the deque's release CAS or the forcing thief's release of claim. */
static weft_priority make_job(weft__frame *f, weft__worker *owner) {
    weft_priority p = frame_tag(f, owner);
    f->job.execute = frame_execute;
    atomic_store_explicit(&f->done.state, WEFT__LATCH_UNSET, memory_order_relaxed);
    f->done.owner = owner->index;
    f->done.pool = owner->pool;
    return p;
}

/* Under the owner's lock: make f, a private frame whose older frames are
 * not private, a job on w's deque of its priority and share it. False if the
 * deque cannot grow: f stays private, as a job a full deque cannot take. */
static bool push_frame(weft__worker *w, weft__frame *f) {
    weft_priority p = make_job(f, w);
    if (weft__deque_push(&w->deques[p], &f->job) != 0)
        return false;
    weft__worker_offer(w, &w->deques[p]); /* share, and wake a sleeper if needed */
    return true;
}

/* Under the owner's lock: publish the oldest private frame below newest
 * (newest included) and above bnd, the largest piece of work; thieves that
 * want more ask again. Returns the newest frame that is now not private:
 * bnd if there was none, or the deque cannot grow. */
static weft__frame *publish(weft__worker *w, weft__frame *newest, weft__frame *bnd) {
    if (newest == bnd)
        return bnd;
    weft__frame *oldest = newest;
    while (weft__frame_prev(oldest) != bnd)
        oldest = weft__frame_prev(oldest);
    return push_frame(w, oldest) ? oldest : bnd;
}

/* Under the owner's lock: publish every private frame from newest down to
 * bnd, oldest first, so that the owner's next pop (LIFO) takes newest's B
 * and thieves (FIFO) the oldest. The links run from newest to oldest, so
 * each walk down keeps the last RING frames it passed, the oldest private
 * ones, and pushes them from the bottom up; a chain of n frames costs n^2 /
 * RING steps, in a wait that found nothing else to run. Returns the newest
 * frame now not private (newest, unless the deque cannot grow). */
static weft__frame *publish_every(weft__worker *w, weft__frame *newest, weft__frame *bnd) {
    enum { RING = 32 };
    while (bnd != newest) {
        weft__frame *ring[RING];
        unsigned n = 0;
        for (weft__frame *f = newest; f != bnd; f = weft__frame_prev(f))
            ring[n++ % RING] = f;
        for (unsigned i = 0; i < n && i < RING; i++) {
            weft__frame *f = ring[(n - 1 - i) % RING]; /* the oldest left */
            if (!push_frame(w, f))
                return bnd;
            bnd = f;
        }
    }
    return bnd;
}

/* A typed task's serial head (join.h, weft__serial_head_init): outside every
 * pool, its claim word names the head itself, never a frame; no thread but
 * its owner knows it. Relaxed: the owner's own word, or a worker's, whose
 * claim names a frame on a stack, never the worker. */
static bool is_serial(struct weft__worker_head *h) {
    uintptr_t c = atomic_load_explicit(&h->claim, memory_order_relaxed);
    return weft__claim_frame(c) == (weft__frame *)h;
}

/* used: frame_keep.c's entry calls it from asm alone. */
__attribute__((used)) void weft__join_fork_cold(struct weft__worker_head *h,
                                                struct weft__join_frame *f) {
    if (WEFT__UNLIKELY(is_serial(h)))
        return; /* B stays in the frame; the pop runs it */
    weft__worker *w = (weft__worker *)h;
    weft__frame *fr = weft__frame_of(f);
    /* The episode's fence: our store of frames, then the counters; a
     * sleeper's count, then its SleepFence, then its look at frames. */
    weft__fence_seq_cst();
    /* Relaxed: ordered by the fence; the lock's CAS decides. */
    uintptr_t c = atomic_load_explicit(&w->h.claim, memory_order_relaxed);
    weft__deque *d = &w->deques[frame_prio(w, fr)];
    if (!(c & WEFT__CLAIM_BITS) && !weft__deque_public_empty(d) &&
        !weft__sleep_wants_work(&w->pool->sleep))
        return; /* fr stays private: the episode's later frames need no fence */
    weft__debug_yield();
    c = owner_lock(w);
    weft__frame *bnd = weft__claim_frame(c);
    bool asked = c & WEFT__CLAIM_REQUEST;
    /* Published when asked, when a sleeper needs it, or when nothing of
     * ours is public: a thief then takes the episode's first frame without
     * asking and without a barrier, as the deque's first private push. */
    if (asked || weft__deque_public_empty(d) || weft__sleep_wants_work(&w->pool->sleep))
        bnd = publish(w, fr, bnd);
    if (asked)
        count_answer(w);
    owner_unlock(w, bnd);
}

/* fr is not private: run what A left on our deque until we meet fr's B
 * (published and not stolen), or wait for its latch. A latch already set
 * (B ran in a wait inside A: weft__frame_publish_own) ends it at once: what
 * is left on the deque is older work, not this join's. */
static void finish(weft__worker *w, weft__frame *fr) {
    weft__job *job;
    /* The probe acquires: B's writes, wherever it ran, before the join
     * returns (weft.h, weft_join's memory). */
    while (!weft__latch_probe(&fr->done) &&
           (job = weft__worker_pop_prio(w, frame_prio(w, fr))) != NULL) {
        weft__stat_add(&w->stats.jobs, 1);
        if (job == &fr->job) {
            fr->fork.fn(frame_arg(fr));
            return;
        }
        weft__job_execute(job); /* left behind by A (weft_spawn), or an older frame's B */
    }
    weft__worker_wait_until(w, &fr->done);
}

void weft__join_pop_cold(struct weft__worker_head *h, struct weft__join_frame *f) {
    weft__frame *fr = weft__frame_of(f);
    if (WEFT__UNLIKELY(is_serial(h))) {
        fr->fork.fn(frame_arg(fr)); /* B, here: no thread can have taken it */
        return;
    }
    weft__worker *w = (weft__worker *)h;
    uintptr_t c = owner_lock(w);
    weft__frame *bnd = weft__claim_frame(c);
    bool ours = bnd != fr; /* bnd is fr or older: fr was unlinked last */
    if (!ours)
        bnd = weft__frame_prev(fr); /* every older frame is not private either */
    if (c & WEFT__CLAIM_REQUEST) {
        bnd = publish(w, weft__frame_prev(fr), bnd);
        count_answer(w);
    }
    owner_unlock(w, bnd);
    if (ours) {
        fr->fork.fn(frame_arg(fr)); /* still private: a call, as on the fast path */
    } else {
        finish(w, fr);
    }
}

/* Layout 2's names (join.h), exported for binaries built against 0.3.0 to
 * 0.3.3 (no header declares them now): the same paths, as their frames
 * never carry the self mark, the one change since. Calls, not aliases,
 * which not every object format has. */
#ifdef WEFT__JOIN_FENCE_LIGHT
#define LAYOUT2(name) name##_2m
#else
#define LAYOUT2(name) name##_2s
#endif
#define LAYOUT2_PATH(old, now)                                                                     \
    WEFT_API void old(struct weft__worker_head *h, struct weft__join_frame *f);                    \
    void old(struct weft__worker_head *h, struct weft__join_frame *f) {                            \
        now(h, f);                                                                                 \
    }
LAYOUT2_PATH(LAYOUT2(weft__join_fork_cold), weft__join_fork_cold)
LAYOUT2_PATH(LAYOUT2(weft__join_pop_cold), weft__join_pop_cold)

/* A thread that waits inside A (weft_event_wait, a scope's end, weft_run
 * into another pool) may wait for what one of its own private frames' B
 * does; nobody else may ever take that B (every other worker runs a long
 * job; callers and contexts never take a frame by force; without the
 * process-wide barrier nobody does). So a waiting thread that found nothing
 * of its own to run publishes every private frame and pops the newest,
 * the sibling of the innermost waiting A, as it pops a job of its deque:
 * a wait never depends on another thread for work that the waiting thread
 * owns. The newest first, as a serial run would take them (Rayon's and
 * oneTBB's waits pop their own deque alike); a B that waits for what its
 * own A does after a wait is then a cycle (weft.h, weft_join). The older
 * frames go public with it, for thieves. (In a join's wait for a stolen B
 * no frame is private: every frame older than a non-private one is
 * non-private too.) Under the owner's lock, as a pop's answer to a request;
 * a request raised meanwhile is answered with it. Relaxed load of frames:
 * the owner's own word. */
bool weft__frame_publish_own(weft__worker *w) {
    if (!weft__frame_private_in_view(w))
        return false;
    uintptr_t c = owner_lock(w);
    weft__frame *bnd = weft__claim_frame(c);
    weft__frame *top = weft__frame_of(atomic_load_explicit(&w->h.frames, memory_order_relaxed));
    weft__frame *now = publish_every(w, top, bnd);
    if (c & WEFT__CLAIM_REQUEST)
        count_answer(w);
    owner_unlock(w, now);
    return now != bnd;
}

/* Stamps (see the top): under the lock, from the newest frame down to the
 * first stamped or non-private one; a request raised before is answered,
 * as the lock cleared it. Relaxed load of frames: the owner's own word. */
void weft__frame_stamp_private(weft__worker *w) {
    uintptr_t c = owner_lock(w);
    weft__frame *bnd = weft__claim_frame(c);
    weft__frame *top = weft__frame_of(atomic_load_explicit(&w->h.frames, memory_order_relaxed));
    for (weft__frame *f = top; f != bnd && !stamped(f); f = weft__frame_prev(f)) {
        f->fork.group = w->h.group;
        f->fork.prev |= (uintptr_t)w->h.prio | WEFT__FORK_STAMPED;
    }
    if (c & WEFT__CLAIM_REQUEST) {
        bnd = publish(w, top, bnd);
        count_answer(w);
    }
    owner_unlock(w, bnd);
}

void weft__frame_request(weft__worker *v) {
    /* Relaxed: a hint, as the deque's movesplit; checked before written so
     * the line stays shared while thieves keep asking. Not filtered by a
     * look at v's frames: that word is on the line every fork writes. */
    if (!(atomic_load_explicit(&v->h.claim, memory_order_relaxed) & WEFT__CLAIM_REQUEST))
        atomic_fetch_or_explicit(&v->h.claim, WEFT__CLAIM_REQUEST, memory_order_relaxed);
}

bool weft__frame_private_in_view(weft__worker *v) {
    /* Relaxed: a hint for a sleeper's look after its SleepFence. */
    uintptr_t c = atomic_load_explicit(&v->h.claim, memory_order_relaxed);
    return (weft__frame *)atomic_load_explicit(&v->h.frames, memory_order_relaxed) !=
           weft__claim_frame(c);
}

weft__steal_result weft__frame_steal(weft__worker *v, weft__job **job, bool *more,
                                     weft_priority *prio) {
    if (!weft__fence_heavy_available())
        return WEFT__STEAL_EMPTY; /* no barrier, no forced steal (fence.h) */
    /* Lock and request in one CAS: if the look finds nothing, the request
     * makes the owner's next fork or pop publish (worker.c, a spent sweep).
     * A held lock is waited for, not reported as a lost race: its holder's
     * step is short, and a thief that went back to its search loop instead
     * came straight back here (its private check still sees the frames),
     * a storm of sweeps that starved the holder of its CPU in an
     * oversubscribed pool. The CAS fails on the owner's lock or another
     * thief's request too; a few tries, then the race is lost. Acquire: the
     * owner's last unlock, so the links it rewrote are seen. */
    uintptr_t c;
    for (unsigned tries = 0;; tries++) {
        c = wait_unlocked(v);
        if (!weft__frame_private_in_view(v))
            return WEFT__STEAL_EMPTY;
        if (atomic_compare_exchange_strong_explicit(&v->h.claim, &c,
                                                    c | WEFT__CLAIM_LOCK | WEFT__CLAIM_REQUEST,
                                                    memory_order_acquire, memory_order_relaxed))
            break;
        if (tries == 3)
            return WEFT__STEAL_RETRY;
    }
    weft__debug_yield();
    weft__fence_heavy(); /* against the owner's pops and forks (see the top) */
    weft__debug_yield();
    /* Acquire: pairs with the release stores of frames, so the fields of
     * every frame linked below it are seen. */
    weft__frame *top = weft__frame_of(atomic_load_explicit(&v->h.frames, memory_order_acquire));
    weft__frame *bnd = weft__claim_frame(c), *oldest = NULL, *f = top;
    for (; f && f != bnd; f = weft__frame_prev(f))
        oldest = f;
    if (f != bnd || !oldest) {
        /* Nothing private; or the walk missed bnd: the owner has unlinked
         * that frame and not yet lowered claim past it (its pop's cold path
         * will, once we let go), so every frame we walked is not private
         * and none may be taken. That race is lost, not spent. Release:
         * nothing written; the owner may go on. */
        atomic_fetch_and_explicit(&v->h.claim, ~(uintptr_t)WEFT__CLAIM_LOCK, memory_order_release);
        return f != bnd ? WEFT__STEAL_RETRY : WEFT__STEAL_EMPTY;
    }
    *prio = make_job(oldest, v);
    *more = oldest != top;
    weft__debug_yield();
    /* Release: the job's fields, before the owner can see it taken. Other
     * thieves may raise the request meanwhile; nobody else changes claim. */
    uintptr_t cur = atomic_load_explicit(&v->h.claim, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&v->h.claim, &cur,
                                                  (uintptr_t)oldest | (cur & WEFT__CLAIM_REQUEST),
                                                  memory_order_release, memory_order_relaxed)) {
    }
    *job = &oldest->job;
    return WEFT__STEAL_OK;
}

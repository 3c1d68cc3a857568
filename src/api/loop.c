/* SPDX-License-Identifier: MIT */
/* weft_for and weft_reduce: parallel loops as trees of weft_join calls.
 *
 * Both split a range the same way. grain 0 is Rayon's adaptive splitter: a
 * piece may split `splits` more times (initially the thread count, halved
 * at each split), and a piece that was stolen (it runs on another thread
 * than the one that split it) gets its budget reset to the thread count,
 * because a steal means some thread ran out of work. Few pieces where
 * nobody steals, more where load is uneven. The thread count is the pool's
 * workers, and the caller or context that runs the root when it takes part:
 * it works on the loop beside the workers (a pool sized for it has one
 * worker fewer). grain g > 0 is deterministic: a piece splits in halves
 * while it has at least 2g indices, whoever runs it, so the tree depends
 * only on the range and the grain.
 *
 * A leaf (grain 0) runs its range in steps (LEAF_STEPS a leaf, none longer
 * than a LOOP_STEPS-th of the loop's range), and before each step
 * after the first it looks whether a thief asked this thread for work: a
 * search that found nothing public raises the request bit of every thread it
 * swept (worker.c, steal_work; frame.c). If one did, the rest of the leaf
 * becomes a piece with the thread count as its budget, whose first fork
 * answers the request (frame.c's cold fork): it publishes the thread's
 * oldest private frame, the rest's right half unless an older one waits, for
 * any thief to take. So a leaf is not the unit of balance: a thread that
 * falls behind, because its indices cost more, or another process shares
 * its CPU, or it is a caller that never steals, hands on what it has not
 * begun. The splitter decides how far to split before anyone asks; the
 * steps answer when somebody does (oneTBB's partitioner splits on demand as
 * well). Every searching thief asks every busy thread, so near a loop's end
 * steps get short: a body whose every call costs much wants a grain. grain
 * g > 0 keeps its fixed pieces, each run in one call.
 *
 * weft_reduce folds each leaf into an accumulator and combines siblings left
 * into right, in index order, so an associative combine need not commute,
 * and with grain > 0 a floating-point reduction gives the same bits on every
 * run and every thread count. A left child writes into its parent's
 * accumulator; only right children need one of their own, on the stack when
 * it is small.
 *
 * A loop is a cancellation group (group.h): a piece that finds it cancelled
 * returns at once, neither splitting nor calling the body, and marks its
 * result ECANCELED so that no accumulator it left unset is combined.
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "core/current.h"
#include "core/worker.h"
#include "core/priority.h"
#include "os/error.h"

/* Accumulators up to this size live in the splitting frame (one per level of
 * the tree, at most 64 levels, and one per rest a leaf handed on, at most
 * one per level too: a rest always splits); larger ones are allocated. */
#define REDUCE_STACK_BYTES 256

typedef struct piece piece;

typedef struct loop {
    size_t grain;
    size_t step_max; /* grain 0: no leaf step is longer (LOOP_STEPS) */
    unsigned threads;
    void (*leaf)(piece *p);                      /* a leaf's first step (weft_reduce: init too) */
    void (*step)(piece *p);                      /* a leaf's later step */
    void (*split)(piece *p, piece *l, piece *r); /* l and r in parallel; l NULL: r is a
                                                    leaf's rest, after p's steps */
    weft_range_fn *body;                         /* weft_for */
    void *arg;                                   /* weft_for */
    const weft_reducer *reducer;                 /* weft_reduce */
    weft__group group;                           /* set up by the root piece */
} loop;

struct piece {
    loop *loop;
    size_t begin, end;
    unsigned splits; /* adaptive budget */
    int creator;     /* thread that made this piece */
    void *acc;       /* weft_reduce: where this piece's result goes */
    int err;         /* weft_reduce: ENOMEM from this subtree */
    bool gave_way;   /* a high-priority job ran before this piece began */
};

static bool should_split(piece *p) {
    size_t len = p->end - p->begin;
    const loop *l = p->loop;
    if (l->grain)
        return len / 2 >= l->grain;
    if (len < 2)
        return false;
    if (weft_thread_index() != p->creator) { /* stolen */
        p->splits = p->splits / 2 > l->threads ? p->splits / 2 : l->threads;
        return true;
    }
    if (p->splits == 0)
        return false;
    p->splits /= 2;
    return true;
}

/* Steps a leaf runs in: a thief's request waits at most an eighth of a leaf
 * for an answer, and the body's fixed cost (a call and its own set-up) is
 * paid eight times a leaf, which the splitter makes a share of the range
 * several times the body's cost unless the range is a few indices per
 * thread, where a step is an index. */
#define LEAF_STEPS 8

/* And no step is longer than a LOOP_STEPS-th of the loop's range. Few threads
 * over a large range get few, long leaves (a quarter of the range each on
 * two), and a request's wait should not grow with the leaf it meets: an
 * uneven loop's costly leaf answered its thieves late. Bounded by a share
 * of the loop, the wait is the same however the splitter cut it. Where many
 * threads cut short leaves, an eighth of a leaf is the tighter bound, as
 * before: finer steps there only multiplied the answers and the splits they
 * cause. A loop pays at most LOOP_STEPS more calls of its body, and one more
 * a leaf where its steps' ends are aligned (CUT_ALIGN_MIN). */
#define LOOP_STEPS 128

/* n / d rounded up, without the overflow of (n + d - 1) / d. */
static size_t div_up(size_t n, size_t d) {
    return n / d + (n % d != 0);
}

/* Cuts (grain 0: a split's middle, the end of a leaf's step) fall on
 * multiples of CUT_ALIGN indices where that moves them little. Most loops
 * index an array from a cache-line-aligned base, and a piece that starts
 * mid-line makes every vector access of its body straddle lines or run
 * unaligned, and shares its first line with the thread that ran the indices
 * before it; a step's bound, a share of the range, is rarely a multiple of
 * anything (docs/performance.md: "Cuts on aligned indices"). 64 indices
 * are a 64-byte line of bytes, and of anything two bytes wide or wider at
 * least the pair of lines the adjacent-line prefetcher fetches together
 * (WEFT__CACHELINE). The index, not its offset from the range's begin, is
 * aligned: `a[i]` is aligned where i is. */
#define CUT_ALIGN 64

/* A cut moves down to the multiple at or below it where the part it ends (a
 * step, or a split's left half) holds at least CUT_ALIGN_MIN indices: by less
 * than a 64th of that part. Down, not to the nearest, so a step keeps its
 * bounds (an eighth of its leaf, a 128th of the loop). What the steps give up
 * makes at most one step more: a leaf is at most half the range (the root
 * always splits), so it has at most 64 steps of a 128th, each giving up less
 * than CUT_ALIGN, together less than CUT_ALIGN_MIN, which one step holds (a
 * step whose end was aligned is at least that long). So every call of the
 * body on CUT_ALIGN_MIN indices or more ends on a multiple of CUT_ALIGN, or
 * at the range's end (weft.h). */
#define CUT_ALIGN_MIN (64 * CUT_ALIGN)

/* Where to cut at `at` a part that begins at `begin`. An aligned cut stays
 * above begin (it moves by less than CUT_ALIGN, and at is at least
 * CUT_ALIGN_MIN past begin) and at or below at, so inside whatever range at
 * was a cut of. */
static size_t cut_at(size_t begin, size_t at) {
    if (at - begin < CUT_ALIGN_MIN)
        return at;
    size_t cut = at & ~(size_t)(CUT_ALIGN - 1);
    assert(cut > begin && cut <= at);
    return cut;
}

/* Has a thief asked w for work since w last answered? Relaxed: a hint,
 * which a thief raises without ordering anything; a stale request costs a
 * split, a missed one a step's delay. */
static bool work_asked_of(weft__worker *w) {
    return atomic_load_explicit(&w->h.claim, memory_order_relaxed) & WEFT__CLAIM_REQUEST;
}

static void piece_run(void *arg);

static void leaf_run(piece *p) {
    loop *l = p->loop;
    weft__worker *w = weft__current_worker(); /* NULL: the root runs outside any pool */
    size_t end = p->end, len = end - p->begin;
    size_t step = div_up(len, LEAF_STEPS);
    if (step > l->step_max)
        step = l->step_max;
    if (l->grain || !w) {
        l->leaf(p);
        return;
    }
    p->end = cut_at(p->begin, p->begin + step);
    l->leaf(p);
    while (p->end < end) {
        /* A thief's request, or high-priority work that this thread should
         * run first: the rest becomes a piece, which answers the one at
         * its first fork and gives way to the other at its start. */
        if (work_asked_of(w) || weft__worker_should_give_way(w)) {
            piece rest = {l, p->end, end, l->threads, weft_thread_index(), NULL, 0, false};
            l->split(p, NULL, &rest);
            return;
        }
        /* Cancelled: the rest is not started, as a piece would not be
         * (reduce_split's combine sees the error). */
        if (WEFT__UNLIKELY(weft__group_cancelled(&l->group))) {
            p->err = ECANCELED;
            return;
        }
        p->begin = p->end;
        p->end = end - p->begin > step ? cut_at(p->begin, p->begin + step) : end;
        l->step(p);
    }
}

/* One high-priority job, where a piece gives way to it (worker.c). */
static void give_way(void *w) {
    weft__worker_give_way(w);
}

static void piece_run(void *arg) {
    piece *p = arg;
    if (WEFT__UNLIKELY(weft__group_cancelled(&p->loop->group))) {
        p->err = ECANCELED;
        return;
    }
    /* High-priority work waits: run one job of it first, with p forked
     * beside it (worker.c, "Normal work gives way"). Once a piece: with
     * high jobs streaming in, the loop still moves a piece or a step
     * between two of them, and the stack stays a frame deep per piece. */
    weft__worker *w = weft__current_worker();
    if (!p->gave_way && weft__worker_should_give_way(w)) {
        p->gave_way = true;
        weft_join(give_way, w, piece_run, p);
        return;
    }
    if (!should_split(p)) {
        leaf_run(p);
        return;
    }
    int me = weft_thread_index();
    size_t mid = p->begin + (p->end - p->begin) / 2;
    if (!p->loop->grain) /* grain g > 0: exact halves, no piece under g */
        mid = cut_at(p->begin, mid);
    piece left = {p->loop, p->begin, mid, p->splits, me, p->acc, 0, false};
    piece right = {p->loop, mid, p->end, p->splits, me, NULL, 0, false};
    p->loop->split(p, &left, &right);
}

/* The loop's group nests in the group of the thread that runs the root: the
 * caller's own (weft_run keeps it, inline or injected). */
static void root_run(void *arg) {
    piece *root = arg;
    weft__worker *w = weft__current_worker();
    weft__group *outer = weft__worker_enter_new(w, &root->loop->group);
    root->creator = weft_thread_index();
    if (w && w->is_context) /* a caller slot or a context: one thread more */
        root->splits = ++root->loop->threads;
    piece_run(root);
    weft__worker_leave(w, outer);
}

/* ---- weft_for -------------------------------------------------------------- */

static void for_leaf(piece *p) {
    p->loop->body(p->begin, p->end, p->loop->arg);
}

/* r, and l beside it (NULL: none, r is a leaf's rest). */
static void run_halves(piece *l, piece *r) {
    if (l)
        weft_join(piece_run, l, piece_run, r);
    else
        piece_run(r);
}

static void for_split(piece *p, piece *l, piece *r) {
    (void)p;
    run_halves(l, r);
}

void weft_for(weft_pool *pool, size_t begin, size_t end, size_t grain, weft_range_fn *body,
              void *arg) {
    if (!body) {
        assert(!"weft_for: body is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    if (begin >= end)
        return;
    pool = weft__pool_resolve(pool);
    if (!pool) {
        body(begin, end, arg);
        return;
    }
    loop l = {.grain = grain,
              .step_max = div_up(end - begin, LOOP_STEPS),
              .threads = pool->threads,
              .leaf = for_leaf,
              .step = for_leaf,
              .split = for_split,
              .body = body,
              .arg = arg};
    piece root = {.loop = &l, .begin = begin, .end = end, .splits = l.threads};
    weft_run(pool, root_run, &root);
}

/* ---- weft_reduce ------------------------------------------------------------- */

static void reduce_step(piece *p) {
    const weft_reducer *r = p->loop->reducer;
    r->fold(p->begin, p->end, p->acc, r->arg);
}

static void reduce_leaf(piece *p) {
    const weft_reducer *r = p->loop->reducer;
    r->init(p->acc, r->arg);
    reduce_step(p);
}

/* r gets an accumulator of its own and is combined into p's after it, which
 * holds the lower indices: l's, or the leaf p's own steps'. */
static void reduce_split(piece *p, piece *l, piece *r) {
    const weft_reducer *red = p->loop->reducer;
    alignas(max_align_t) unsigned char small[REDUCE_STACK_BYTES];
    r->acc = red->size <= sizeof small ? (void *)small : malloc(red->size);
    if (!r->acc) {
        p->err = ENOMEM;
        return;
    }
    run_halves(l, r);
    p->err = l && l->err ? l->err : r->err;
    if (!p->err)
        red->combine(p->acc, r->acc, red->arg); /* left (+) right: index order */
    if (r->acc != small)
        free(r->acc);
}

/* weft_reduce's EINVAL, naming the argument or field; else 0. */
static int check_reducer(const weft_reducer *r, const void *result) {
    if (!r)
        return weft__error_set(EINVAL, "reducer is NULL");
    if (!r->size)
        return weft__error_set(EINVAL, "reducer->size is 0");
    const char *null = !r->init ? "init" : !r->fold ? "fold" : !r->combine ? "combine" : NULL;
    if (null)
        return weft__error_set(EINVAL, "reducer->%s is NULL", null);
    if (!result)
        return weft__error_set(EINVAL, "result is NULL");
    return 0;
}

/* weft_reduce's other errors, with their messages: an ENOMEM a piece met on
 * whichever thread ran it, or a cancel, is set on the caller's thread. */
static int reduce_error(int err, size_t size) {
    if (err == ENOMEM)
        return weft__error_set(err, "out of memory for an accumulator of %zu bytes", size);
    return weft__error_set(err, "the reduction, or a group around it, was cancelled");
}

int weft_reduce(weft_pool *pool, size_t begin, size_t end, size_t grain,
                const weft_reducer *reducer, void *result) {
    int err = check_reducer(reducer, result);
    if (err)
        return err;
    if (begin >= end) {
        /* Nothing to run, but the reduction belongs to the caller's group
         * as a non-empty one does: cancelled, it answers so. */
        if (weft__group_cancelled(weft__current_group()))
            return reduce_error(ECANCELED, reducer->size);
        reducer->init(result, reducer->arg); /* the identity */
        return 0;
    }
    if (weft__pool_lookup(pool, &pool) == ECHILD)
        return ECHILD;
    loop l = {.grain = grain,
              .step_max = div_up(end - begin, LOOP_STEPS),
              .threads = pool ? pool->threads : 1,
              .leaf = reduce_leaf,
              .step = reduce_step,
              .split = reduce_split,
              .reducer = reducer};
    /* The root's accumulator is a copy: on ENOMEM, result stays untouched. */
    alignas(max_align_t) unsigned char small[REDUCE_STACK_BYTES];
    void *acc = reducer->size <= sizeof small ? (void *)small : malloc(reducer->size);
    if (!acc)
        return reduce_error(ENOMEM, reducer->size);
    piece root = {.loop = &l, .begin = begin, .end = end, .splits = l.threads, .acc = acc};
    if (pool)
        weft_run(pool, root_run, &root);
    else
        root_run(&root); /* no default pool: the calling thread does it all */
    /* A cancel too late to skip any piece still counts: whoever cancelled
     * asked for no result, and the answer must not depend on the race. */
    if (root.err || weft__group_cancelled(&l.group))
        err = reduce_error(root.err ? root.err : ECANCELED, reducer->size);
    if (!err)
        memcpy(result, acc, reducer->size);
    if (acc != small)
        free(acc);
    return err;
}

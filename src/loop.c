/* weft_for: a parallel loop as a tree of weft_join calls.
 *
 * grain 0 is Rayon's adaptive splitter: a piece may split `splits` more times
 * (initially the pool's thread count, halved at each split), and a piece that
 * was stolen (it runs on another thread than the one that split it) gets its
 * budget reset to the thread count, because a steal means some thread ran out
 * of work. Few pieces where nobody steals, more where load is uneven.
 *
 * grain g > 0 is deterministic: a piece splits in halves while it has at
 * least 2g indices, whoever runs it.
 */
#include "pool.h"

typedef struct loop {
    weft_range_fn *body;
    void *arg;
    size_t grain;
    unsigned threads;
} loop;

typedef struct piece {
    const loop *loop;
    size_t begin, end;
    unsigned splits; /* adaptive budget */
    int creator;     /* thread that made this piece */
} piece;

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

static void piece_run(void *arg) {
    piece *p = arg;
    if (!should_split(p)) {
        p->loop->body(p->begin, p->end, p->loop->arg);
        return;
    }
    int me = weft_thread_index();
    size_t mid = p->begin + (p->end - p->begin) / 2;
    piece left = {p->loop, p->begin, mid, p->splits, me};
    piece right = {p->loop, mid, p->end, p->splits, me};
    weft_join(piece_run, &left, piece_run, &right);
}

static void root_run(void *arg) {
    piece *root = arg;
    root->creator = weft_thread_index();
    piece_run(root);
}

void weft_for(weft_pool *pool, size_t begin, size_t end, size_t grain, weft_range_fn *body,
              void *arg) {
    if (begin >= end)
        return;
    pool = weft__pool_resolve(pool);
    if (!pool) {
        body(begin, end, arg);
        return;
    }
    loop l = {.body = body, .arg = arg, .grain = grain, .threads = pool->threads};
    piece root = {.loop = &l, .begin = begin, .end = end, .splits = l.threads};
    weft_run(pool, root_run, &root);
}

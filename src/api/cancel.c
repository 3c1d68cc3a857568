/* SPDX-License-Identifier: MIT */
/* Cancellation: weft_cancel and weft_cancelled ask about the group the
 * running job belongs to (group.h says which one that is); a cancel source
 * is a group its caller owns, for a thread outside the work (a watchdog) to
 * cancel at any time, and weft_run_cancellable runs work in a group under
 * it. */
#include <errno.h>
#include <stdlib.h>

#include "core/current.h"
#include "os/error.h"

struct weft_cancel_source {
    weft__group group; /* outer and source NULL: outside every nest */
};

void weft_cancel(void) {
    weft__group *g = weft__current_group();
    if (g && g->name_only) /* a group that only names: the one around it (group.h) */
        g = g->outer;
    if (g) /* outside every group: nothing to cancel (weft.h) */
        weft__group_cancel(g);
}

bool weft_cancelled(void) {
    return weft__group_cancelled(weft__current_group());
}

int weft_cancel_source_create(weft_cancel_source **source) {
    if (!source)
        return weft__error_set(EINVAL, "source is NULL");
    weft_cancel_source *s = malloc(sizeof *s);
    if (!s)
        return weft__error_set(ENOMEM, "out of memory for the cancel source (%zu bytes)",
                               sizeof *s);
    weft__group_init(&s->group, NULL);
    *source = s;
    return 0;
}

void weft_cancel_source_destroy(weft_cancel_source *source) {
    free(source);
}

void weft_cancel_source_cancel(weft_cancel_source *source) {
    if (source)
        weft__group_cancel(&source->group);
}

bool weft_cancel_source_cancelled(const weft_cancel_source *source) {
    return source && weft__group_cancelled(&source->group);
}

void weft_cancel_source_reset(weft_cancel_source *source) {
    /* Relaxed: the owner resets between runs; its later run's start
     * publishes the source to the threads that look at it. */
    if (source)
        atomic_store_explicit(&source->group.cancelled, false, memory_order_relaxed);
}

typedef struct cancellable {
    weft__group group; /* nested in the caller's group, and under the source */
    weft__group *source;
    weft_fn *fn;
    void *arg;
} cancellable;

/* The run's root, on whichever thread weft_run gives it: fn in the run's
 * group, unless the source (or a group around the caller) was cancelled
 * before it could start. */
static void cancellable_root(void *arg) {
    cancellable *c = arg;
    weft__worker *w = weft__current_worker(); /* NULL: no pool could run it */
    weft__group *outer = weft__worker_enter_new(w, &c->group);
    c->group.source = c->source;
    if (!weft__group_cancelled(&c->group))
        c->fn(c->arg);
    weft__worker_leave(w, outer);
}

int weft_run_cancellable(weft_pool *pool, weft_cancel_source *source, weft_fn *fn, void *arg) {
    if (!source || !fn)
        return weft__error_set(EINVAL, "%s is NULL", source ? "fn" : "source");
    if (weft__pool_lookup(pool, &pool) == ECHILD)
        return ECHILD;
    cancellable c = {.source = &source->group, .fn = fn, .arg = arg};
    if (pool)
        weft_run(pool, cancellable_root, &c);
    else
        cancellable_root(&c); /* no default pool: the calling thread does it */
    /* A cancel that came too late to skip anything still counts, as in
     * weft_reduce: whoever cancelled wanted no result. */
    if (!weft__group_cancelled(&c.group))
        return 0;
    if (weft__group_cancelled(&source->group))
        return weft__error_set(ECANCELED, "the cancel source was cancelled");
    return weft__error_set(ECANCELED, "the run was cancelled: weft_cancel in fn, or a group "
                                      "around the caller");
}

/* SPDX-License-Identifier: MIT */
/* Scopes: a body that spawns jobs, and a wait for all of them.
 *
 * The scope holds a count latch: one count for the body, one per spawned job
 * not yet finished (or skipped). The thread that runs the body (a worker,
 * context or caller slot of the pool: weft_scope_run goes through weft_run)
 * owns the latch
 * and participates until the count reaches zero. The scope is a cancellation
 * group (group.h): once cancelled, spawns are refused and queued jobs skipped,
 * each still counted until it has been, so the wait ends as usual.
 */
#include <assert.h>
#include <errno.h>

#include "core/current.h"
#include "api/spawn.h"
#include "core/latch_owner.h"
#include "os/error.h"

struct weft_scope {
    weft_pool *pool; /* NULL: no pool could be created, jobs run inline */
    weft__count_latch pending;
    weft__group group;
};

typedef struct scope_args {
    void (*body)(weft_scope *scope, void *arg);
    void *arg;
} scope_args;

static void scope_inside(void *arg) {
    scope_args *a = arg;
    weft__worker *w = weft__current_worker();
    weft_scope scope = {.pool = w ? w->pool : NULL};
    weft__count_latch_init(&scope.pending, 1);
    weft__group *outer = weft__worker_enter_new(w, &scope.group); /* in the caller's */
    a->body(&scope, a->arg);
    weft__worker_leave(w, outer);
    weft__count_latch_decrement(&scope.pending);
    weft__latch_wait(&scope.pending.latch);
}

void weft_scope_run(weft_pool *pool, void (*body)(weft_scope *scope, void *arg), void *arg) {
    if (!body) {
        assert(!"weft_scope_run: body is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    scope_args a = {.body = body, .arg = arg};
    weft_run(pool, scope_inside, &a);
}

/* What every spawn into a scope comes down to. */
static int scope_spawn(weft_scope *scope, weft_fn *fn, weft_fn *release, void *arg,
                       weft_priority priority) {
    if (!scope)
        return weft__error_set(EINVAL, "scope is NULL");
    int err = weft__spawn_check_args(fn, priority);
    if (err)
        return err;
    if (weft__group_cancelled(&scope->group))
        return weft__error_set(ECANCELED, "the scope, or a group around it, was cancelled");
    if (!scope->pool) {
        fn(arg);
        return 0;
    }
    weft__heap_job job = {.fn = fn,
                          .arg = arg,
                          .counter = &scope->pending,
                          .group = &scope->group,
                          .release = release};
    return weft__spawn_counted(scope->pool, &job, priority);
}

/* The priority of the job that spawns (the scope's body or one of its jobs):
 * high-priority work spawns high-priority work. */
static weft_priority spawner_priority(const weft_scope *scope) {
    weft__worker *w = scope ? weft__worker_of(scope->pool) : NULL;
    return w ? w->h.prio : WEFT_PRIORITY_NORMAL;
}

int weft_scope_spawn_priority(weft_scope *scope, weft_fn *fn, void *arg, weft_priority priority) {
    return scope_spawn(scope, fn, NULL, arg, priority);
}

int weft_scope_spawn(weft_scope *scope, weft_fn *fn, void *arg) {
    return scope_spawn(scope, fn, NULL, arg, spawner_priority(scope));
}

int weft_scope_spawn_release_priority(weft_scope *scope, weft_fn *fn, weft_fn *release, void *arg,
                                      weft_priority priority) {
    return scope_spawn(scope, fn, release, arg, priority);
}

int weft_scope_spawn_release(weft_scope *scope, weft_fn *fn, weft_fn *release, void *arg) {
    return scope_spawn(scope, fn, release, arg, spawner_priority(scope));
}

void weft_scope_cancel(weft_scope *scope) {
    if (!scope) {
        assert(!"weft_scope_cancel: scope is NULL"); /* release builds: a no-op (weft.h) */
        return;
    }
    weft__group_cancel(&scope->group);
}

/* SPDX-License-Identifier: MIT */
/* Scopes: a body that spawns jobs, and a wait for all of them.
 *
 * The scope holds a count latch: one count for the body, one per spawned job
 * not yet finished. The thread that runs the body (always a worker of the
 * pool: weft_scope_run goes through weft_run) owns the latch and participates
 * until the count reaches zero.
 */
#include <assert.h>
#include <errno.h>

#include "pool.h"

struct weft_scope {
    weft_pool *pool; /* NULL: no pool could be created, jobs run inline */
    weft__count_latch pending;
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
    a->body(&scope, a->arg);
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

int weft_scope_spawn_priority(weft_scope *scope, weft_fn *fn, void *arg, weft_priority priority) {
    if (!scope || !fn || (unsigned)priority > WEFT_PRIORITY_HIGH)
        return EINVAL;
    if (!scope->pool) {
        fn(arg);
        return 0;
    }
    return weft__spawn_counted(scope->pool, &scope->pending, fn, arg, priority);
}

int weft_scope_spawn(weft_scope *scope, weft_fn *fn, void *arg) {
    /* The priority of the job that spawns (the scope's body or one of its
     * jobs): high-priority work spawns high-priority work. */
    weft__worker *w = scope ? weft__worker_of(scope->pool) : NULL;
    return weft_scope_spawn_priority(scope, fn, arg, w ? w->prio : WEFT_PRIORITY_NORMAL);
}

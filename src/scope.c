/* Scopes: a body that spawns jobs, and a wait for all of them.
 *
 * The scope holds a count latch: one count for the body, one per spawned job
 * not yet finished. The thread that runs the body (always a worker of the
 * pool: weft_scope_run goes through weft_run) owns the latch and participates
 * until the count reaches zero.
 */
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
    scope_args a = {.body = body, .arg = arg};
    weft_run(pool, scope_inside, &a);
}

int weft_scope_spawn(weft_scope *scope, weft_fn *fn, void *arg) {
    if (!scope || !fn)
        return EINVAL;
    if (!scope->pool) {
        fn(arg);
        return 0;
    }
    return weft__spawn_counted(scope->pool, &scope->pending, fn, arg);
}

/* SPDX-License-Identifier: MIT */
/* Serving: pool B serves pool A while a thread of A (a worker or a context)
 * waits for work it handed to B (weft_run, and what goes through it:
 * weft_scope_run, weft_for, weft_reduce, weft_graph_run; and weft_broadcast).
 *
 * weft_pool_destroy(A) waits for A's work and then joins A's workers. Called
 * from a thread of B while B serves A, it may be running inside the very work
 * an A job waits for, directly or as a job another worker of B took from it,
 * so it would wait for itself. weft does not track which job of B works for
 * whom (that would cost every fork), so it answers per pool: destroy(A) from
 * a thread of a pool that serves A, or serves a pool that serves A, and so on,
 * returns EDEADLK. A job of B that no job of A waits for may still destroy A
 * while B serves nothing of A.
 *
 * The relation lives in one list per pool of the callers waiting on it, under
 * one process-wide lock: cross-pool waits are rare next to the work inside a
 * pool, and one lock lets a destroy walk several pools' lists consistently.
 * A listed guest's pool is alive: its thread is waiting, so that pool's
 * destroy cannot have joined it.
 */
#include "core/serve.h"

#include <pthread.h>
#include <stddef.h>

/* Pools one reachability walk visits at most; a chain of cross-pool waits
 * longer than this is not followed (destroy then waits, as it did before
 * this check existed). Far beyond any program's nesting of pools. */
#define SERVE_WALK_MAX 64

static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;

void weft__serve_begin(weft__served *s, weft__guest *g) {
    pthread_mutex_lock(&serve_lock);
    g->next = s->guests;
    s->guests = g;
    pthread_mutex_unlock(&serve_lock);
}

void weft__serve_end(weft__served *s, weft__guest *g) {
    pthread_mutex_lock(&serve_lock);
    weft__guest **p = &s->guests;
    while (*p != g)
        p = &(*p)->next;
    *p = g->next;
    pthread_mutex_unlock(&serve_lock);
}

static bool seen(weft__served *const *pools, unsigned n, const weft__served *s) {
    for (unsigned i = 0; i < n; i++)
        if (pools[i] == s)
            return true;
    return false;
}

void weft__serve_fork_prepare(void) {
    pthread_mutex_lock(&serve_lock);
}

void weft__serve_fork_release(void) {
    pthread_mutex_unlock(&serve_lock);
}

bool weft__serve_reaches(weft__served *s, weft__served *target) {
    /* Breadth-first over "serves": visited[0..n) is both the queue and the
     * set of pools already queued. */
    weft__served *visited[SERVE_WALK_MAX];
    unsigned n = 0;
    visited[n++] = s;
    bool found = false;
    pthread_mutex_lock(&serve_lock);
    for (unsigned i = 0; i < n && !found; i++) {
        for (weft__guest *g = visited[i]->guests; g && !found; g = g->next) {
            found = g->from == target;
            if (!found && n < SERVE_WALK_MAX && !seen(visited, n, g->from))
                visited[n++] = g->from;
        }
    }
    pthread_mutex_unlock(&serve_lock);
    return found;
}

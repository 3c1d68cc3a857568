/* SPDX-License-Identifier: MIT */
/* Job names for the trace (weft_trace_name): the name in force on a thread,
 * and the group that gives a call's work a name of its own (named.c). */
#ifndef WEFT_NAMED_H
#define WEFT_NAMED_H

#include "weft.h"

#include "core/group.h"
#include "core/worker.h"
#include "os/atomics.h"

/* The name weft_trace_name set on this thread (NULL: none): the calls and
 * spawns it makes give their work this name. */
WEFT__HIDDEN extern _Thread_local const char *weft__trace_name_tls;

/* What a call made under a name runs: fn(arg), named. */
typedef struct weft__named {
    weft_fn *fn;
    void *arg;
    const char *name;
} weft__named;

/* The name of the work a thread starts now (w: its worker, NULL: none): the
 * one set on it, else the one of the work it runs. */
static inline const char *weft__name_in_force(const weft__worker *w) {
    const char *name = weft__trace_name_tls;
    return name ? name : w ? weft__group_name(w->h.group) : NULL;
}

/* The name a call made now gives its work, if that is not already the name
 * of the work it runs in: NULL when its work needs no group of its own. One
 * thread-local load when no name is set. */
static inline const char *weft__name_to_give(const weft__worker *w) {
    const char *name = weft__trace_name_tls;
    if (WEFT__LIKELY(!name))
        return NULL;
    return name == weft__group_name(w ? w->h.group : NULL) ? NULL : name;
}

/* Run fn(arg) on w (NULL: no pool: just call it) as work named name: in a
 * group that only names, nested in w's, unless w's group has that name
 * already; with a running slice of that name in the trace. */
WEFT__HIDDEN void weft__named_run(weft__worker *w, const char *name, weft_fn *fn, void *arg);

/* weft__named_run of a weft__named on the calling thread's worker, for a
 * caller that passes a function on (weft_run). */
WEFT__HIDDEN void weft__named_call(void *named);

#endif

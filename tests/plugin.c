/* SPDX-License-Identifier: MIT */
/* A plugin that uses weft (tests/test_plugin.c loads and unloads it): a loop
 * on the default pool and a scope of detached jobs, whose count it returns.
 * Built twice, linked to libweft.so and with libweft.a inside. */
#include <stdatomic.h>
#include <weft.h>

#define PLUGIN_ITEMS  10000
#define PLUGIN_SPAWNS 64

static void count_range(size_t lo, size_t hi, void *arg) {
    /* Relaxed: only the total matters; the loop's end orders it. */
    atomic_fetch_add_explicit((_Atomic long *)arg, (long)(hi - lo), memory_order_relaxed);
}

static void count_one(void *arg) {
    atomic_fetch_add_explicit((_Atomic long *)arg, 1, memory_order_relaxed);
}

static void spawn_all(weft_scope *scope, void *arg) {
    for (int i = 0; i < PLUGIN_SPAWNS; i++)
        weft_scope_spawn(scope, count_one, arg);
}

/* PLUGIN_ITEMS + PLUGIN_SPAWNS when every job ran once. */
__attribute__((visibility("default"))) long plugin_work(void) {
    _Atomic long n = 0;
    weft_for(NULL, 0, PLUGIN_ITEMS, 1, count_range, &n);
    weft_scope_run(NULL, spawn_all, &n);
    return atomic_load_explicit(&n, memory_order_relaxed);
}

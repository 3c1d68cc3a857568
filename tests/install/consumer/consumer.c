/* SPDX-License-Identifier: MIT */
/* A program built against weft the way a user builds it: it checks that the
 * header and the library agree and that the pool runs work. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <weft.h>

static void add_range(size_t begin, size_t end, void *arg) {
    size_t sum = 0;
    for (size_t i = begin; i < end; i++)
        sum += i;
    atomic_fetch_add((_Atomic size_t *)arg, sum);
}

int main(void) {
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    if (strcmp(header, weft_version()) != 0) {
        fprintf(stderr, "weft.h says %s, the library %s\n", header, weft_version());
        return 1;
    }
    weft_config config = {.threads = 2};
    weft_pool *pool;
    if (weft_pool_create(&pool, &config) != 0)
        return 1;
    _Atomic size_t sum = 0;
    weft_for(pool, 0, 10000, 0, add_range, &sum);
    int ok = weft_pool_destroy(pool) == 0 && atomic_load(&sum) == 10000 * 9999 / 2;
    printf("weft %s: %s\n", weft_version(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

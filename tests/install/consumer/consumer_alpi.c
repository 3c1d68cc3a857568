/* SPDX-License-Identifier: MIT */
/* A program built against an installed libweft-alpi, as a user (or TAMPI's
 * user) builds one: the interface's version, and a spawned task that
 * completes. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <weft/alpi.h>

static void body(void *arg) {
    struct alpi_task *self = NULL;
    if (alpi_task_self(&self) == ALPI_SUCCESS && self)
        atomic_store((_Atomic int *)arg, 1);
}

static void completed(void *arg) {
    atomic_fetch_add((_Atomic int *)arg, 2);
}

int main(void) {
    char name[16];
    if (alpi_version_check(ALPI_VERSION_MAJOR, ALPI_VERSION_MINOR) != ALPI_SUCCESS ||
        alpi_info_get(ALPI_INFO_RUNTIME_NAME, name, sizeof name, NULL) != ALPI_SUCCESS ||
        strcmp(name, "weft") != 0) {
        fprintf(stderr, "consumer_alpi: not weft's ALPI 1.%d\n", ALPI_VERSION_MINOR);
        return 1;
    }
    _Atomic int state = 0;
    if (alpi_task_spawn(body, &state, completed, &state, "consumer", NULL) != ALPI_SUCCESS)
        return 1;
    while (atomic_load(&state) != 3)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    printf("consumer_alpi: ok\n");
    return 0;
}

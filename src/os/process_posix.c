/* SPDX-License-Identifier: MIT */
/* Portable POSIX fallback for process.h: the CPU count from sysconf; no
 * barrier (the POSIX seam builds symmetric fences, fence.h) and no pin. */
#include <unistd.h>

#include "os/process.h"

/* POSIX.1-2008 has no way to pin a loaded object (dladdr, RTLD_NOLOAD
 * and RTLD_NODELETE are extensions): a plugin links with -z nodelete, or
 * keeps weft loaded itself (docs/guide.md, "Plugins"). */
void weft__os_keep_loaded(void) {}

unsigned weft__os_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* SPDX-License-Identifier: MIT */
/* The process as weft sees it: the CPUs it may use, a barrier across all
 * its threads, and the object that holds weft's code kept mapped.
 * process_linux.c and process_posix.c. */
#ifndef WEFT_OS_PROCESS_H
#define WEFT_OS_PROCESS_H

#include <stdbool.h>

#include "os/atomics.h"

/* A process-wide memory barrier (Linux membarrier, private expedited): when
 * weft__os_barrier returns, every thread of the process that was running
 * during the call has executed a full memory barrier, and every other one
 * has been switched out since, which orders it as fully. weft__os_barrier_init
 * registers the process once; false where the kernel refuses (then
 * weft__os_barrier must not be called). The Linux seam's only: the POSIX seam
 * builds with symmetric fences instead (fence.h). */
WEFT__HIDDEN bool weft__os_barrier_init(void);
WEFT__HIDDEN void weft__os_barrier(void);

/* Keep the shared object that holds weft's code (libweft.so, or a plugin
 * that linked libweft.a) mapped until the process exits, whoever dlcloses
 * it: the default pool's workers live until exit and run that code. Called
 * once the default pool exists, with no weft lock held (the loader's lock
 * is taken inside, and a constructor that runs under it may call weft).
 * Best effort: nothing in a program's own executable, or where the OS
 * cannot pin a loaded object (the POSIX seam: the guide's plugin rule). */
WEFT__HIDDEN void weft__os_keep_loaded(void);

/* Number of CPUs this process may run on (at least 1). */
WEFT__HIDDEN unsigned weft__os_cpu_count(void);

#endif

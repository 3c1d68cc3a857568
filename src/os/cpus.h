/* SPDX-License-Identifier: MIT */
/* The CPUs this process may use: affinity and cgroup quota. See cpus.c. */
#ifndef WEFT_CPUS_H
#define WEFT_CPUS_H

#include "os/atomics.h"

/* The CPUs the cgroup v2 quota of this process allows (the least cpu.max of
 * its cgroup and its ancestors, rounded up), or 0 for no quota. Every path
 * read is prefixed with root ("" for the real files). */
WEFT__HIDDEN unsigned weft__cgroup_cpu_limit(const char *root);

/* The CPUs this process may use: the affinity mask, capped by the cgroup
 * quota; at least 1. What threads = 0 means (pool.c). */
WEFT__HIDDEN unsigned weft__cpus_available(void);

/* The root weft__cpus_available reads the cgroup files under: "" (tests
 * point it at a fake tree, before creating a pool). */
WEFT__HIDDEN extern const char *weft__cpus_root;

#endif

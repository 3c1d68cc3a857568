/* SPDX-License-Identifier: MIT */
/* weft version. ABI policy: the shared library's SONAME carries
 * WEFT_VERSION_MAJOR. Within one major version, functions and enumerators are
 * only added, never removed or changed; weft_config and weft_stats only grow
 * at their end, and the library reads or writes exactly the size the caller
 * was compiled with (weft_pool_create_sized, weft_pool_stats_sized); a
 * zero-initialised config always means "all defaults". Minor versions add
 * API; patch versions change behaviour only to fix bugs. Before 1.0 a minor
 * version may still change the ABI (CHANGELOG.md says which). */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/* "MAJOR.MINOR.PATCH" as a number, for compile-time comparisons. */
#define WEFT_VERSION_HEX                                                                           \
    ((WEFT_VERSION_MAJOR << 16) | (WEFT_VERSION_MINOR << 8) | WEFT_VERSION_PATCH)

#endif

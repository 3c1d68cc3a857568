/* weft version. ABI policy: the shared library's SONAME carries
 * WEFT_VERSION_MAJOR. Within one major version, functions and enumerators are
 * only added, never removed or changed; struct weft_config only grows at its
 * end, and a zero-initialised config always means "all defaults". Minor
 * versions add API; patch versions change behaviour only to fix bugs. */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/* "MAJOR.MINOR.PATCH" as a number, for compile-time comparisons. */
#define WEFT_VERSION_HEX                                                                           \
    ((WEFT_VERSION_MAJOR << 16) | (WEFT_VERSION_MINOR << 8) | WEFT_VERSION_PATCH)

#endif

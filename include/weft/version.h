/* SPDX-License-Identifier: MIT */
/* weft version: the one place it is written (the build, weft.pc and the
 * CMake package take it from here).
 *
 * The versioning rule. An ABI line is the versions between two ABI breaks;
 * the shared library's SONAME names it, so a program never loads a library
 * of another line: libweft.so.MAJOR from 1.0 on, libweft.so.0.MINOR before
 * (where a minor version may break the ABI). Within a line, functions and
 * enumerators are only added, never removed or changed; weft_config and
 * weft_stats only grow at their end, and the library reads or writes exactly
 * the size the caller was compiled with (weft_pool_create_sized,
 * weft_pool_stats_sized); a zero-initialised config always means "all
 * defaults". Minor versions add API; patch versions change behaviour only to
 * fix bugs. A break takes a new line: the major version (the minor one
 * before 1.0) goes up, and with it the SONAME and the exports' version node
 * (cmake/weft.map). CHANGELOG.md lists every change that needs a rebuild;
 * the test install.abi compares the library with the line's recorded ABI
 * (abi/). */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 3
#define WEFT_VERSION_PATCH 5

/* "MAJOR.MINOR.PATCH" as a number, for compile-time comparisons. */
#define WEFT_VERSION_HEX                                                                           \
    ((WEFT_VERSION_MAJOR << 16) | (WEFT_VERSION_MINOR << 8) | WEFT_VERSION_PATCH)

#endif

# SPDX-License-Identifier: MIT
# Debian packages of weft (make deb: cpack -G DEB in a build configured for
# the prefix /usr), one per install component of CMakeLists.txt:
#   runtime  libweft<soversion>: the shared library with its soname link,
#            and its copyright file; what a program built against weft needs
#            to run
#   dev      libweft-dev: headers, the libweft.so link, libweft.a, weft.pc,
#            the CMake package, weft-trace2svg; depends on the runtime
#            package of exactly its own version
# Included from CMakeLists.txt's install section, for a top-level build only:
# a parent project that vendors weft owns its own CPack configuration.

# Debian names a library's runtime package after its soname, so that two ABI
# lines (libweft.so.0.2, libweft.so.0.3) are two packages that can be
# installed side by side: libweft.so.0.2 is libweft0.2. The -dev package has
# one name for every line, as only one set of headers can be installed.
set(WEFT_DEB_RUNTIME libweft${WEFT_SOVERSION})
set(WEFT_DEB_DEV libweft-dev)

# Debian wants each package's licence in /usr/share/doc/<package>/copyright.
# Only a component's own installation (CPack's) puts it there
# (EXCLUDE_FROM_ALL): make install keeps the project's share/doc/weft/LICENSE,
# which goes into the -dev package, beside the CMake package whose
# weft_LICENSE names it. The runtime package then holds nothing but the
# library and its copyright file.
foreach(comp runtime dev)
  if(comp STREQUAL "runtime")
    set(pkg ${WEFT_DEB_RUNTIME})
  else()
    set(pkg ${WEFT_DEB_DEV})
  endif()
  install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${pkg} RENAME copyright
          COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weft)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The weft authors")
set(CPACK_PACKAGE_CONTACT "The weft authors")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)

# One package per component, and only these two: an install() rule without
# a component would land in an "Unspecified" package nobody asked for.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # <package>_<version>_<architecture>.deb
# The install runs with CMAKE_INSTALL_PREFIX=/usr and the staging directory
# as DESTDIR. Without it CPack would install with the staging directory as
# the prefix, which the install step that writes weft.pc would copy into
# the package's weft.pc.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})

# The runtime package: its Depends from dpkg-shlibdeps (libc6 of the
# version whose symbols the library uses), and a shlibs file, so that a
# package built against libweft.so.0.3 gets "libweft0.3 (>= its version)":
# within a line a newer library runs an older program (include/weft/version.h).
# Its postinst and postrm run ldconfig (CPack adds them for a library in
# /usr/lib). The debug information goes into a -dbgsym package, and the
# library in the package is stripped, as Debian's own are.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${WEFT_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_DEBUGINFO_PACKAGE ON)
# Each description's first line is its package's summary (Debian's rule);
# the two differ, so no common CPACK_PACKAGE_DESCRIPTION_SUMMARY.
string(CONCAT weft_deb_about
  "weft is a work-stealing task scheduler for C11, with a C++17 header. Its\n"
  "idle pool costs nothing: workers block, each on its own futex word. A new\n"
  "job wakes one sleeping worker, and only when no worker is already looking\n"
  "for work; a fork costs a few nanoseconds and allocates nothing.\n")
string(CONCAT CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "work-stealing task scheduler for C11 that sleeps well\n" "${weft_deb_about}"
  "\n"
  "This package holds the shared library.")

# The -dev package depends on the runtime package of exactly its version:
# its headers may declare what an older library of the line lacks, and its
# libweft.so link and weft/config.h (the fence weft_join's inline pop pairs
# with) are those of this build.
# weft-trace2svg is a python3 script of the standard library alone; python3
# is recommended, not required, since the headers and libraries work
# without it.
set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${WEFT_DEB_DEV})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS python3)
string(CONCAT CPACK_COMPONENT_DEV_DESCRIPTION
  "work-stealing task scheduler for C11: development files\n" "${weft_deb_about}"
  "\n"
  "The headers (weft.h, the C++17 weft.hpp), the static library, weft.pc for\n"
  "pkg-config, the CMake package (find_package(weft), weft::weft), and\n"
  "weft-trace2svg, which draws a trace of the pool as an SVG timeline.")

include(CPack)

# SPDX-License-Identifier: MIT
# Remove what `cmake --install` (or `make install`) installed from this build
# directory: the files listed in its install_manifest.txt, under $DESTDIR if
# one is set (the manifest lists the paths without it: give the uninstall the
# DESTDIR the install had), then the directories weft alone owns (named
# weft: include/weft, lib/cmake/weft, share/doc/weft) once they are empty.
# Shared directories (include, lib, lib/pkgconfig) stay.
#
#   [DESTDIR=...] cmake -DMANIFEST=<build>/install_manifest.txt -P uninstall.cmake
if(NOT MANIFEST)
  message(FATAL_ERROR "uninstall.cmake: -DMANIFEST=... is required")
endif()
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "uninstall: ${MANIFEST} not found: nothing was installed from this build "
                      "directory (uninstall from the one you installed from)")
endif()
file(STRINGS "${MANIFEST}" files)
set(removed 0)
set(dirs "")
foreach(installed IN LISTS files)
  set(f "$ENV{DESTDIR}${installed}")
  if(IS_SYMLINK "${f}" OR EXISTS "${f}")
    file(REMOVE "${f}")
    if(IS_SYMLINK "${f}" OR EXISTS "${f}")
      message(FATAL_ERROR "uninstall: could not remove ${f}")
    endif()
    math(EXPR removed "${removed} + 1")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  get_filename_component(name "${d}" NAME)
  if(name STREQUAL "weft")
    list(APPEND dirs "${d}")
  endif()
endforeach()
list(REMOVE_DUPLICATES dirs)
foreach(d IN LISTS dirs)
  file(GLOB left "${d}/*")
  if(IS_DIRECTORY "${d}" AND NOT left)
    file(REMOVE_RECURSE "${d}")
  endif()
endforeach()
list(LENGTH files listed)
message(STATUS "uninstall: removed ${removed} of the ${listed} files installed")

# SPDX-License-Identifier: MIT
# install.abi: compare the shared library with its ABI line's record
# (abi/libweft.abi, written by `make abi-baseline`) with abidiff, the public
# headers telling public types from private ones. Additions pass (and are
# shown); a removed or changed function, variable or public type, or another
# soname, fails: a break needs a new ABI line (include/weft/version.h).
#
#   cmake -DABIDIFF= -DBASELINE= -DLIBRARY= -DHEADERS=dir|dir -P check_abi.cmake
foreach(v ABIDIFF BASELINE LIBRARY HEADERS)
  if(NOT ${v})
    message(FATAL_ERROR "check_abi.cmake: -D${v}=... is required")
  endif()
endforeach()
set(args "")
string(REPLACE "|" ";" HEADERS "${HEADERS}")
foreach(d IN LISTS HEADERS)
  list(APPEND args --headers-dir1 ${d} --headers-dir2 ${d})
endforeach()
execute_process(COMMAND ${ABIDIFF} ${args} ${BASELINE} ${LIBRARY}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
# abidiff's status is a bit set: 1 error, 2 usage error, 4 an ABI change,
# 8 an incompatible one.
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "abidiff did not run: ${rc}\n${err}")
endif()
math(EXPR failed "${rc} & 11")
if(failed)
  message(FATAL_ERROR "the ABI differs from ${BASELINE} beyond additions (abidiff status ${rc}):\n"
                      "${out}${err}\nA break needs a new ABI line: raise the version "
                      "(include/weft/version.h, cmake/weft.map), then make abi-baseline.")
endif()
if(rc)
  message(STATUS "ABI additions since the record:\n${out}")
else()
  message(STATUS "ABI as recorded")
endif()

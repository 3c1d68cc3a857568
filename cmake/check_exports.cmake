# SPDX-License-Identifier: MIT
# The shared library exports exactly the functions HEADER declares WEFT_API:
# no weft__ internal, no missing function (it is built with
# -fvisibility=hidden, and WEFT_API marks each export).
#
#   cmake -DHEADER=include/weft.h -DLIBRARY=libweft.so -DNM=nm -P cmake/check_exports.cmake
cmake_minimum_required(VERSION 3.16)
foreach(v HEADER LIBRARY NM)
  if(NOT ${v})
    message(FATAL_ERROR "check_exports.cmake: -D${v}=... is required")
  endif()
endforeach()

file(READ ${HEADER} text)
string(REGEX MATCHALL "\nWEFT_API [^(]*\\(" decls "${text}")
set(declared "")
foreach(d ${decls})
  string(REGEX MATCH "([a-z_][a-z0-9_]*)[ \t]*\\($" _ "${d}")
  list(APPEND declared ${CMAKE_MATCH_1})
endforeach()

execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIBRARY} failed: ${err}")
endif()
string(REGEX MATCHALL "[^\n]+" symbols "${out}")
set(exported "")
foreach(s ${symbols})
  if(s MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ ]+)$")
    set(name ${CMAKE_MATCH_1})
    # Symbols the linker defines in every shared object.
    if(NOT name MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
      list(APPEND exported ${name})
    endif()
  endif()
endforeach()

list(SORT declared)
list(SORT exported)
set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
if(missing OR extra OR NOT declared)
  message(FATAL_ERROR "${LIBRARY} vs ${HEADER}:\n"
                      "  declared WEFT_API, not exported: ${missing}\n"
                      "  exported, not declared WEFT_API: ${extra}")
endif()
list(LENGTH exported n)
message(STATUS "${LIBRARY} exports exactly the ${n} WEFT_API functions")

# SPDX-License-Identifier: MIT
# The shared library exports exactly what HEADER and weft/join.h beside it
# declare WEFT_API: no other weft__ internal, nothing missing (it is built
# with -fvisibility=hidden, and WEFT_API marks each export). join.h declares
# its cold paths for both fence flavours, of which a build exports one.
#
#   cmake -DHEADER=include/weft.h -DLIBRARY=libweft.so -DNM=nm -P cmake/check_exports.cmake
cmake_minimum_required(VERSION 3.16)
foreach(v HEADER LIBRARY NM)
  if(NOT ${v})
    message(FATAL_ERROR "check_exports.cmake: -D${v}=... is required")
  endif()
endforeach()

file(READ ${HEADER} text)
get_filename_component(dir ${HEADER} DIRECTORY)
file(READ ${dir}/weft/join.h join_text)
string(APPEND text "${join_text}")
string(REGEX MATCHALL "\nWEFT_API [^(;]*\\(" decls "${text}")
set(declared "")
foreach(d ${decls})
  string(REGEX MATCH "([a-z_][a-z0-9_]*)[ \t]*\\($" _ "${d}")
  list(APPEND declared ${CMAKE_MATCH_1})
endforeach()
# Variables: WEFT_API extern ... name WEFT__TLS_IE (no semicolon: a list separator)
string(REGEX MATCHALL "\nWEFT_API extern [^;(]*[ *]([a-z_][a-z0-9_]*) WEFT__TLS_IE" vars "${text}")
foreach(v ${vars})
  string(REGEX MATCH "([a-z_][a-z0-9_]*) WEFT__TLS_IE$" _ "${v}")
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
  if(s MATCHES "^[0-9a-fA-F]* *([A-Za-z]) ([^ ]+)$")
    set(kind ${CMAKE_MATCH_1})
    # name@@NODE: the version node (cmake/weft.map) is not part of the name.
    string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_2}")
    # Symbols the linker defines in every shared object, and the version
    # node's own (absolute) symbol.
    if(NOT name MATCHES "^(_init|_fini|_edata|_end|__bss_start)$" AND NOT kind STREQUAL "A")
      list(APPEND exported ${name})
    endif()
  endif()
endforeach()

list(SORT declared)
list(SORT exported)
set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
# A cold path of the other fence flavour (_Nm: membarrier, _Ns: symmetric).
foreach(m ${missing})
  if(m MATCHES "^(weft__join_[a-z_]+_[0-9]+)([ms])$")
    if(CMAKE_MATCH_2 STREQUAL "m")
      set(other ${CMAKE_MATCH_1}s)
    else()
      set(other ${CMAKE_MATCH_1}m)
    endif()
    if(other IN_LIST exported)
      list(REMOVE_ITEM missing ${m})
    endif()
  endif()
endforeach()
# The fork's register-keeping entry exists on x86-64 ELF targets only
# (join.h, WEFT__JOIN_KEEP_ENTRY; -DKEEP_ENTRY=ON there): elsewhere neither
# flavour is exported.
if(NOT KEEP_ENTRY)
  list(REMOVE_ITEM missing weft__join_fork_cold_keep_3m weft__join_fork_cold_keep_3s)
endif()
set(extra ${exported})
list(REMOVE_ITEM extra ${declared})
# Join layout 2's cold paths, which the library exports for binaries built
# against 0.3.0 to 0.3.3 (src/core/frame.c); the header declares layout 3's.
# Both, of one fence flavour.
list(FILTER extra EXCLUDE REGEX "^weft__join_(fork|pop)_cold_2[ms]$")
foreach(f m s)
  if("weft__join_fork_cold_2${f}" IN_LIST exported AND "weft__join_pop_cold_2${f}" IN_LIST exported)
    set(layout2 ${f})
  endif()
endforeach()
if(NOT layout2)
  list(APPEND missing "weft__join_fork_cold_2m/_2s and weft__join_pop_cold_2m/_2s (layout 2)")
endif()
if(missing OR extra OR NOT declared)
  message(FATAL_ERROR "${LIBRARY} vs ${HEADER}:\n"
                      "  declared WEFT_API, not exported: ${missing}\n"
                      "  exported, not declared WEFT_API: ${extra}")
endif()
list(LENGTH exported n)
message(STATUS "${LIBRARY} exports exactly the ${n} WEFT_API symbols")

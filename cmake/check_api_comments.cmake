# SPDX-License-Identifier: MIT
# Every WEFT_API declaration in HEADER is documented: the line just before it
# ends a comment that stands on its own lines (not one trailing code) and has
# words in it. Consecutive declarations may share the comment before the
# first of them if it names each of them (weft_phase_begin/weft_phase_end).
# The contract of each function lives in that comment (STYLE.md).
#
# The check also checks itself: with each of those comments removed in turn,
# it must report the declarations it documented. A check that cannot fail
# fails.
#
#   cmake -DHEADER=include/weft.h -P cmake/check_api_comments.cmake
cmake_minimum_required(VERSION 3.16) # lists keep empty elements: one per line
if(NOT HEADER)
  message(FATAL_ERROR "usage: cmake -DHEADER=<weft.h> -P check_api_comments.cmake")
endif()

# The header as a CMake list of lines. ';', '\', '[' and ']' mean something to
# CMake lists, and only the comment structure matters here, so they are
# replaced first.
file(READ ${HEADER} text)
string(REPLACE "\\" "/" text "${text}")
string(REPLACE ";" "," text "${text}")
string(REPLACE "[" "(" text "${text}")
string(REPLACE "]" ")" text "${text}")
string(REPLACE "\n" ";" lines "${text}")

# scan(<list variable>): sets in the caller
#   decls         line indices of the WEFT_API declarations
#   undocumented  the subset not documented by a comment
#   comments      for each documented declaration, "first-last" line of its comment
function(scan)
  set(decls "")
  set(undocumented "")
  set(comments "")
  set(i 0)
  set(in_comment OFF)
  set(before "") # "first-last" of a comment that ends on the previous line
  set(shared "") # the same, for a declaration right after a commented one
  foreach(line IN LISTS ${ARGV0})
    set(next "")
    set(next_shared "")
    if(in_comment)
      string(APPEND body " ${line}")
      if(line MATCHES "\\*/[ \t]*$")
        set(in_comment OFF)
        if(body MATCHES "[A-Za-z][A-Za-z][A-Za-z]")
          set(next "${first}-${i}")
        endif()
      elseif(line MATCHES "\\*/")
        set(in_comment OFF) # code after the comment on the same line
      endif()
    elseif(line MATCHES "^[ \t]*WEFT_API[ \t]")
      list(APPEND decls ${i})
      string(REGEX MATCH "([a-z_][a-z0-9_]*)[ \t]*\\(" name "${line}")
      set(name "${CMAKE_MATCH_1}")
      if(NOT before STREQUAL "")
        list(APPEND comments ${before})
        set(next_shared "${before}")
      elseif(NOT shared STREQUAL "" AND name AND "${shared_body}" MATCHES "${name}[^a-z0-9_]")
        list(APPEND comments ${shared})
        set(next_shared "${shared}")
      else()
        list(APPEND undocumented ${i})
      endif()
    elseif(line MATCHES "^[ \t]*//")
      if(before STREQUAL "")
        set(first ${i})
        set(body "")
      endif()
      string(APPEND body " ${line}")
      if(body MATCHES "[A-Za-z][A-Za-z][A-Za-z]")
        set(next "${first}-${i}")
      endif()
    elseif(line MATCHES "^[ \t]*/\\*")
      set(first ${i})
      set(body "${line}")
      if(line MATCHES "\\*/[ \t]*$")
        if(body MATCHES "[A-Za-z][A-Za-z][A-Za-z]")
          set(next "${i}-${i}")
        endif()
      elseif(NOT line MATCHES "\\*/")
        set(in_comment ON)
      endif()
    endif()
    if(NOT next STREQUAL "")
      set(comment_body "${body}")
    endif()
    if(NOT next_shared STREQUAL "" AND NOT before STREQUAL "")
      set(shared_body "${comment_body}")
    endif()
    set(before "${next}")
    set(shared "${next_shared}")
    math(EXPR i "${i} + 1")
  endforeach()
  set(decls "${decls}" PARENT_SCOPE)
  set(undocumented "${undocumented}" PARENT_SCOPE)
  set(comments "${comments}" PARENT_SCOPE)
endfunction()

scan(lines)
list(LENGTH decls n)
if(n EQUAL 0)
  message(FATAL_ERROR "${HEADER}: no WEFT_API declaration found; is this the right file?")
endif()
if(undocumented)
  set(report "")
  foreach(d ${undocumented})
    list(GET lines ${d} line)
    math(EXPR lineno "${d} + 1")
    string(APPEND report "\n  ${HEADER}:${lineno}: ${line}")
  endforeach()
  message(FATAL_ERROR "WEFT_API declarations without a comment just before them:${report}")
endif()

# Self-check: remove each comment in turn; the scan must report the
# declarations it documented, and only those.
set(all_lines "${lines}")
set(all_decls ${decls})
set(all_comments ${comments})
set(ranges ${comments})
list(REMOVE_DUPLICATES ranges)
foreach(range ${ranges})
  set(expected 0)
  foreach(c ${all_comments})
    if(c STREQUAL range)
      math(EXPR expected "${expected} + 1")
    endif()
  endforeach()
  string(REPLACE "-" ";" bounds "${range}")
  list(GET bounds 0 first)
  list(GET bounds 1 last)
  set(mutated "")
  set(i 0)
  foreach(line IN LISTS all_lines)
    if(i LESS first OR i GREATER last)
      list(APPEND mutated "${line}")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  scan(mutated)
  list(LENGTH undocumented missed)
  if(NOT missed EQUAL expected)
    math(EXPR lineno "${first} + 1")
    message(FATAL_ERROR "self-check: removing the comment at ${HEADER}:${lineno} left "
                        "${missed} declarations undocumented, expected ${expected}")
  endif()
endforeach()
list(LENGTH ranges nr)
message(STATUS "${HEADER}: all ${n} WEFT_API declarations have a comment "
               "(self-check: each of the ${nr} comments removed in turn was missed)")

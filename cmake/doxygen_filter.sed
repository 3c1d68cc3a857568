# SPDX-License-Identifier: MIT
# Doxygen input filter for weft's headers (Doxyfile: INPUT_FILTER). The
# headers use plain C comments, the way the rest of the code does; this turns
# them into documentation comments for Doxygen only:
#  - the opening comment of the file documents the file;
#  - a comment at the start of a line documents what follows it;
#  - a comment after a member or enumerator documents that member.
1s|^/[*] |/** @file\n * |
1!s|^\([ ]*\)/[*]\([^*]\)|\1/**\2|
s|\([;,]\)\([ ]*\)/[*] |\1\2/**< |

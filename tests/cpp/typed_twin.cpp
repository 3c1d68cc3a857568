/* SPDX-License-Identifier: MIT */
/* test_cpp's second translation unit: a typed task named as one of
 * test_cpp.cpp's but with other types (each file's task, its frame's types
 * included, is its own), written with the three-part join across a
 * declared task, its result of class type. */
#include <weft.hpp>

#include <string>

std::string twin_work(unsigned depth);

WEFT_TASK_DECL(std::string, work, std::string, unsigned);

/* The binary labels of depth digits after s, in order, each followed by a
 * space: the first half forked, the second called, then the first synced. */
WEFT_TASK_DEF(std::string, work, std::string, s, unsigned, depth) {
    if (depth == 0)
        return s + ' ';
    WEFT_FORK(work, first, s + '0', depth - 1);
    std::string second = WEFT_CALL(work, s + '1', depth - 1);
    return WEFT_SYNC(work, first) + second;
}

std::string twin_work(unsigned depth) {
    return work("", depth);
}

/* SPDX-License-Identifier: MIT */
/* Must not compile: weft::sort needs random-access iterators, and says so in
 * one line for a std::list's. Compiled by the test cpp.rejects_list_sort. */
#include <weft.hpp>

#include <list>

int main() {
    std::list<int> l{3, 1, 2};
    weft::sort(l.begin(), l.end());
    return 0;
}

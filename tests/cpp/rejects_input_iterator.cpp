/* SPDX-License-Identifier: MIT */
/* Must not compile: input iterators (a stream) can be walked only once, by
 * one thread, so parallel_for rejects them with one line that says so.
 * Compiled by the test cpp.rejects_input_iterators. */
#include <weft.hpp>

#include <iterator>
#include <sstream>

int main() {
    std::istringstream in("1 2 3");
    weft::parallel_for(std::istream_iterator<int>(in), std::istream_iterator<int>(), [](int) {});
    return 0;
}

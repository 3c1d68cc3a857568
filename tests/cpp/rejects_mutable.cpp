/* SPDX-License-Identifier: MIT */
/* Must not compile: parallel_for calls f from several threads at once, so a
 * mutable lambda (whose calls would race on its captures) is rejected with a
 * message that says so. Compiled by the test cpp.rejects_mutable_loop_body. */
#include <weft.hpp>

int main() {
    int calls = 0;
    weft::parallel_for(0, 10, [calls](int) mutable { calls++; });
    return calls;
}

/* SPDX-License-Identifier: MIT */
// The C++ front end, built against weft the way a user builds it.
#include <atomic>
#include <cstdio>
#include <weft.hpp>

int main() {
    weft::pool pool(weft::config().threads(2));
    std::atomic<long> sum{0};
    weft::parallel_for(pool, 0, 10000, [&](int i) { sum += i; });
    auto [a, b] = weft::join([] { return 1; }, [] { return 2; });
    weft::scope(pool, [&](weft::scope &s) { s.spawn([&sum] { sum += 1000; }); });
    bool ok = sum == 10000L * 9999 / 2 + 1000 && a + b == 3;
    std::printf("weft.hpp %s: %s\n", weft::version(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

// System memory's copy bandwidth, measured once: the bandwidth bound of the CPU backend.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "exl/plan.h"

namespace exl::plan {

double host_copy_bandwidth_gbs() {
  static const double measured = [] {
    const std::size_t bytes = std::size_t(128) << 20;  // well past the caches, short to copy
    std::vector<char> a(bytes, 1), b(bytes, 0);
    std::vector<double> seconds;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(b.data(), a.data(), bytes);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      a[std::size_t(i)] = b[bytes - 1 - std::size_t(i)];  // keep the copies observable
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    return median > 0 ? 2.0 * double(bytes) / median / 1e9 : 0.0;
  }();
  return measured;
}

}  // namespace exl::plan

// Comparison helpers for kernel tests: relative L2 error and max absolute error of a result
// against its reference, plus an RAII guard that pins the CPU kernels' SIMD switch and thread
// count for one test body.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "exl/kernels/cpu_features.h"
#include "exl/kernels/threads.h"

namespace exl::test {

struct Diff {
  double rel_l2 = 0.0;   // ||a - ref|| / ||ref||
  double max_abs = 0.0;  // max |a - ref|
  double ref_max = 0.0;  // max |ref|
};

inline Diff compare(const float* a, const float* ref, std::size_t n) {
  double num = 0.0, den = 0.0;
  Diff d;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = double(a[i]) - double(ref[i]);
    num += e * e;
    den += double(ref[i]) * double(ref[i]);
    d.max_abs = std::max(d.max_abs, std::fabs(e));
    d.ref_max = std::max(d.ref_max, std::fabs(double(ref[i])));
    if (std::isnan(a[i]) != std::isnan(ref[i])) d.max_abs = INFINITY;
  }
  d.rel_l2 = den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
  return d;
}

// Restores the default SIMD setting and thread count when it goes out of scope.
class CpuConfig {
 public:
  CpuConfig(bool simd, int threads) : threads_(cpu_threads()) {
    set_cpu_simd_enabled(simd);
    set_cpu_threads(threads);
  }
  ~CpuConfig() {
    set_cpu_simd_enabled(true);
    set_cpu_threads(threads_);
  }
  CpuConfig(const CpuConfig&) = delete;
  CpuConfig& operator=(const CpuConfig&) = delete;

 private:
  int threads_;
};

}  // namespace exl::test

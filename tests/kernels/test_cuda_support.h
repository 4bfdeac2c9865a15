// Helpers for the GPU cases: the module's C table (skips the case when unusable), a status
// check that fails with the module's message, and fp16 random data.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "exl/cuda.h"
#include "exl/kernels/exl2.h"
#include "exl/kernels/half.h"
#include "exl/kernels/kv_quant.h"
#include "exl_test.h"
#include "module_api.h"

namespace exl::test {

// The module's store codes (allocate_cache) and the CPU store's formats.
inline KvFormat cpu_format(int code) {
  switch (code) {
    case 2: return KvFormat::fp8;
    case 3: return KvFormat::q8;
    case 4: return KvFormat::q4;
    default: return KvFormat::f16;
  }
}

// Rows [from, from + n) of k and v (fp32, `row` values a token) into the CPU stores.
inline void write_kv(KvStore& ck, KvStore& cv, const float* k, const float* v, int row, int from, int n) {
  ck.write(k + std::size_t(from) * std::size_t(row), n, from);
  cv.write(v + std::size_t(from) * std::size_t(row), n, from);
}

inline const exl_cuda_api& cuda_api() {
  std::string why;
  if (!cuda_available(&why)) skip("CUDA unavailable: " + why);
  return *static_cast<const exl_cuda_api*>(cuda_module_api());
}

#define CUDA_OK(call)                                                                                 \
  do {                                                                                                \
    const int exl_st_ = (call);                                                                       \
    if (exl_st_ != EXL_CUDA_OK)                                                                       \
      ::exl::test::fail(__FILE__, __LINE__, std::string(#call) + " -> status " + std::to_string(exl_st_) + \
                                                ": " + ::exl::test::cuda_api().last_error());          \
  } while (0)

// Random values rounded to fp16 (as fp16 bits and as the exact floats), never all zero.
struct HalfData {
  std::vector<half_bits> h;
  std::vector<float> f;
};
inline HalfData random_half(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  HalfData d;
  d.h.resize(n);
  d.f.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    d.h[i] = float_to_half(u(rng));
    d.f[i] = half_to_float(d.h[i]);
  }
  return d;
}

inline exl_cuda_exl2 to_c(const Exl2Weight& w) {
  return exl_cuda_exl2{w.q_weight, w.q_scale, w.q_scale_max, w.q_groups, w.q_perm, w.k, w.n, w.n_pad, w.groups, w.q_rows};
}

}  // namespace exl::test

// Device helpers shared by the EXL2 kernels: unit lookup, exact fp16 scales (spec §2.6) and
// the extraction of value i of a 32-row unit from its `B` packed words (spec §2.4), and the
// writer of init regions shared by the GEMV and the embedding kernel.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "exact_acc.cuh"
#include "kernels.h"

namespace exl::cuda {

// scale(g, n) = fp16(s^2 * fp16(q_scale_max / 256)), s = code + 1; returned widened to float.
__device__ __forceinline__ float exl2_scale(__half q_scale_max, std::uint32_t code) {
  const float m = __half2float(__float2half_rn(__half2float(q_scale_max) * (1.0f / 256.0f)));
  const float s = float(code + 1u);
  return __half2float(__float2half_rn(s * s * m));
}

// Value i (0..31) of a unit whose column stream is the B words w[0..B-1].
template <int B>
__device__ __forceinline__ std::uint32_t exl2_value(const std::uint32_t (&w)[B], int i) {
  const int p = i * B;
  const int wi = p >> 5;
  const int sh = p & 31;
  constexpr std::uint32_t mask = (1u << B) - 1u;
  if (sh + B <= 32) return (w[wi] >> sh) & mask;
  return __funnelshift_r(w[wi], w[wi + 1], sh) & mask;
}

// SiLU(g) * u in fp32, as every SiLU-gated input computes it (the MLP's down projection input).
__device__ __forceinline__ float silu_times(float g, float u) { return g / (1.0f + expf(-g)) * u; }
// GeGLU's tanh GELU of g times u (the families' MLP), in fp32.
__device__ __forceinline__ float gelu_tanh_times(float g, float u) {
  constexpr float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * g * (1.0f + tanhf(k * (g + 0.044715f * g * g * g))) * u;
}

// Writes init regions (zero or a repeated bias, kernels.h GemvInit), thread `tid` of `stride`.
__device__ __forceinline__ void write_inits(const GemvInit* regions, int count, int tid, int stride) {
  for (int r = 0; r < count; ++r) {
    const GemvInit& in = regions[r];
    if (in.dstq) {
      for (int i = tid; i < in.count; i += stride) in.dstq[i] = in.bias ? to_exact(in.bias[i % in.n]) : 0ll;
    } else {
      for (int i = tid; i < in.count; i += stride) in.dst[i] = in.bias ? in.bias[i % in.n] : 0.0f;
    }
  }
}

}  // namespace exl::cuda

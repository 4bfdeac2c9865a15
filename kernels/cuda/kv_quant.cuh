// Device side of the quantized KV stores (spec §6.2, §6.3), shared by the stores' own kernels
// (kv_cache.cu) and the RoPE kernel that writes a chunk's rows straight into them (rope.cu):
// fp16 rounding, the 32-point Walsh-Hadamard butterflies over a warp's 64-element chunk, FP8
// E5M2 encoding, and the Q8/Q4 quantization of a lane's pair with one scale per 32 elements.
// Layout of a warp's work: a 64-element chunk, lane l holds elements 2l and 2l + 1; the rotation's
// stage i (i = 1, 2, 4, 8, 16) pairs element e with e ^ 2i, i.e. lane l with lane l ^ i.
#pragma once
#include <cstdint>

#include <cuda_fp16.h>

namespace exl::cuda {

__device__ __forceinline__ float round_h(float x) { return __half2float(__float2half_rn(x)); }

// The 32-point butterflies over a warp's chunk (x0: even element, x1: odd element of lane l),
// rounding to fp16 after every stage when ROUND.
template <bool ROUND>
__device__ __forceinline__ void wht_pair(float& x0, float& x1, int lane) {
#pragma unroll
  for (int i = 1; i < 32; i <<= 1) {
    const float p0 = __shfl_xor_sync(0xffffffffu, x0, i);
    const float p1 = __shfl_xor_sync(0xffffffffu, x1, i);
    const bool hi = (lane & i) != 0;
    x0 = hi ? p0 - x0 : x0 + p0;
    x1 = hi ? p1 - x1 : x1 + p1;
    if constexpr (ROUND) { x0 = round_h(x0); x1 = round_h(x1); }
  }
}

// FP8 E5M2 (the high byte of an fp16), round to nearest even, saturating to the largest finite.
__device__ __forceinline__ std::uint8_t fp8_from_half_dev(std::uint16_t h) {
  std::uint16_t hi = std::uint16_t(h >> 8);
  const std::uint16_t lo = std::uint16_t(h & 0xff);
  if ((h & 0x7c00) == 0x7c00) return std::uint8_t(hi | (lo ? 1 : 0));
  if (lo > 0x80 || (lo == 0x80 && (hi & 1))) ++hi;
  if ((hi & 0x7c) == 0x7c) hi = std::uint16_t((hi & 0x80) | 0x7b);
  return std::uint8_t(hi);
}

// A lane's pair (x0, x1: rotated, fp16-rounded) quantized to `bits` (8 or 4) with the scale of
// its 32 elements (lanes 0-15 / 16-31 of the warp: every lane must call). The reference's
// roundings: u = fp16(fp16(x / absmax) * zero + zero), clamped; scale = fp16(absmax / zero).
struct KvQuantPair {
  int q0, q1;
  __half scale;
};
__device__ __forceinline__ KvQuantPair kv_quant_pair(float x0, float x1, int bits) {
  const float zero = bits == 4 ? 8.0f : 128.0f;
  const int qmax = bits == 4 ? 15 : 255;
  float am = fmaxf(fabsf(x0), fabsf(x1));
#pragma unroll
  for (int o = 1; o < 16; o <<= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, o));
  const float u0 = round_h(round_h(__fdiv_rn(x0, am)) * zero + zero);
  const float u1 = round_h(round_h(__fdiv_rn(x1, am)) * zero + zero);
  return {min(max(__float2int_rn(u0), 0), qmax), min(max(__float2int_rn(u1), 0), qmax), __float2half_rn(am * (1.0f / zero))};
}
// Stores the pair at store element pe (even; the scale at pe / 32 by the group's first lane).
__device__ __forceinline__ void kv_put_pair(std::uint8_t* data, __half* scales, std::size_t pe, const KvQuantPair& q,
                                            int bits, int lane) {
  if (bits == 4) data[pe / 2] = std::uint8_t(q.q0 | (q.q1 << 4));
  else { data[pe] = std::uint8_t(q.q0); data[pe + 1] = std::uint8_t(q.q1); }
  if ((lane & 15) == 0) scales[pe / 32] = q.scale;
}

}  // namespace exl::cuda

// Exact accumulators (kernels.h, GemvInput): int64 fixed point with 32 fraction bits, added with
// integer atomics (exact, so in any order the same), read back as fp32.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels.h"

namespace exl::cuda {

constexpr float k_exact_one = 4294967296.0f;  // 2^32
constexpr float k_exact_max = 33554432.0f;    // 2^25: 32 such terms stay below 2^63

__device__ __forceinline__ long long to_exact(float v) {
  return llrintf(fminf(fmaxf(v, -k_exact_max), k_exact_max) * k_exact_one);
}
__device__ __forceinline__ float from_exact(long long q) { return float(q) * (1.0f / k_exact_one); }
__device__ __forceinline__ float acc_at(const AccIn& a, std::size_t i) { return a.q ? from_exact(a.q[i]) : a.f[i]; }
// Values 4 i4 .. 4 i4 + 3 of the row at element `off` (16-byte aligned) as fp32.
__device__ __forceinline__ float4 load4(const AccIn& x, std::size_t off, std::size_t i4) {
  if (!x.q) return reinterpret_cast<const float4*>(x.f + off)[i4];
  const longlong2* q = reinterpret_cast<const longlong2*>(x.q + off);
  const longlong2 a = q[2 * i4], b = q[2 * i4 + 1];
  return make_float4(from_exact(a.x), from_exact(a.y), from_exact(b.x), from_exact(b.y));
}
// Host side: whether p is n-byte aligned, and whether load4 may read x from its base (rows of a
// multiple of 4 elements then stay 16-byte aligned): the vector kernels' precondition.
inline bool aligned_to(const void* p, std::size_t n) { return reinterpret_cast<std::uintptr_t>(p) % n == 0; }
inline bool load4_ok(const AccIn& x) { return aligned_to(x.q ? static_cast<const void*>(x.q) : x.f, 16); }
// Four values rounded to fp16 into out[4 i4 .. 4 i4 + 3] (8-byte aligned) with one store.
__device__ __forceinline__ void store4(__half* out, std::size_t i4, float a, float b, float c, float d) {
  const __half2 lo = __floats2half2_rn(a, b), hi = __floats2half2_rn(c, d);
  uint2 v;
  v.x = *reinterpret_cast<const unsigned*>(&lo);
  v.y = *reinterpret_cast<const unsigned*>(&hi);
  reinterpret_cast<uint2*>(out)[i4] = v;
}
// acc += v (two's complement: the unsigned add is the signed one).
__device__ __forceinline__ void add_exact(long long* acc, float v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(acc), static_cast<unsigned long long>(to_exact(v)));
}

}  // namespace exl::cuda

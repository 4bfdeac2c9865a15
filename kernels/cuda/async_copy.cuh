// Asynchronous global -> shared copies (cp.async, sm_80+; a plain copy before) and the
// tensor-core helpers shared by the EXL2 GEMV and the prefill attention: mma.m16n8k16 with fp16
// inputs and fp32 accumulators (two m16n8k8 on sm_75) and ldmatrix.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace exl::cuda {

// 16, 8 or 4 bytes, global -> shared (16: L1 bypassed).
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
  *static_cast<uint4*>(dst) = __ldg(static_cast<const uint4*>(src));
#endif
}
__device__ __forceinline__ void cp_async8(void* dst, const void* src) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
#else
  *static_cast<uint2*>(dst) = __ldg(static_cast<const uint2*>(src));
#endif
}
__device__ __forceinline__ void cp_async4(void* dst, const void* src) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
#else
  *static_cast<std::uint32_t*>(dst) = __ldg(static_cast<const std::uint32_t*>(src));
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// (a & mask) | bits in one LOP3: written as C, ptxas keeps both constants as immediates and
// needs two instructions.
template <std::uint32_t Mask, std::uint32_t Bits>
__device__ __forceinline__ std::uint32_t and_or(std::uint32_t a) {
#ifdef EXL_CUDA_EMU
  return (a & Mask) | Bits;
#else
  std::uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0xea;\n" : "=r"(r) : "r"(a), "n"(Mask), "n"(Bits));
  return r;
#endif
}

// fma.rn.f16x2: a * b + c on both fp16 halves, one rounding each.
__device__ __forceinline__ std::uint32_t hfma2_bits(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#ifdef EXL_CUDA_EMU
  return ::exl::emu::hfma2(a, b, c);
#else
  std::uint32_t r;
  asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#endif
}

// c += a . b: A 16x16 row-major (a0..a3: rows g, g+8, columns 2t.., 2t+8..), B 16x8 (b0: rows
// 2t, 2t+1 of column g; b1: rows 2t+8, 2t+9), C 16x8 fp32 (c0, c1: row g; c2, c3: row g+8;
// columns 2t, 2t+1), g = lane / 4, t = lane % 4.
__device__ __forceinline__ void mma16816(float (&c)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2,
                                         std::uint32_t a3, std::uint32_t b0, std::uint32_t b1) {
#if defined(EXL_CUDA_EMU)
  const std::uint32_t a[4] = {a0, a1, a2, a3}, b[2] = {b0, b1};
  ::exl::emu::mma_f16_f32(16, c, a, b);
#elif __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a2), "r"(a3), "r"(b1));
#endif
}

// Four 8x8 fp16 matrices from shared memory: lanes 8i .. 8i+7 give the row addresses (16 bytes
// each) of matrix i. Transposed (ldmatrix_x4_trans), lane l receives in r[i] the elements
// (2(l%4), l/4) and (2(l%4)+1, l/4) of matrix i, i.e. a B fragment when the rows in memory run
// along k; without (ldmatrix_x4), the elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1): a B fragment
// when the rows run along n (the keys' rows of Q K^T), or an A fragment's quarter.
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x4_as(std::uint32_t (&r)[4], const void* row_addr) {
#ifdef EXL_CUDA_EMU
  ::exl::emu::ldmatrix_x4(r, row_addr, Trans);
#else
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row_addr));
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
#endif
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* p) { ldmatrix_x4_as<true>(r, p); }
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* p) { ldmatrix_x4_as<false>(r, p); }

}  // namespace exl::cuda

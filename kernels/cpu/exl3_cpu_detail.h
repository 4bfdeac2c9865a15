// Private to the CPU EXL3 matmul: the pieces shared by the portable, AVX2 and AVX-512 forms
// (kernels/cpu/exl3_cpu.cpp, exl3_cpu_avx2.cpp, exl3_cpu_avx512.cpp).
#pragma once
#include <cstdint>

#include "exl/kernels/exl3.h"

namespace exl::detail {

// Sequence position of tile element (r, 0); element (r, c) is at base + 32 (c % 8) + 4 (c / 8).
inline int exl3_row_base(int r) { return 8 * ((r % 8) / 2) + 2 * (r / 8) + (r % 2); }

// One past the last stream bit of position t's value (integer rates: K bits per position;
// half-integer rates KA + 0.5: KA bits at even positions, KA + 1 at odd ones).
inline std::int64_t exl3_end_bit(int bits2, int t) {
  if (bits2 % 2 == 0) return std::int64_t(t + 1) * (bits2 / 2);
  return std::int64_t(t / 2) * bits2 + ((t & 1) ? bits2 : bits2 / 2);
}

// The codebook's 65536 values as fp32 (built once per codebook, shared, read-only).
const float* exl3_state_table(Exl3Codebook cb);

// Column strip j (16 columns) of W-hat as fp32, buf[k][16].
void exl3_decode_strip_scalar(const Exl3Weight& w, int j, const float* tab, float* buf);
void exl3_decode_strip_avx2(const Exl3Weight& w, int j, const float* tab, float* buf);
void exl3_decode_strip_avx512(const Exl3Weight& w, int j, const float* tab, float* buf);
// z[r][0..16) (row stride ldz) = sum_i x2[r][i] * buf[i][0..16), r < m.
void exl3_strip_gemm_avx2(const float* buf, const float* x2, int m, int k, float* z, int ldz);
void exl3_strip_gemm_avx512(const float* buf, const float* x2, int m, int k, float* z, int ldz);

}  // namespace exl::detail

// AVX-512 forms of the CPU EXL2 one-row GEMV (decode) and of the GEMM on dequantized blocks
// (prefill), chosen at run time when the CPU has AVX-512F (cpu_avx512_active()). A 32-column
// tile is two 16-column vectors instead of four 8-column ones, so unpacking and the multiply-adds
// take half the instructions per weight, and the GEMM's register tile grows to 12 rows (32
// registers). Each output's arithmetic is the AVX2 kernels' in the same order (GEMV: 4
// interleaved accumulators per 32-row chunk, summed in order, then scale * (sum - z * sum x);
// GEMM: one multiply-add per row of the same dequantized block), so the results are
// bit-identical to them (the exl2_cpu test compares them).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "exl2_cpu_detail.h"
#include "simd.h"

#if EXL_X86

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() (as the masked forms' pass-through),
// which -Wmaybe-uninitialized reports at every use; the values are never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace exl::detail {

namespace {

#define EXL_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
#define EXL_INLINE512 __attribute__((always_inline)) inline

constexpr int k_tile = 32;

template <int B, int I>
EXL_AVX512 EXL_INLINE512 __m512 extract16(const __m512i* w) {
  constexpr int p = I * B, j = p >> 5, s = p & 31;
  __m512i v = _mm512_srli_epi32(w[j], s);
  if constexpr (s + B > 32) v = _mm512_or_si512(v, _mm512_slli_epi32(w[j + 1], 32 - s));
  if constexpr (s + B != 32) v = _mm512_and_si512(v, _mm512_set1_epi32((1 << B) - 1));
  return _mm512_cvtepi32_ps(v);
}

template <int B, int I>
EXL_AVX512 EXL_INLINE512 void fma16(const __m512i* w, const float* x, __m512 (&acc)[4]) {
  acc[I % 4] = _mm512_fmadd_ps(extract16<B, I>(w), _mm512_set1_ps(x[I]), acc[I % 4]);
}

template <int B, int... I>
EXL_AVX512 EXL_INLINE512 void fma16_chunk(const __m512i* w, const float* x, __m512 (&acc)[4],
                                          std::integer_sequence<int, I...>) {
  (fma16<B, I>(w, x, acc), ...);
}

// Sum over the group's rows of q * x for the 16 columns at wp (the group's first packed row).
template <int B>
EXL_AVX512 __m512 group_slice16(const std::uint32_t* wp, std::int64_t stride, int rows, const float* x) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int c0 = 0; c0 < rows; c0 += 32, wp += B * stride) {
    __m512i w[B];
    for (int j = 0; j < B; ++j) w[j] = _mm512_loadu_si512(wp + j * stride);
    fma16_chunk<B>(w, x + c0, acc, std::make_integer_sequence<int, 32>());
  }
  return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]), acc[3]);
}

EXL_AVX512 __m512 group_slice16_any(int bits, const std::uint32_t* wp, std::int64_t stride, int rows, const float* x) {
  switch (bits) {
    case 2: return group_slice16<2>(wp, stride, rows, x);
    case 3: return group_slice16<3>(wp, stride, rows, x);
    case 4: return group_slice16<4>(wp, stride, rows, x);
    case 5: return group_slice16<5>(wp, stride, rows, x);
    case 6: return group_slice16<6>(wp, stride, rows, x);
    case 8: return group_slice16<8>(wp, stride, rows, x);
    default: return _mm512_setzero_ps();
  }
}

// The 16 scales of columns n0 + 16h .. +15 of group g (two q_scale words, 8 codes each).
EXL_AVX512 __m512 load_scales16(const Exl2Weight& w, const Exl2Prep& P, int g, int n0, int h) {
  const std::uint32_t* sw = w.q_scale + std::int64_t(g) * (w.n_pad / 8) + n0 / 8 + 2 * h;
  const __m512i words = _mm512_mask_blend_epi32(0xFF00, _mm512_set1_epi32(int(sw[0])), _mm512_set1_epi32(int(sw[1])));
  const __m512i shifts = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i idx = _mm512_and_si512(_mm512_srlv_epi32(words, shifts), _mm512_set1_epi32(15));
  return _mm512_i32gather_ps(idx, P.scale_tab.data() + g * 16, 4);
}

}  // namespace

EXL_AVX512 void exl2_gemv1_tile_avx512(const Exl2Weight& w, const Exl2Prep& P, int n0, float* yt) {
  const int G = int(P.groups.size());
  __m512 y[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int g = 0; g < G; ++g) {
    const Exl2Group& gr = P.groups[g];
    const PackedRows pr = packed_rows(w, n0, gr.first_qrow);
    const float* xr = P.xp.data() + gr.first_row;
    const __m512 zx = _mm512_set1_ps(float(1 << (gr.bits - 1)) * P.xsum[std::size_t(g)]);
    for (int h = 0; h < 2; ++h) {
      const __m512 sum = group_slice16_any(gr.bits, pr.p + 16 * h, pr.stride, gr.rows, xr);
      y[h] = _mm512_fmadd_ps(load_scales16(w, P, g, n0, h), _mm512_sub_ps(sum, zx), y[h]);
    }
  }
  _mm512_storeu_ps(yt, y[0]);
  _mm512_storeu_ps(yt + 16, y[1]);
}

// y[r0 .. r0 + M) += x rows . buf [rows][32]: an M x 32 register tile (M activation rows, two
// 16-column vectors), each weight vector loaded once for the M rows; per output element the
// same multiply-add sequence as the AVX2 tile.
template <int M>
EXL_AVX512 EXL_INLINE512 void gemm_rows16(const float* x, std::int64_t xs, const float* buf, int rows, float* y) {
  __m512 acc[M][2];
#pragma GCC unroll 12
  for (int r = 0; r < M; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) acc[r][v] = _mm512_loadu_ps(y + r * k_tile + 16 * v);
  for (int i = 0; i < rows; ++i) {
    const __m512 w0 = _mm512_loadu_ps(buf + i * k_tile), w1 = _mm512_loadu_ps(buf + i * k_tile + 16);
#pragma GCC unroll 12
    for (int r = 0; r < M; ++r) {
      const __m512 b = _mm512_set1_ps(x[r * xs + i]);
      acc[r][0] = _mm512_fmadd_ps(w0, b, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(w1, b, acc[r][1]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < M; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) _mm512_storeu_ps(y + r * k_tile + 16 * v, acc[r][v]);
}

EXL_AVX512 void exl2_gemm_tile_avx512(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf) {
  std::fill(yt, yt + std::int64_t(m) * k_tile, 0.0f);
  constexpr int k_block_rows = 256;
  for (int row0 = 0; row0 < w.k; row0 += k_block_rows) {
    const int rows = std::min(k_block_rows, w.k - row0);
    exl2_dequant_block_avx2(w, P, n0, row0, rows, buf);
    // Twelve rows at a time: 24 accumulators and two weight vectors of the 32 registers.
    const float* x = P.xp.data() + row0;
    int r = 0;
    for (; r + 12 <= m; r += 12) gemm_rows16<12>(x + std::int64_t(r) * w.k, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
    for (; r + 4 <= m; r += 4) gemm_rows16<4>(x + std::int64_t(r) * w.k, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
    for (; r < m; ++r) gemm_rows16<1>(x + std::int64_t(r) * w.k, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
  }
}

}  // namespace exl::detail

#else  // not x86: the dispatcher never calls it (cpu_avx512_active() is false)

namespace exl::detail {
void exl2_gemv1_tile_avx512(const Exl2Weight&, const Exl2Prep&, int, float*) {}
void exl2_gemm_tile_avx512(const Exl2Weight&, const Exl2Prep&, int, int, float*, float*) {}
}  // namespace exl::detail

#endif

// AVX2/FMA forms of the CPU EXL3 strip decode and strip GEMM (compiled with target attributes,
// called only when cpu_simd_active()). Decode: for one tile row, the 8 states of columns 0..7
// (then 8..15) come from two gathers of the tile's 32-bit words and a funnel shift built from
// variable shifts (a shift by 32 gives 0, which covers windows inside one word), then a gather
// from the state table. Same values as the portable decode, bit for bit.
#include <cstdint>

#include "exl3_cpu_detail.h"
#include "simd.h"

namespace exl::detail {

#if EXL_X86

namespace {

// MUL1 without the table: the byte sum S of state * 0x83DCD12D gives (1774 S - 905216) / 2^18
// exactly in fp32, rounded once to fp16 (F16C, round to nearest even) as ExLlamaV3's fp16 FMA does.
EXL_AVX2 inline __m256 mul1_values(__m256i st) {
  const __m256i x = _mm256_mullo_epi32(st, _mm256_set1_epi32(int(0x83DCD12Du)));
  const __m256i m8 = _mm256_set1_epi32(0xFF);
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_and_si256(x, m8), _mm256_and_si256(_mm256_srli_epi32(x, 8), m8)),
                                     _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(x, 16), m8), _mm256_srli_epi32(x, 24)));
  const __m256i num = _mm256_sub_epi32(_mm256_mullo_epi32(s, _mm256_set1_epi32(1774)), _mm256_set1_epi32(905216));
  const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(num), _mm256_set1_ps(1.0f / 262144.0f));
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The word indices and shift of the 8 states of tile row r, columns 8h .. 8h+7: they depend only
// on the rate, so they are computed once per strip (idx[r][h]: i0, i1, shift).
struct RowIdx {
  __m256i i0, i1, sh;
};

EXL_AVX2 inline RowIdx row_indices(int r, int h, int bits2) {
  const int nw = 4 * bits2, total = 128 * bits2;
  alignas(32) int i0[8], i1[8], sh[8];
  for (int c = 0; c < 8; ++c) {
    const int t = exl3_row_base(r) + 32 * c + 4 * h;
    const int b1 = int(exl3_end_bit(bits2, t)) + total;  // one past the window's last bit
    const int w1 = (b1 - 1) / 32;
    sh[c] = (w1 + 1) * 32 - b1;
    i1[c] = w1 % nw;
    i0[c] = ((b1 - 16) / 32) % nw;
  }
  return {_mm256_load_si256(reinterpret_cast<const __m256i*>(i0)), _mm256_load_si256(reinterpret_cast<const __m256i*>(i1)),
          _mm256_load_si256(reinterpret_cast<const __m256i*>(sh))};
}

EXL_AVX2 inline __m256 decode8(const int* words, const RowIdx& ix, const float* tab) {
  const __m256i hi = _mm256_i32gather_epi32(words, ix.i0, 4);
  const __m256i lo = _mm256_i32gather_epi32(words, ix.i1, 4);
  __m256i st = _mm256_or_si256(_mm256_sllv_epi32(hi, _mm256_sub_epi32(_mm256_set1_epi32(32), ix.sh)),
                               _mm256_srlv_epi32(lo, ix.sh));
  st = _mm256_and_si256(st, _mm256_set1_epi32(0xFFFF));
  if (!tab) return mul1_values(st);
  return _mm256_i32gather_ps(tab, st, 4);
}

}  // namespace

EXL_AVX2 void exl3_decode_strip_avx2(const Exl3Weight& w, int j, const float* tab, float* buf) {
  if (w.codebook == Exl3Codebook::mul1) tab = nullptr;  // computed, not looked up
  const int tiles_n = w.n / 16, tw = w.tile_words();
  RowIdx ix[16][2];
  for (int r = 0; r < 16; ++r)
    for (int h = 0; h < 2; ++h) ix[r][h] = row_indices(r, h, w.bits2);
  for (int i = 0; i < w.k / 16; ++i) {
    const int* words = reinterpret_cast<const int*>(w.trellis + (std::int64_t(i) * tiles_n + j) * tw);
    for (int r = 0; r < 16; ++r) {
      float* out = buf + std::int64_t(16 * i + r) * 16;
      _mm256_storeu_ps(out, decode8(words, ix[r][0], tab));
      _mm256_storeu_ps(out + 8, decode8(words, ix[r][1], tab));
    }
  }
}

EXL_AVX2 void exl3_strip_gemm_avx2(const float* buf, const float* x2, int m, int k, float* z, int ldz) {
  int r = 0;
  for (; r + 4 <= m; r += 4) {
    __m256 a[4][2];
    for (auto& row : a) row[0] = row[1] = _mm256_setzero_ps();
    const float* x0 = x2 + std::int64_t(r) * k;
    for (int i = 0; i < k; ++i) {
      const __m256 b0 = _mm256_loadu_ps(buf + std::int64_t(i) * 16), b1 = _mm256_loadu_ps(buf + std::int64_t(i) * 16 + 8);
      for (int q = 0; q < 4; ++q) {
        const __m256 xv = _mm256_set1_ps(x0[std::int64_t(q) * k + i]);
        a[q][0] = _mm256_fmadd_ps(xv, b0, a[q][0]);
        a[q][1] = _mm256_fmadd_ps(xv, b1, a[q][1]);
      }
    }
    for (int q = 0; q < 4; ++q) {
      _mm256_storeu_ps(z + std::int64_t(r + q) * ldz, a[q][0]);
      _mm256_storeu_ps(z + std::int64_t(r + q) * ldz + 8, a[q][1]);
    }
  }
  for (; r < m; ++r) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    const float* xr = x2 + std::int64_t(r) * k;
    for (int i = 0; i < k; ++i) {
      const __m256 xv = _mm256_set1_ps(xr[i]);
      a0 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(buf + std::int64_t(i) * 16), a0);
      a1 = _mm256_fmadd_ps(xv, _mm256_loadu_ps(buf + std::int64_t(i) * 16 + 8), a1);
    }
    _mm256_storeu_ps(z + std::int64_t(r) * ldz, a0);
    _mm256_storeu_ps(z + std::int64_t(r) * ldz + 8, a1);
  }
}

#else

void exl3_decode_strip_avx2(const Exl3Weight&, int, const float*, float*) {}
void exl3_strip_gemm_avx2(const float*, const float*, int, int, float*, int) {}

#endif

}  // namespace exl::detail

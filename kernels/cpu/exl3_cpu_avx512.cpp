// AVX-512 forms of the CPU EXL3 strip decode and strip GEMM, chosen at run time when the CPU has
// AVX-512F (cpu_avx512_active()). A 16-column strip row is one 512-bit vector: the 16 states of a
// tile row are decoded by one pair of word gathers and one table gather, and the GEMM keeps one
// accumulator per activation row (8 rows at a time). Decoded values equal the AVX2 and portable
// forms bit for bit; the products are summed in the same order per output as the AVX2 GEMM.
#include <cstdint>

#include "exl3_cpu_detail.h"
#include "simd.h"

#if EXL_X86

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace exl::detail {

#define EXL_AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

EXL_AVX512 void exl3_decode_strip_avx512(const Exl3Weight& w, int j, const float* tab, float* buf) {
  const int tiles_n = w.n / 16, tw = w.tile_words(), nw = tw / 2, total = 32 * nw;
  const __m512i cols = _mm512_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224, 4, 36, 68, 100, 132, 164, 196, 228);
  const __m512i vnw = _mm512_set1_epi32(nw);
  const bool mul1 = w.codebook == Exl3Codebook::mul1;
  for (int i = 0; i < w.k / 16; ++i) {
    const int* words = reinterpret_cast<const int*>(w.trellis + (std::int64_t(i) * tiles_n + j) * tw);
    for (int r = 0; r < 16; ++r) {
      const int base = exl3_row_base(r);
      const __m512i t = _mm512_add_epi32(cols, _mm512_set1_epi32(base));
      __m512i end;
      if (w.bits2 % 2 == 0) {
        end = _mm512_mullo_epi32(_mm512_add_epi32(t, _mm512_set1_epi32(1)), _mm512_set1_epi32(w.bits2 / 2));
      } else {  // every lane has base's parity
        end = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(t, 1), _mm512_set1_epi32(w.bits2)),
                               _mm512_set1_epi32((base & 1) ? w.bits2 : w.bits2 / 2));
      }
      const __m512i b1 = _mm512_add_epi32(end, _mm512_set1_epi32(total));
      __m512i i1 = _mm512_srli_epi32(_mm512_sub_epi32(b1, _mm512_set1_epi32(1)), 5);
      __m512i i0 = _mm512_srli_epi32(_mm512_sub_epi32(b1, _mm512_set1_epi32(16)), 5);
      const __m512i sh = _mm512_sub_epi32(_mm512_slli_epi32(_mm512_add_epi32(i1, _mm512_set1_epi32(1)), 5), b1);
      i1 = _mm512_mask_sub_epi32(i1, _mm512_cmpge_epi32_mask(i1, vnw), i1, vnw);
      i0 = _mm512_mask_sub_epi32(i0, _mm512_cmpge_epi32_mask(i0, vnw), i0, vnw);
      const __m512i hi = _mm512_i32gather_epi32(i0, words, 4);
      const __m512i lo = _mm512_i32gather_epi32(i1, words, 4);
      __m512i st = _mm512_or_si512(_mm512_sllv_epi32(hi, _mm512_sub_epi32(_mm512_set1_epi32(32), sh)),
                                   _mm512_srlv_epi32(lo, sh));
      st = _mm512_and_si512(st, _mm512_set1_epi32(0xFFFF));
      __m512 v;
      if (mul1) {  // as the AVX2 form: exact (1774 S - 905216) / 2^18, rounded once to fp16
        const __m512i x = _mm512_mullo_epi32(st, _mm512_set1_epi32(int(0x83DCD12Du)));
        const __m512i m8 = _mm512_set1_epi32(0xFF);
        const __m512i s = _mm512_add_epi32(
            _mm512_add_epi32(_mm512_and_si512(x, m8), _mm512_and_si512(_mm512_srli_epi32(x, 8), m8)),
            _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(x, 16), m8), _mm512_srli_epi32(x, 24)));
        const __m512i num = _mm512_sub_epi32(_mm512_mullo_epi32(s, _mm512_set1_epi32(1774)), _mm512_set1_epi32(905216));
        v = _mm512_mul_ps(_mm512_cvtepi32_ps(num), _mm512_set1_ps(1.0f / 262144.0f));
        v = _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      } else {
        v = _mm512_i32gather_ps(st, tab, 4);
      }
      _mm512_storeu_ps(buf + std::int64_t(16 * i + r) * 16, v);
    }
  }
}

EXL_AVX512 void exl3_strip_gemm_avx512(const float* buf, const float* x2, int m, int k, float* z, int ldz) {
  int r = 0;
  for (; r + 8 <= m; r += 8) {
    __m512 a[8];
    for (auto& v : a) v = _mm512_setzero_ps();
    const float* x0 = x2 + std::int64_t(r) * k;
    for (int i = 0; i < k; ++i) {
      const __m512 b = _mm512_loadu_ps(buf + std::int64_t(i) * 16);
      for (int q = 0; q < 8; ++q) a[q] = _mm512_fmadd_ps(_mm512_set1_ps(x0[std::int64_t(q) * k + i]), b, a[q]);
    }
    for (int q = 0; q < 8; ++q) _mm512_storeu_ps(z + std::int64_t(r + q) * ldz, a[q]);
  }
  for (; r < m; ++r) {
    __m512 a = _mm512_setzero_ps();
    const float* xr = x2 + std::int64_t(r) * k;
    for (int i = 0; i < k; ++i) a = _mm512_fmadd_ps(_mm512_set1_ps(xr[i]), _mm512_loadu_ps(buf + std::int64_t(i) * 16), a);
    _mm512_storeu_ps(z + std::int64_t(r) * ldz, a);
  }
}

}  // namespace exl::detail

#else

namespace exl::detail {
void exl3_decode_strip_avx512(const Exl3Weight&, int, const float*, float*) {}
void exl3_strip_gemm_avx512(const float*, const float*, int, int, float*, int) {}
}  // namespace exl::detail

#endif

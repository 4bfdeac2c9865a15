// AVX2/F16C form of the EXL3 tile encoder's Viterbi step (kernels/cpu/exl3_quant_cpu.cpp holds
// the driver, the portable form and the proof that this fp32 arithmetic gives ExLlamaV3's fp16
// results exactly). Called only when cpu_simd_active().
//
// Layout of one step: the 65536 states s = (hi << (16-K)) | e are visited as 2^K rows (hi) of E
// contiguous out-edges e; a block of 8*U out-edges (U 8-lane vectors) keeps its best cost (fp16
// bits, 16-bit lanes) and best hi in registers while hi runs 0 .. 2^K - 1, so cost[e] = min over
// hi is an elementwise min of 2^K contiguous vectors, replaced only where strictly smaller (ties
// keep the smallest hi). The previous cost of a state is prev[s >> K]: for K >= 3 the 8 lanes of
// a vector share it (a broadcast), for K = 2 and 1 two and four consecutive entries are spread
// over the lanes with one permute.
//
// Per 8 states: dh = RN16(dec - w) by integer rounding of the fp32 difference to 11 significant
// bits (exact here, see rn16_normal), dh*dh + prev in fp32 turned into its round-to-odd form,
// one F16C conversion to fp16, and the compare/min/blend in 16-bit lanes: fp16 costs are >= 0
// (or +inf), whose bit patterns order like their values as signed 16-bit integers.
// Variants measured on the development machine (Zen 3, one core), per Viterbi pass of 255 steps
// on a real tile at K = 4: with a branch that applies the round-to-odd correction only to blocks
// where some sum is exactly an fp16 midpoint 8.3 ms, unconditional 6.1 ms (K = 8: 7.5 / 5.8);
// blocks of U = 2 / 4 / 8 vectors 6.6 / 6.1 / 7.2 ms; earlier, on synthetic steps, F16C
// conversions for dh and fp32 compare/blend cost 10 % more than integer rounding and 16-bit lanes.
#include <cstdint>

#include "simd.h"

// The Viterbi step is the whole encoder's time: UBSan's checks there are left out (ASan stays).
#define EXL_QUANT_HOT EXL_AVX2 __attribute__((no_sanitize("undefined")))

namespace exl::detail {

#if EXL_X86

namespace {

constexpr int k_rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// RN16 of fp32 values whose exact fp16 rounding cannot be subnormal or overflow unless it is
// exact: rounds the significand to 11 bits, ties to even, on the bit pattern (the carry moves
// into the exponent correctly, inf stays inf). Used for dh = RN16(dec - w): when |dec - w| <
// 2^-14 the difference of two fp16 numbers is exact and has at most 10 significant bits (it is a
// multiple of 2^-24), so rounding to 11 bits leaves it alone; |dec - w| <= 65504 + 3.96 < 65520
// never overflows (and w = +-inf gives +-inf).
EXL_QUANT_HOT inline __m256 rn16_normal(__m256 x) {
  const __m256i b = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 13), _mm256_set1_epi32(1));
  const __m256i r = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0xFFF)), lsb);
  return _mm256_castsi256_ps(_mm256_and_si256(r, _mm256_set1_epi32(int(0xFFFFE000u))));
}

// The round-to-odd form of r = RN32(sq + pv) (sq, pv >= 0): Fast2Sum's exact error err = small -
// (r - big); where err != 0, the odd one of r and its fp32 neighbour towards err. In integer
// form q = bits(r) - (err < 0), then q | (err != 0). With pv = +inf, r - big is NaN and both
// comparisons are false: r stays inf.
EXL_QUANT_HOT inline __m256 round_to_odd(__m256 sq, __m256 pv, __m256 r) {
  const __m256 big = _mm256_max_ps(sq, pv), small = _mm256_min_ps(sq, pv);
  const __m256 z = _mm256_sub_ps(r, big);  // exact (Fast2Sum)
  const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(small, z, _CMP_LT_OQ));  // err < 0
  const __m256i nz = _mm256_castps_si256(_mm256_cmp_ps(small, z, _CMP_NEQ_OQ));  // err != 0
  const __m256i q = _mm256_or_si256(_mm256_add_epi32(_mm256_castps_si256(r), neg),
                                    _mm256_and_si256(nz, _mm256_set1_epi32(1)));
  return _mm256_castsi256_ps(q);
}

// The previous costs of the 8 states s0 .. s0+7 (s0 a multiple of 8): prev[(s0 + lane) >> K].
template <int K>
EXL_QUANT_HOT inline __m256 prev8(const float* prev, int s0) {
  if constexpr (K >= 3) {
    return _mm256_broadcast_ss(prev + (s0 >> K));
  } else if constexpr (K == 2) {
    const __m128 two = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(prev + (s0 >> 2))));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(two), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
  } else {
    const __m128 four = _mm_loadu_ps(prev + (s0 >> 1));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(four), _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
  }
}

// dh = RN16(dec - w) for 8 states.
EXL_QUANT_HOT inline __m256 dh8(__m256 dec, __m256 wv) { return rn16_normal(_mm256_sub_ps(dec, wv)); }

// c = RN16(sq + pv) (sq = dh^2, exact) of U vectors, as fp16 bits: the round-to-odd form of
// the fp32 sum, then one conversion. (Applying the correction only where the fp32 sum is exactly
// an fp16 midpoint, the only place it can change the result, behind a branch, was slower on real
// tiles: the costs hit midpoints in 8 to 28 % of the 32-lane blocks, and the branch mispredicts.)
template <int U>
EXL_QUANT_HOT inline void fma16_block(const __m256* sq, const __m256* pv, __m128i* c) {
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) c[u] = _mm256_cvtps_ph(round_to_odd(sq[u], pv[u], _mm256_add_ps(sq[u], pv[u])), k_rn);
}

// The fp16 costs RN16(RN16(dec - w)^2 + prev) of U vectors of states (row hi, out-edges e0..).
template <int K, int U>
EXL_QUANT_HOT inline void row_costs(const float* tab, __m256 wv, const float* prev, int s0, __m128i* c) {
  __m256 sq[U], pv[U];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) {
    const __m256 dh = dh8(_mm256_load_ps(tab + s0 + 8 * u), wv);
    sq[u] = _mm256_mul_ps(dh, dh);  // exact
    pv[u] = prev8<K>(prev, s0 + 8 * u);
  }
  fma16_block<U>(sq, pv, c);
}

template <int K>
EXL_QUANT_HOT void step_k(const float* tab, float w, const float* prev, int e_begin, int e_end, float* cost,
                     std::uint8_t* back) {
  constexpr int E = 65536 >> K, H = 1 << K, U = 4;
  const __m256 wv = _mm256_set1_ps(w);
  for (int e0 = e_begin; e0 < e_end; e0 += 8 * U) {
    __m128i best[U], bh[U];
    row_costs<K, U>(tab, wv, prev, e0, best);  // hi = 0
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) bh[u] = _mm_setzero_si128();
    for (int hi = 1; hi < H; ++hi) {
      __m128i c[U];
      row_costs<K, U>(tab, wv, prev, hi * E + e0, c);
      const __m128i hv = _mm_set1_epi16(short(hi));
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) {
        const __m128i lt = _mm_cmpgt_epi16(best[u], c[u]);  // c < best
        best[u] = _mm_min_epi16(c[u], best[u]);
        bh[u] = _mm_blendv_epi8(bh[u], hv, lt);
      }
    }
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) _mm256_store_ps(cost + e0 + 8 * u, _mm256_cvtph_ps(best[u]));
#pragma GCC unroll 8
    for (int u = 0; u < U; u += 2)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(back + e0 + 8 * u), _mm_packus_epi16(bh[u], bh[u + 1]));
  }
}

}  // namespace

// One Viterbi step (not the first of a pass): cost[e], back[e] (best hi) for the out-edges e in
// [e_begin, e_end) (multiples of 32). tab: the 65536 codebook values (fp32, 32-byte aligned), w:
// RN16 of the target, prev: the costs of the previous position (E = 65536 >> K entries, 32-byte
// aligned, as cost).
EXL_QUANT_HOT void exl3_viterbi_step_avx2(int K, const float* tab, float w, const float* prev, int e_begin, int e_end,
                                     float* cost, std::uint8_t* back) {
  switch (K) {
    case 1: step_k<1>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 2: step_k<2>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 3: step_k<3>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 4: step_k<4>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 5: step_k<5>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 6: step_k<6>(tab, w, prev, e_begin, e_end, cost, back); break;
    case 7: step_k<7>(tab, w, prev, e_begin, e_end, cost, back); break;
    default: step_k<8>(tab, w, prev, e_begin, e_end, cost, back); break;
  }
}

// The first step of a pass: c = RN16(dh * dh) (an exact square, one rounding), and +inf where
// pre_state >= 0 and the state's in-edge s >> K differs from pre_state. 1/256 of the work: plain
// fp32 compare and blend.
EXL_QUANT_HOT void exl3_viterbi_first_step_avx2(int K, const float* tab, float w, int pre_state, int e_begin, int e_end,
                                           float* cost, std::uint8_t* back) {
  const int E = 65536 >> K, H = 1 << K;
  const __m256 wv = _mm256_set1_ps(w);
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m128i shift = _mm_cvtsi32_si128(K);
  const __m256i pre = _mm256_set1_epi32(pre_state);
  for (int e0 = e_begin; e0 < e_end; e0 += 8) {
    __m256 best = _mm256_setzero_ps();
    __m256i bh = _mm256_setzero_si256();
    for (int hi = 0; hi < H; ++hi) {
      const int s0 = hi * E + e0;
      const __m256 dh = dh8(_mm256_load_ps(tab + s0), wv);
      __m256 c = _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_mul_ps(dh, dh), k_rn));
      if (pre_state >= 0) {
        const __m256i p = _mm256_srl_epi32(_mm256_add_epi32(_mm256_set1_epi32(s0), iota), shift);
        c = _mm256_blendv_ps(inf, c, _mm256_castsi256_ps(_mm256_cmpeq_epi32(p, pre)));
      }
      if (hi == 0) {
        best = c;
        continue;
      }
      const __m256 lt = _mm256_cmp_ps(c, best, _CMP_LT_OQ);
      best = _mm256_min_ps(c, best);  // c < best ? c : best, as lt
      bh = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(bh), _mm256_castsi256_ps(_mm256_set1_epi32(hi)), lt));
    }
    _mm256_store_ps(cost + e0, best);
    alignas(32) int h[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(h), bh);
    for (int l = 0; l < 8; ++l) back[e0 + l] = std::uint8_t(h[l]);
  }
}

// Test hook (see exl3_quant_fp16_ops in exl3_quant_cpu.cpp): the step's two fp16 operations on
// n lanes (a multiple of 8) through the same inline code.
EXL_QUANT_HOT void exl3_quant_fp16_ops_avx2(int n, const float* dec, const float* w, float* dh, const float* dh_in,
                                       const float* prev, float* c) {
  for (int i = 0; i < n; i += 8) {
    _mm256_storeu_ps(dh + i, dh8(_mm256_loadu_ps(dec + i), _mm256_loadu_ps(w + i)));
    const __m256 d = _mm256_loadu_ps(dh_in + i);
    const __m256 sq = _mm256_mul_ps(d, d), pv = _mm256_loadu_ps(prev + i);
    __m128i h;
    fma16_block<1>(&sq, &pv, &h);
    _mm256_storeu_ps(c + i, _mm256_cvtph_ps(h));
  }
}

#else

void exl3_quant_fp16_ops_avx2(int, const float*, const float*, float*, const float*, const float*, float*) {}
void exl3_viterbi_step_avx2(int, const float*, float, const float*, int, int, float*, std::uint8_t*) {}
void exl3_viterbi_first_step_avx2(int, const float*, float, int, int, int, float*, std::uint8_t*) {}

#endif

}  // namespace exl::detail

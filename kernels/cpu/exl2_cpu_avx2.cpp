// AVX2/FMA tile kernels of the CPU EXL2 matmul (compiled with target attributes, called only
// when cpu_simd_active()). A 32-row chunk of one 8-column slice is unpacked from its `bits`
// packed words with compile-time shifts (one load per word, values straddling two words are
// OR-ed together), converted to fp32 and consumed at once. Accumulation is fp32.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "exl2_cpu_detail.h"
#include "simd.h"

#if EXL_X86

namespace exl::detail {

namespace {

constexpr int k_tile = 32;
constexpr int k_block_rows = 256;

template <int B, int I>
EXL_AVX2 inline __m256 extract(const __m256i* w) {
  constexpr int p = I * B, j = p >> 5, s = p & 31;
  __m256i v = _mm256_srli_epi32(w[j], s);
  if constexpr (s + B > 32) v = _mm256_or_si256(v, _mm256_slli_epi32(w[j + 1], 32 - s));
  if constexpr (s + B != 32) v = _mm256_and_si256(v, _mm256_set1_epi32((1 << B) - 1));
  return _mm256_cvtepi32_ps(v);
}

template <int B, int... I>
EXL_AVX2 inline void decode_slice(const __m256i* w, __m256* out, std::integer_sequence<int, I...>) {
  ((out[I] = extract<B, I>(w)), ...);
}

// out[v][i] = q values (fp32) of chunk row i, columns n0 + 8v .. n0 + 8v + 7.
template <int B>
EXL_AVX2 void decode_chunk_t(const std::uint32_t* wp, std::int64_t n_pad, __m256 (*out)[32]) {
  for (int v = 0; v < 4; ++v) {
    __m256i w[B];
    for (int j = 0; j < B; ++j)
      w[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + j * n_pad + 8 * v));
    decode_slice<B>(w, out[v], std::make_integer_sequence<int, 32>());
  }
}

EXL_AVX2 void decode_chunk(int bits, const std::uint32_t* wp, std::int64_t n_pad, __m256 (*out)[32]) {
  switch (bits) {
    case 2: decode_chunk_t<2>(wp, n_pad, out); break;
    case 3: decode_chunk_t<3>(wp, n_pad, out); break;
    case 4: decode_chunk_t<4>(wp, n_pad, out); break;
    case 5: decode_chunk_t<5>(wp, n_pad, out); break;
    case 6: decode_chunk_t<6>(wp, n_pad, out); break;
    case 8: decode_chunk_t<8>(wp, n_pad, out); break;
    default: break;
  }
}

// The 8 scales of columns n0 + 8v .. +7 of group g, looked up from the group's 16-entry table.
EXL_AVX2 inline __m256 load_scales(const Exl2Weight& w, const Exl2Prep& P, int g, int n0, int v) {
  const std::uint32_t word = w.q_scale[std::int64_t(g) * (w.n_pad / 8) + n0 / 8 + v];
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256i idx = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(word)), shifts), _mm256_set1_epi32(15));
  return _mm256_i32gather_ps(P.scale_tab.data() + g * 16, idx, 4);
}

#define EXL_INLINE __attribute__((always_inline)) inline

// acc[r][I % NA] += q(row I) * x[r][I] for one 8-column slice of one 32-row chunk; several
// accumulators per activation row hide the FMA latency.
template <int B, int M, int NA, int I>
EXL_AVX2 EXL_INLINE void fma_one(const __m256i* w, const float* x, std::int64_t xs, __m256 (&acc)[M][NA]) {
  const __m256 f = extract<B, I>(w);
  acc[0][I % NA] = _mm256_fmadd_ps(f, _mm256_broadcast_ss(x + I), acc[0][I % NA]);
  if constexpr (M > 1) acc[1][I % NA] = _mm256_fmadd_ps(f, _mm256_broadcast_ss(x + xs + I), acc[1][I % NA]);
  if constexpr (M > 2) acc[2][I % NA] = _mm256_fmadd_ps(f, _mm256_broadcast_ss(x + 2 * xs + I), acc[2][I % NA]);
}

template <int B, int M, int NA, int... I>
EXL_AVX2 EXL_INLINE void fma_chunk(const __m256i* w, const float* x, std::int64_t xs, __m256 (&acc)[M][NA],
                                   std::integer_sequence<int, I...>) {
  (fma_one<B, M, NA, I>(w, x, xs, acc), ...);
}

// sum[r] = sum over the group's rows of q * x[r] for the 8 columns at wp (packed words of the
// group's first chunk); x points at the group's first row of activation row 0.
template <int B, int M>
EXL_AVX2 void group_slice(const std::uint32_t* wp, std::int64_t n_pad, int rows, const float* x, std::int64_t xs,
                          __m256* sum) {
  constexpr int NA = M == 1 ? 4 : 2;
  __m256 acc[M][NA];
  for (int r = 0; r < M; ++r)
    for (int a = 0; a < NA; ++a) acc[r][a] = _mm256_setzero_ps();
  for (int c0 = 0; c0 < rows; c0 += 32, wp += B * n_pad) {
    __m256i w[B];
    for (int j = 0; j < B; ++j) w[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + j * n_pad));
    fma_chunk<B, M, NA>(w, x + c0, xs, acc, std::make_integer_sequence<int, 32>());
  }
  for (int r = 0; r < M; ++r) {
    __m256 t = acc[r][0];
    for (int a = 1; a < NA; ++a) t = _mm256_add_ps(t, acc[r][a]);
    sum[r] = t;
  }
}

template <int M>
EXL_AVX2 void group_slice_any(int bits, const std::uint32_t* wp, std::int64_t n_pad, int rows, const float* x,
                              std::int64_t xs, __m256* sum) {
  switch (bits) {
    case 2: group_slice<2, M>(wp, n_pad, rows, x, xs, sum); break;
    case 3: group_slice<3, M>(wp, n_pad, rows, x, xs, sum); break;
    case 4: group_slice<4, M>(wp, n_pad, rows, x, xs, sum); break;
    case 5: group_slice<5, M>(wp, n_pad, rows, x, xs, sum); break;
    case 6: group_slice<6, M>(wp, n_pad, rows, x, xs, sum); break;
    case 8: group_slice<8, M>(wp, n_pad, rows, x, xs, sum); break;
    default:
      for (int r = 0; r < M; ++r) sum[r] = _mm256_setzero_ps();
      break;
  }
}

template <int M>
EXL_AVX2 void gemv_rows(const Exl2Weight& w, const Exl2Prep& P, int r0, int n0, float* yt) {
  const int G = int(P.groups.size());
  alignas(32) float yacc[M][k_tile] = {};
  for (int g = 0; g < G; ++g) {
    const Exl2Group& gr = P.groups[g];
    const PackedRows pr = packed_rows(w, n0, gr.first_qrow);
    const float* xr = P.xp.data() + std::int64_t(r0) * w.k + gr.first_row;
    const float z = float(1 << (gr.bits - 1));
    for (int v = 0; v < 4; ++v) {
      __m256 sum[M];
      group_slice_any<M>(gr.bits, pr.p + 8 * v, pr.stride, gr.rows, xr, w.k, sum);
      const __m256 sc = load_scales(w, P, g, n0, v);
      for (int r = 0; r < M; ++r) {
        const __m256 zx = _mm256_set1_ps(z * P.xsum[std::size_t(r0 + r) * G + g]);
        float* yp = yacc[r] + 8 * v;
        _mm256_store_ps(yp, _mm256_fmadd_ps(sc, _mm256_sub_ps(sum[r], zx), _mm256_load_ps(yp)));
      }
    }
  }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < k_tile; ++c) yt[std::int64_t(r0 + r) * k_tile + c] = yacc[r][c];
}

}  // namespace

EXL_AVX2 void exl2_dequant_block_avx2(const Exl2Weight& w, const Exl2Prep& P, int n0, int row0, int rows, float* buf) {
  alignas(32) __m256 vals[4][32];
  for (std::size_t g = 0; g < P.groups.size(); ++g) {
    const Exl2Group& gr = P.groups[g];
    const int lo = std::max(row0, gr.first_row), hi = std::min(row0 + rows, gr.first_row + gr.rows);
    if (lo >= hi) continue;
    __m256 sc[4];
    for (int v = 0; v < 4; ++v) sc[v] = load_scales(w, P, int(g), n0, v);
    const __m256 z = _mm256_set1_ps(float(1 << (gr.bits - 1)));
    for (int r = lo; r < hi; r += 32) {
      const int c0 = r - gr.first_row;
      const PackedRows pr = packed_rows(w, n0, gr.first_qrow + c0 / 32 * gr.bits);
      decode_chunk(gr.bits, pr.p, pr.stride, vals);
      float* out = buf + std::int64_t(r - row0) * k_tile;
      for (int i = 0; i < 32; ++i)
        for (int v = 0; v < 4; ++v)
          _mm256_storeu_ps(out + i * k_tile + 8 * v, _mm256_mul_ps(_mm256_sub_ps(vals[v][i], z), sc[v]));
    }
  }
}

EXL_AVX2 void exl2_gemv_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt) {
  int r0 = 0;
  for (; r0 + 3 <= m; r0 += 3) gemv_rows<3>(w, P, r0, n0, yt);
  if (m - r0 == 2) gemv_rows<2>(w, P, r0, n0, yt);
  else if (m - r0 == 1) gemv_rows<1>(w, P, r0, n0, yt);
}

// y[r0 .. r0 + M) += x rows . the dequantized block buf [rows][32]: an M x 32 register tile (M
// activation rows, four 8-column vectors), each weight vector loaded once for the M rows.
template <int M>
EXL_AVX2 EXL_INLINE void gemm_rows(const float* x, std::int64_t xs, const float* buf, int rows, float* y) {
  __m256 acc[M][4];
#pragma GCC unroll 4
  for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) acc[r][v] = _mm256_loadu_ps(y + r * k_tile + 8 * v);
  for (int i = 0; i < rows; ++i) {
    __m256 b[M];
#pragma GCC unroll 4
    for (int r = 0; r < M; ++r) b[r] = _mm256_broadcast_ss(x + r * xs + i);
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      const __m256 wv = _mm256_loadu_ps(buf + i * k_tile + 8 * v);
#pragma GCC unroll 4
      for (int r = 0; r < M; ++r) acc[r][v] = _mm256_fmadd_ps(wv, b[r], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < M; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) _mm256_storeu_ps(y + r * k_tile + 8 * v, acc[r][v]);
}

EXL_AVX2 void exl2_gemm_tile_avx2(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf) {
  std::fill(yt, yt + std::int64_t(m) * k_tile, 0.0f);
  for (int row0 = 0; row0 < w.k; row0 += k_block_rows) {
    const int rows = std::min(k_block_rows, w.k - row0);
    exl2_dequant_block_avx2(w, P, n0, row0, rows, buf);
    // Three rows at a time: 12 accumulators, a weight vector and three broadcasts fill the 16
    // vector registers.
    int r = 0;
    for (; r + 3 <= m; r += 3)
      gemm_rows<3>(P.xp.data() + std::int64_t(r) * w.k + row0, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
    if (m - r == 2)
      gemm_rows<2>(P.xp.data() + std::int64_t(r) * w.k + row0, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
    else if (m - r == 1)
      gemm_rows<1>(P.xp.data() + std::int64_t(r) * w.k + row0, w.k, buf, rows, yt + std::int64_t(r) * k_tile);
  }
}

}  // namespace exl::detail

#else  // not x86: the dispatcher never calls these (cpu_simd_active() is false)

namespace exl::detail {
void exl2_gemv_tile_avx2(const Exl2Weight&, const Exl2Prep&, int, int, float*) {}
void exl2_gemm_tile_avx2(const Exl2Weight&, const Exl2Prep&, int, int, float*, float*) {}
void exl2_dequant_block_avx2(const Exl2Weight&, const Exl2Prep&, int, int, int, float*) {}
}  // namespace exl::detail

#endif

// Fast CPU EXL2 matmul. Work is split over tiles of 32 output columns (threads take whole tiles).
// Activations are gathered once per call into stored (act-order) row order, with per-group
// sums so the zero point folds out: y = scale * (sum q*x - z * sum x) per group.
// Small m (<= 8): each 32-row chunk of packed words is read once and unpacked to fp32 in
// registers, then multiply-accumulated for up to 3 activation rows at a time (fp32).
// Larger m: each tile is dequantized 256 rows at a time to fp32 (scale applied) and multiplied
// as a blocked GEMM. AVX2/FMA paths are selected at run time; the portable path mirrors them.
// On CPUs with AVX-512 both take AVX-512 forms, bit-identical to the AVX2 ones.
// The AVX2 paths read the tile-contiguous copy of the packed words (Exl2Weight::q_tiled,
// exl2_tile_cpu) when the caller made one: a tile's packed rows are then one sequential stream
// instead of 128 bytes every n_pad words.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "exl/kernels/exl2.h"
#include "exl/kernels/threads.h"
#include "exl2_cpu_detail.h"
#include "simd.h"

namespace exl {

namespace {

using detail::Exl2Prep;
constexpr int k_tile = 32;
constexpr int k_gemv_max_m = 8;
constexpr int k_block_rows = 256;

Exl2Prep prepare(const Exl2Weight& w, const float* x, int m) {
  Exl2Prep P;
  P.groups = exl2_groups(w);
  const int G = int(P.groups.size());
  P.scale_tab.resize(std::size_t(G) * 16);
  for (int g = 0; g < G; ++g) {
    const float mm = round_to_half(half_to_float(w.q_scale_max[g]) * (1.0f / 256.0f));
    for (int c = 0; c < 16; ++c) P.scale_tab[g * 16 + c] = round_to_half(float((c + 1) * (c + 1)) * mm);
  }
  P.xp.resize(std::size_t(m) * w.k);
  P.xsum.resize(std::size_t(m) * G);
  for (int r = 0; r < m; ++r) {
    const float* xr = x + std::int64_t(r) * w.k;
    float* xo = P.xp.data() + std::int64_t(r) * w.k;
    for (int j = 0; j < w.k; ++j) xo[j] = xr[w.q_perm[j]];
    for (int g = 0; g < G; ++g) {
      float s = 0.0f;
      for (int i = 0; i < P.groups[g].rows; ++i) s += xo[P.groups[g].first_row + i];
      P.xsum[std::size_t(r) * G + g] = s;
    }
  }
  return P;
}

// ---- portable path ----

// Unpacks 32 rows x 32 columns of q values (as float) of one group chunk: out[i * 32 + c].
void decode_chunk_scalar(const std::uint32_t* wp, std::int64_t n_pad, int b, float* out) {
  const std::uint64_t mask = (std::uint64_t(1) << b) - 1;
  for (int i = 0; i < 32; ++i) {
    const int p = i * b, j = p >> 5, s = p & 31;
    const std::uint32_t* w0 = wp + j * n_pad;
    for (int c = 0; c < k_tile; ++c) {
      std::uint64_t bits = w0[c];
      if (s + b > 32) bits |= std::uint64_t(w0[n_pad + c]) << 32;
      out[i * k_tile + c] = float((bits >> s) & mask);
    }
  }
}

void gemv_tile_scalar(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt) {
  const int G = int(P.groups.size());
  float vals[32 * k_tile];
  std::vector<float> ga(std::size_t(m) * k_tile);
  std::fill(yt, yt + std::int64_t(m) * k_tile, 0.0f);
  for (int g = 0; g < G; ++g) {
    const Exl2Group& gr = P.groups[g];
    std::fill(ga.begin(), ga.end(), 0.0f);
    for (int c0 = 0; c0 < gr.rows; c0 += 32) {
      decode_chunk_scalar(w.q_weight + std::int64_t(gr.first_qrow + c0 / 32 * gr.bits) * w.n_pad + n0, w.n_pad,
                          gr.bits, vals);
      for (int r = 0; r < m; ++r) {
        const float* xr = P.xp.data() + std::int64_t(r) * w.k + gr.first_row + c0;
        float* a = ga.data() + std::int64_t(r) * k_tile;
        for (int i = 0; i < 32; ++i)
          for (int c = 0; c < k_tile; ++c) a[c] += vals[i * k_tile + c] * xr[i];
      }
    }
    const float z = float(1 << (gr.bits - 1));
    for (int c = 0; c < k_tile; ++c) {
      const int code = int((w.q_scale[std::int64_t(g) * (w.n_pad / 8) + (n0 + c) / 8] >> (4 * (c % 8))) & 15u);
      const float sc = P.scale_tab[g * 16 + code];
      for (int r = 0; r < m; ++r)
        yt[r * k_tile + c] += sc * (ga[r * k_tile + c] - z * P.xsum[std::size_t(r) * G + g]);
    }
  }
}

// Dequantizes the tile rows [row0, row0 + rows) (whole chunks) to fp32 with scales applied.
void dequant_block_scalar(const Exl2Weight& w, const Exl2Prep& P, int n0, int row0, int rows, float* buf) {
  float vals[32 * k_tile];
  for (std::size_t g = 0; g < P.groups.size(); ++g) {
    const Exl2Group& gr = P.groups[g];
    const int lo = std::max(row0, gr.first_row), hi = std::min(row0 + rows, gr.first_row + gr.rows);
    float sc[k_tile];
    for (int c = 0; c < k_tile && lo < hi; ++c)
      sc[c] = P.scale_tab[g * 16 + int((w.q_scale[g * (w.n_pad / 8) + (n0 + c) / 8] >> (4 * (c % 8))) & 15u)];
    const float z = float(1 << (gr.bits - 1));
    for (int r = lo; r < hi; r += 32) {
      const int c0 = r - gr.first_row;
      decode_chunk_scalar(w.q_weight + std::int64_t(gr.first_qrow + c0 / 32 * gr.bits) * w.n_pad + n0, w.n_pad,
                          gr.bits, vals);
      float* out = buf + std::int64_t(r - row0) * k_tile;
      for (int i = 0; i < 32 * k_tile; ++i) out[i] = (vals[i] - z) * sc[i % k_tile];
    }
  }
}

void gemm_tile_scalar(const Exl2Weight& w, const Exl2Prep& P, int m, int n0, float* yt, float* buf) {
  std::fill(yt, yt + std::int64_t(m) * k_tile, 0.0f);
  for (int row0 = 0; row0 < w.k; row0 += k_block_rows) {
    const int rows = std::min(k_block_rows, w.k - row0);
    dequant_block_scalar(w, P, n0, row0, rows, buf);
    for (int r = 0; r < m; ++r) {
      const float* xr = P.xp.data() + std::int64_t(r) * w.k + row0;
      float* a = yt + std::int64_t(r) * k_tile;
      for (int i = 0; i < rows; ++i)
        for (int c = 0; c < k_tile; ++c) a[c] += buf[i * k_tile + c] * xr[i];
    }
  }
}

}  // namespace

void exl2_matmul_cpu(const Exl2Weight& w, const float* x, int m, float* y) {
  if (m <= 0 || w.n <= 0) return;
  const Exl2Prep P = prepare(w, x, m);
  const bool simd = cpu_simd_active(), avx512 = cpu_avx512_active();
  const int tiles = w.n_pad / k_tile;
  parallel_for(tiles, 1, [&](std::int64_t tb, std::int64_t te) {
    std::vector<float> yt(std::size_t(m) * k_tile);
    std::vector<float> buf;
    if (m > k_gemv_max_m) buf.resize(std::size_t(k_block_rows) * k_tile);
    for (std::int64_t t = tb; t < te; ++t) {
      const int n0 = int(t) * k_tile;
      if (m <= k_gemv_max_m) {
        if (avx512 && m == 1) detail::exl2_gemv1_tile_avx512(w, P, n0, yt.data());
        else if (simd) detail::exl2_gemv_tile_avx2(w, P, m, n0, yt.data());
        else gemv_tile_scalar(w, P, m, n0, yt.data());
      } else {
        if (avx512) detail::exl2_gemm_tile_avx512(w, P, m, n0, yt.data(), buf.data());
        else if (simd) detail::exl2_gemm_tile_avx2(w, P, m, n0, yt.data(), buf.data());
        else gemm_tile_scalar(w, P, m, n0, yt.data(), buf.data());
      }
      const int cols = std::min(k_tile, w.n - n0);
      for (int r = 0; r < m; ++r)
        std::memcpy(y + std::int64_t(r) * w.n + n0, yt.data() + std::int64_t(r) * k_tile, sizeof(float) * cols);
    }
  });
}

void exl2_tile_cpu(const Exl2Weight& w, std::uint32_t* out) {
  const int tiles = w.n_pad / k_tile;
  parallel_for(tiles, 1, [&](std::int64_t tb, std::int64_t te) {
    for (std::int64_t t = tb; t < te; ++t)
      for (std::int64_t r = 0; r < w.q_rows; ++r)
        std::memcpy(out + (t * w.q_rows + r) * k_tile, w.q_weight + r * w.n_pad + t * k_tile, sizeof(std::uint32_t) * k_tile);
  });
}

}  // namespace exl

// Fast CPU EXL3 matmul. Threads take strips of 16 output columns (one trellis tile wide). Each
// strip is decoded once per call into an fp32 buffer [k][16]: for row r of a tile the 16 sequence
// positions are t = base(r) + 32c (columns 0..7) and base(r) + 4 + 32c (8..15), so a row's states
// come straight out of the tile's 32-bit words (two words, a funnel shift) and go through a
// 65536-entry state -> fp32 table of the codebook (exact fp16 values), with no scatter. The strip
// is then multiplied with the transformed activations (fp32 multiply-adds, 4 activation rows at a
// time). The input and output transforms are ExLlamaV3's (spec §4.3): x rounded to fp16, * suh in
// fp16, 128-point Hadamard rounded to fp16; output Hadamard in fp32, * svh.
// AVX2 (and AVX-512 where present) decode 8 (16) weights per step with gathers; the portable path
// computes the same values one at a time. Results equal the reference to fp32 summation order.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

#include "exl/kernels/exl3.h"
#include "exl/kernels/threads.h"
#include "exl3_cpu_detail.h"
#include "simd.h"

namespace exl {

namespace detail {

const float* exl3_state_table(Exl3Codebook cb) {
  static std::once_flag once[3];
  static std::vector<float> tabs[3];
  const int i = int(cb);
  std::call_once(once[i], [&] {
    tabs[i].resize(65536);
    for (std::uint32_t s = 0; s < 65536; ++s) tabs[i][s] = half_to_float(exl3_decode_state(s, cb));
  });
  return tabs[i].data();
}

void exl3_decode_strip_scalar(const Exl3Weight& w, int j, const float* tab, float* buf) {
  const int tiles_n = w.n / 16, tw = w.tile_words(), nw = tw / 2;
  const std::int64_t total = std::int64_t(32) * nw;
  std::vector<std::uint32_t> words(static_cast<std::size_t>(nw));
  for (int i = 0; i < w.k / 16; ++i) {
    const std::uint16_t* tile = w.trellis + (std::int64_t(i) * tiles_n + j) * tw;
    for (int q = 0; q < nw; ++q) words[q] = std::uint32_t(tile[2 * q]) | (std::uint32_t(tile[2 * q + 1]) << 16);
    for (int r = 0; r < 16; ++r) {
      float* out = buf + std::int64_t(16 * i + r) * 16;
      for (int c = 0; c < 16; ++c) {
        const int t = exl3_row_base(r) + 32 * (c % 8) + 4 * (c / 8);
        const std::int64_t b1 = exl3_end_bit(w.bits2, t) + total;  // one past the window's last bit
        const std::int64_t i1 = (b1 - 1) / 32;
        const int sh = int((i1 + 1) * 32 - b1);
        const std::uint64_t hi = words[std::size_t(((b1 - 16) / 32) % nw)], lo = words[std::size_t(i1 % nw)];
        out[c] = tab[((hi << 32 | lo) >> sh) & 0xFFFFu];
      }
    }
  }
}

}  // namespace detail

namespace {

// x2[m][k] = fp16(had128(fp16(fp16(x) * suh))) widened to fp32.
void input_transform(const Exl3Weight& w, const float* x, int m, std::vector<float>& x2) {
  std::vector<half_bits> xh(std::size_t(m) * w.k), t(xh.size());
  for (std::size_t i = 0; i < xh.size(); ++i) xh[i] = float_to_half(x[i]);
  exl3_had128_fp16_ref(xh.data(), m, w.k, w.suh, t.data());
  x2.resize(t.size());
  half_to_float_n(t.data(), x2.data(), t.size());
}

void strip_gemm_scalar(const float* buf, const float* x2, int m, int k, float* z, int ldz) {
  for (int r = 0; r < m; ++r) {
    float acc[16] = {};
    const float* xr = x2 + std::int64_t(r) * k;
    for (int i = 0; i < k; ++i)
      for (int c = 0; c < 16; ++c) acc[c] += xr[i] * buf[std::int64_t(i) * 16 + c];
    for (int c = 0; c < 16; ++c) z[std::int64_t(r) * ldz + c] = acc[c];
  }
}

}  // namespace

void exl3_matmul_cpu(const Exl3Weight& w, const float* x, int m, float* y) {
  std::vector<float> x2;
  input_transform(w, x, m, x2);
  const float* tab = detail::exl3_state_table(w.codebook);
  const bool simd = cpu_simd_active();
  const bool avx512 = cpu_avx512_active();
  const int strips = w.n / 16;
  parallel_for(strips, 1, [&](std::int64_t sb, std::int64_t se) {
    std::vector<float> buf(std::size_t(w.k) * 16);
    for (std::int64_t j = sb; j < se; ++j) {
      float* z = y + j * 16;
      if (avx512) {
        detail::exl3_decode_strip_avx512(w, int(j), tab, buf.data());
        detail::exl3_strip_gemm_avx512(buf.data(), x2.data(), m, w.k, z, w.n);
      } else if (simd) {
        detail::exl3_decode_strip_avx2(w, int(j), tab, buf.data());
        detail::exl3_strip_gemm_avx2(buf.data(), x2.data(), m, w.k, z, w.n);
      } else {
        detail::exl3_decode_strip_scalar(w, int(j), tab, buf.data());
        strip_gemm_scalar(buf.data(), x2.data(), m, w.k, z, w.n);
      }
    }
  });
  // Output transform per row and 128-column block, then the output scales.
  parallel_for(std::int64_t(m) * (w.n / 128), 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t q = b; q < e; ++q) {
      const std::int64_t r = q / (w.n / 128), c0 = (q % (w.n / 128)) * 128;
      float* v = y + r * w.n + c0;
      exl3_had128_f32_ref(v);
      for (int i = 0; i < 128; ++i) v[i] *= half_to_float(w.svh[c0 + i]);
    }
  });
}

void exl3_reconstruct_cpu(const Exl3Weight& w, half_bits* out) {
  const float* tab = detail::exl3_state_table(w.codebook);
  const bool simd = cpu_simd_active(), avx512 = cpu_avx512_active();
  parallel_for(w.n / 16, 1, [&](std::int64_t sb, std::int64_t se) {
    std::vector<float> buf(std::size_t(w.k) * 16);
    for (std::int64_t j = sb; j < se; ++j) {
      if (avx512) detail::exl3_decode_strip_avx512(w, int(j), tab, buf.data());
      else if (simd) detail::exl3_decode_strip_avx2(w, int(j), tab, buf.data());
      else detail::exl3_decode_strip_scalar(w, int(j), tab, buf.data());
      for (int i = 0; i < w.k; ++i)
        for (int c = 0; c < 16; ++c) out[std::int64_t(i) * w.n + j * 16 + c] = float_to_half(buf[std::size_t(i) * 16 + c]);
    }
  });
}

}  // namespace exl

// Reference EXL2 decoder (spec §2.7): bit-exact fp16 dequantization and a naive matmul over it.
// Layout: q_weight [q_rows, n_pad] little-endian bitstreams per column and group; q_scale 8 codes
// per word along columns; output W [k, n_pad] fp16 in original feature order (scattered through
// q_perm). Single-threaded; the matmul accumulates in double.
#include <cstdint>
#include <vector>

#include "exl/kernels/exl2.h"

namespace exl {

std::vector<Exl2Group> exl2_groups(const Exl2Weight& w) {
  std::vector<Exl2Group> out;
  out.reserve(std::size_t(w.groups));
  int row = 0;
  for (int g = 0; g < w.groups; ++g) {
    const int bits = w.q_groups[2 * g];
    const int qr = w.q_groups[2 * g + 1];
    const int next_qr = g + 1 < w.groups ? w.q_groups[2 * g + 3] : w.q_rows;
    const int rows = bits > 0 ? (next_qr - qr) * 32 / bits : 0;
    out.push_back(Exl2Group{bits, row, rows, qr});
    row += rows;
  }
  return out;
}

// scale(g, n) = fp16(s^2 * fp16(q_scale_max[g] * 2^-8)), s = code + 1 (spec §2.6).
static half_bits exl2_scale(half_bits scale_max, int code) {
  const half_bits m = float_to_half(half_to_float(scale_max) * (1.0f / 256.0f));
  const float s = float(code + 1);
  return float_to_half(s * s * half_to_float(m));
}

void exl2_dequant_ref(const Exl2Weight& w, half_bits* out) {
  const std::vector<Exl2Group> groups = exl2_groups(w);
  const std::int64_t np = w.n_pad;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Exl2Group& gr = groups[g];
    const int b = gr.bits;
    const int z = 1 << (b - 1);
    const std::uint64_t mask = (std::uint64_t(1) << b) - 1;
    for (int n = 0; n < w.n_pad; ++n) {
      const int code = int((w.q_scale[g * (np / 8) + n / 8] >> (4 * (n % 8))) & 15u);
      const float scale = half_to_float(exl2_scale(w.q_scale_max[g], code));
      for (int i = 0; i < gr.rows; ++i) {
        const int p = i * b;
        const std::int64_t word = gr.first_qrow + (p >> 5);
        const int sh = p & 31;
        std::uint64_t bits = w.q_weight[word * np + n];
        if (sh + b > 32) bits |= std::uint64_t(w.q_weight[(word + 1) * np + n]) << 32;
        const int q = int((bits >> sh) & mask);
        const int dst_row = w.q_perm[gr.first_row + i];
        out[std::int64_t(dst_row) * np + n] = float_to_half(float(q - z) * scale);
      }
    }
  }
}

void exl2_matmul_ref(const Exl2Weight& w, const float* x, int m, float* y) {
  std::vector<half_bits> wd(std::size_t(w.k) * std::size_t(w.n_pad));
  exl2_dequant_ref(w, wd.data());
  std::vector<float> wf(wd.size());
  half_to_float_n(wd.data(), wf.data(), wd.size());
  std::vector<double> acc(std::size_t(w.n));
  for (int r = 0; r < m; ++r) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int i = 0; i < w.k; ++i) {
      const double xv = x[std::int64_t(r) * w.k + i];
      const float* wrow = wf.data() + std::int64_t(i) * w.n_pad;
      for (int n = 0; n < w.n; ++n) acc[n] += xv * double(wrow[n]);
    }
    for (int n = 0; n < w.n; ++n) y[std::int64_t(r) * w.n + n] = float(acc[n]);
  }
}

}  // namespace exl

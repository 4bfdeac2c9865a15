// EXL2 packer (spec §2.4 pseudo-code): per group and column, the group's values form one
// little-endian bitstream of 32-bit words stacked along q_weight's rows; scale codes go 8 per
// word along columns. Validates the layout rules of spec §2.10 instead of aborting.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "exl/kernels/exl2_pack.h"

namespace exl {

Exl2Weight Exl2Packed::view() const {
  Exl2Weight w;
  w.q_weight = q_weight.data();
  w.q_scale = q_scale.data();
  w.q_scale_max = q_scale_max.data();
  w.q_groups = q_groups.data();
  w.q_perm = q_perm.data();
  w.k = k;
  w.n = n;
  w.n_pad = n_pad;
  w.groups = groups;
  w.q_rows = q_rows;
  return w;
}

namespace {

bool fail(std::string* error, const std::string& what) {
  if (error) *error = what;
  return false;
}

bool valid_bits(int b) { return b == 2 || b == 3 || b == 4 || b == 5 || b == 6 || b == 8; }

}  // namespace

bool exl2_pack(const Exl2PackInput& in, Exl2Packed& out, std::string* error) {
  const int groups = int(in.group_bits.size());
  if (in.k <= 0 || in.k % 32 != 0 || in.k > 65535) return fail(error, "k must be a positive multiple of 32 <= 65535");
  if (in.n <= 0) return fail(error, "n must be positive");
  if (groups == 0 || in.group_rows.size() != in.group_bits.size()) return fail(error, "group lists differ in length");
  if (!in.q || !in.scale_codes || !in.scale_max || !in.perm) return fail(error, "missing input tensor");
  const int n_pad = (in.n + 31) / 32 * 32;
  int rows_total = 0, q_rows = 0;
  for (int g = 0; g < groups; ++g) {
    const int b = in.group_bits[g], r = in.group_rows[g];
    if (!valid_bits(b)) return fail(error, "bit width must be 2, 3, 4, 5, 6 or 8");
    if (g > 0 && b > in.group_bits[g - 1]) return fail(error, "bit widths must be non-increasing");
    if (r <= 0 || r % 32 != 0) return fail(error, "group rows must be positive multiples of 32");
    rows_total += r;
    q_rows += r * b / 32;
  }
  if (rows_total != in.k) return fail(error, "group rows do not sum to k");
  if (q_rows >= 32768) return fail(error, "too many packed rows for int16 offsets");

  out = Exl2Packed{};
  out.k = in.k;
  out.n = in.n;
  out.n_pad = n_pad;
  out.groups = groups;
  out.q_rows = q_rows;
  out.q_invperm.assign(std::size_t(in.k), -1);
  out.q_perm.assign(in.perm, in.perm + in.k);
  for (int j = 0; j < in.k; ++j) {
    const int f = in.perm[j];
    if (f < 0 || f >= in.k || out.q_invperm[f] != -1) return fail(error, "perm is not a permutation of 0..k-1");
    out.q_invperm[f] = j;
  }

  out.q_weight.assign(std::size_t(q_rows) * n_pad, 0u);
  out.q_scale.assign(std::size_t(groups) * (n_pad / 8), 0u);
  out.q_scale_max.assign(in.scale_max, in.scale_max + groups);
  out.q_groups.resize(std::size_t(2 * groups));
  int row0 = 0, qrow0 = 0;
  for (int g = 0; g < groups; ++g) {
    const int b = in.group_bits[g], rows = in.group_rows[g];
    out.q_groups[2 * g] = std::int16_t(b);
    out.q_groups[2 * g + 1] = std::int16_t(qrow0);
    for (int n = 0; n < n_pad; ++n) {
      std::uint64_t acc = 0;
      int nbits = 0, out_row = qrow0;
      for (int i = 0; i < rows; ++i) {
        const std::uint32_t q = in.q[std::int64_t(row0 + i) * n_pad + n];
        if (q >> b) return fail(error, "quantized value out of range for its bit width");
        acc |= std::uint64_t(q) << nbits;
        nbits += b;
        while (nbits >= 32) {
          out.q_weight[std::size_t(out_row) * n_pad + n] = std::uint32_t(acc & 0xffffffffu);
          acc >>= 32;
          nbits -= 32;
          ++out_row;
        }
      }
      const std::uint32_t code = in.scale_codes[std::int64_t(g) * n_pad + n];
      if (code > 15) return fail(error, "scale code out of range");
      out.q_scale[std::size_t(g) * (n_pad / 8) + n / 8] |= code << (4 * (n % 8));
    }
    row0 += rows;
    qrow0 += rows * b / 32;
  }
  return true;
}

int exl2_unpack_value(const Exl2Weight& w, int row, int col) {
  const std::vector<Exl2Group> groups = exl2_groups(w);
  for (const Exl2Group& g : groups) {
    if (row < g.first_row || row >= g.first_row + g.rows) continue;
    const int p = (row - g.first_row) * g.bits;
    const std::int64_t word = g.first_qrow + (p >> 5);
    const int sh = p & 31;
    std::uint64_t bits = w.q_weight[word * w.n_pad + col];
    if (sh + g.bits > 32) bits |= std::uint64_t(w.q_weight[(word + 1) * w.n_pad + col]) << 32;
    return int((bits >> sh) & ((std::uint64_t(1) << g.bits) - 1));
  }
  return -1;
}

}  // namespace exl

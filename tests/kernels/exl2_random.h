// Random valid EXL2 layers for kernel tests (CPU and CUDA): mixed bit widths in non-increasing
// order, group sizes 32/64/128 with partial last groups, a random act-order permutation, random
// scale codes and fp16 q_scale_max values spanning normal and subnormal (also tiny subnormal
// q_scale_max). Header-only; depends only on the kernels headers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "exl/kernels/exl2.h"
#include "exl/kernels/exl2_pack.h"
#include "exl/kernels/half.h"

namespace exl::test {

// `rows` stored rows at `bits`, cut into groups of `group_size` rows (the last may be shorter).
struct Exl2Region {
  int bits;
  int rows;
  int group_size;
};

struct Exl2RandomLayer {
  Exl2Packed packed;
  Exl2PackInput input;                 // the pack input (pointers into the vectors below)
  std::vector<std::uint8_t> q;         // [k, n_pad] stored order
  std::vector<std::uint8_t> codes;     // [groups, n_pad]
  std::vector<half_bits> scale_max;    // [groups]
  std::vector<std::int32_t> perm;      // [k]
  bool ok = false;                     // exl2_pack succeeded
  std::string error;
  Exl2Weight view() const { return packed.view(); }
};

// A random q_scale_max: mostly typical magnitudes (m = q_scale_max/256 then often subnormal),
// sometimes a subnormal q_scale_max itself.
inline half_bits random_scale_max(std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float r = u(rng);
  if (r < 0.15f) return half_bits(1 + rng() % 0x3ff);           // subnormal fp16
  if (r < 0.5f) return float_to_half(0.0005f + 0.01f * u(rng));  // m subnormal
  return float_to_half(0.016f + 0.2f * u(rng));                   // m normal
}

// Builds a layer with `n` logical columns from `regions` (bits non-increasing, rows multiples
// of 32). Padded columns hold q = 2^(b-1) as the converter writes them.
inline Exl2RandomLayer make_exl2_layer(std::uint32_t seed, int n, const std::vector<Exl2Region>& regions) {
  std::mt19937 rng(seed);
  Exl2RandomLayer L;
  int k = 0;
  for (const Exl2Region& r : regions) {
    for (int done = 0; done < r.rows; done += r.group_size) {
      L.input.group_bits.push_back(r.bits);
      L.input.group_rows.push_back(std::min(r.group_size, r.rows - done));
    }
    k += r.rows;
  }
  const int n_pad = (n + 31) / 32 * 32;
  const int groups = int(L.input.group_bits.size());
  L.q.resize(std::size_t(k) * n_pad);
  L.codes.resize(std::size_t(groups) * n_pad);
  L.scale_max.resize(std::size_t(groups));
  int row0 = 0;
  for (int g = 0; g < groups; ++g) {
    const int b = L.input.group_bits[g];
    for (int i = 0; i < L.input.group_rows[g]; ++i)
      for (int c = 0; c < n_pad; ++c)
        L.q[std::size_t(row0 + i) * n_pad + c] = std::uint8_t(c < n ? rng() % (1u << b) : (1u << (b - 1)));
    for (int c = 0; c < n_pad; ++c) L.codes[std::size_t(g) * n_pad + c] = std::uint8_t(rng() % 16);
    L.scale_max[g] = random_scale_max(rng);
    row0 += L.input.group_rows[g];
  }
  L.perm.resize(std::size_t(k));
  std::iota(L.perm.begin(), L.perm.end(), 0);
  std::shuffle(L.perm.begin(), L.perm.end(), rng);
  L.input.k = k;
  L.input.n = n;
  L.input.q = L.q.data();
  L.input.scale_codes = L.codes.data();
  L.input.scale_max = L.scale_max.data();
  L.input.perm = L.perm.data();
  L.ok = exl2_pack(L.input, L.packed, &L.error);
  return L;
}

// Random mixed-width regions summing to k (a multiple of 32): a random non-increasing subset
// of {8, 6, 5, 4, 3, 2}, group sizes drawn from 32/64/128.
inline std::vector<Exl2Region> random_exl2_regions(std::mt19937& rng, int k) {
  const int widths[6] = {8, 6, 5, 4, 3, 2};
  const int sizes[3] = {32, 64, 128};
  std::vector<int> chosen;
  for (int w : widths)
    if (rng() % 2) chosen.push_back(w);
  if (chosen.empty()) chosen.push_back(widths[rng() % 6]);
  std::vector<Exl2Region> out;
  int left = k / 32;
  for (std::size_t i = 0; i < chosen.size() && left > 0; ++i) {
    const int blocks = i + 1 == chosen.size() ? left : 1 + int(rng() % std::uint32_t(left));
    out.push_back(Exl2Region{chosen[i], blocks * 32, sizes[rng() % 3]});
    left -= blocks;
  }
  return out;
}

// Random activations in [-1, 1) (never all zero).
inline std::vector<float> random_floats(std::uint32_t seed, std::size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace exl::test

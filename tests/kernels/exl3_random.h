// Random EXL3 layers for the kernel tests: random trellis words (any stream decodes), random
// sign x scale vectors of magnitude 0.25..1.75, for every bit rate and codebook.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "exl/kernels/exl3.h"

namespace exl::test {

struct Exl3RandomLayer {
  std::vector<std::uint16_t> trellis;
  std::vector<half_bits> suh, svh;
  Exl3Weight w;
  Exl3RandomLayer(int k, int n, int bits2, Exl3Codebook cb, std::uint32_t seed) {
    std::mt19937 rng(seed);
    w.k = k;
    w.n = n;
    w.bits2 = bits2;
    w.codebook = cb;
    trellis.resize(std::size_t(k / 16) * (n / 16) * w.tile_words());
    for (auto& v : trellis) v = std::uint16_t(rng() & 0xFFFFu);
    std::uniform_real_distribution<float> mag(0.25f, 1.75f);
    for (int i = 0; i < k; ++i) suh.push_back(float_to_half((rng() & 1 ? -1.0f : 1.0f) * mag(rng)));
    for (int i = 0; i < n; ++i) svh.push_back(float_to_half((rng() & 1 ? -1.0f : 1.0f) * mag(rng)));
    w.trellis = trellis.data();
    w.suh = suh.data();
    w.svh = svh.data();
  }
  Exl3RandomLayer(const Exl3RandomLayer&) = delete;
};

// Every bit rate of a codebook, as twice the rate.
inline std::vector<int> exl3_all_bits2(Exl3Codebook cb) {
  std::vector<int> out;
  for (int b2 = 2; b2 <= 16; ++b2)
    if (exl3_valid_bits2(b2, cb)) out.push_back(b2);
  return out;
}

}  // namespace exl::test

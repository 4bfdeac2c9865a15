// Reference EXL3 decoder and transforms (kernels/reference/exl3_ref.cpp).
// - The codebooks' statistics over all 65536 states against the figures measured on ExLlamaV3's
//   CUDA decode (spec §3.5: std, range, number of distinct values).
// - The trellis window: state(t) = (state(t-1) << K | v_t) & 0xFFFF and the tail-biting wrap, for
//   every rate including the half-integer ones (odd positions carry the extra bit).
// - The Hadamard butterfly: twice applied it is the identity (to fp32 rounding), and it equals
//   the matrix H[i][j] = (-1)^popcount(i & j) / sqrt(128) computed directly.
// - Bit-exactness against ExLlamaV3 1.6.5 (tests/data/exl3/reconstruct_random.safetensors, made by
//   tests/data/exl3/make_refs.py on the GPU): W-hat of random trellises for every codebook and bit
//   rate, and had_r_128 with a pre-scale.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "exl/kernels/exl3.h"
#include "exl/tensor_store.h"
#include "exl3_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

std::filesystem::path exl3_data() { return std::filesystem::path(EXL_EXL3_TEST_DATA); }

struct Stats {
  double mean = 0, sd = 0, lo = 1e9, hi = -1e9;
  std::size_t distinct = 0;
};

Stats codebook_stats(Exl3Codebook cb) {
  Stats s;
  std::set<half_bits> values;
  double sum = 0, sum2 = 0;
  for (std::uint32_t st = 0; st < 65536; ++st) {
    const half_bits h = exl3_decode_state(st, cb);
    values.insert(h);
    const double v = half_to_float(h);
    sum += v;
    sum2 += v * v;
    s.lo = std::min(s.lo, v);
    s.hi = std::max(s.hi, v);
  }
  s.mean = sum / 65536;
  s.sd = std::sqrt(sum2 / 65536 - s.mean * s.mean);
  s.distinct = values.size();
  return s;
}

}  // namespace

EXL_TEST(exl3_ref, codebook_statistics) {
  const Stats a = codebook_stats(Exl3Codebook::inst3);
  CHECK_NEAR(a.sd, 1.2437, 5e-4);
  CHECK_NEAR(a.lo, -3.957, 1e-3);
  CHECK_NEAR(a.hi, 3.973, 1e-3);
  CHECK_EQ(a.distinct, std::size_t(10598));
  const Stats m = codebook_stats(Exl3Codebook::mcg);
  CHECK_NEAR(m.sd, 1.2441, 5e-4);
  CHECK_NEAR(m.lo, -3.949, 1e-3);
  CHECK_NEAR(m.hi, 3.949, 1e-3);
  CHECK_EQ(m.distinct, std::size_t(10746));
  const Stats u = codebook_stats(Exl3Codebook::mul1);
  CHECK_NEAR(u.sd, 1.0003, 5e-4);
  CHECK_NEAR(u.mean, -0.0019, 5e-4);
  CHECK_NEAR(u.lo, -3.453, 1e-3);
  CHECK_NEAR(u.hi, 3.348, 1e-3);
  CHECK_EQ(u.distinct, std::size_t(913));
}

EXL_TEST(exl3_ref, trellis_window) {
  for (Exl3Codebook cb : {Exl3Codebook::inst3, Exl3Codebook::mul1})
    for (int bits2 : test::exl3_all_bits2(cb)) {
      test::Exl3RandomLayer L(16, 16, bits2, cb, 100u + unsigned(bits2));
      std::vector<std::uint32_t> st(256);
      for (int t = 0; t < 256; ++t) st[std::size_t(t)] = exl3_tile_state(L.trellis.data(), bits2, t);
      for (int t = 1; t < 256 + 1; ++t) {
        const int cur = t % 256;
        const int kbits = bits2 % 2 == 0 ? bits2 / 2 : bits2 / 2 + (cur & 1);  // bits of position cur
        const std::uint32_t expect = ((st[std::size_t(t - 1)] << kbits) | (st[std::size_t(cur)] & ((1u << kbits) - 1))) & 0xFFFFu;
        CHECK_MSG(st[std::size_t(cur)] == expect, "bits2 " << bits2 << " position " << cur);
      }
      // Stream bit 0 is bit 31 of the first little-endian 32-bit word: the first value's top bit.
      const int k0 = bits2 / 2;
      const std::uint32_t w0 = std::uint32_t(L.trellis[0]) | (std::uint32_t(L.trellis[1]) << 16);
      CHECK_EQ(st[0] & ((1u << k0) - 1), w0 >> (32 - k0));
    }
}

EXL_TEST(exl3_ref, hadamard_matrix) {
  std::vector<float> v(128);
  for (int j = 0; j < 128; ++j) {
    std::fill(v.begin(), v.end(), 0.0f);
    v[std::size_t(j)] = 1.0f;
    exl3_had128_f32_ref(v.data());
    for (int i = 0; i < 128; ++i) {
      const float want = (std::popcount(unsigned(i & j)) % 2 ? -1.0f : 1.0f) * 0.088388347648f;
      CHECK_MSG(v[std::size_t(i)] == want, "column " << j << " row " << i);
    }
  }
  std::vector<float> x(128), y(128);
  for (int i = 0; i < 128; ++i) x[std::size_t(i)] = y[std::size_t(i)] = std::sin(0.37f * float(i)) * 3.0f;
  exl3_had128_f32_ref(y.data());
  exl3_had128_f32_ref(y.data());
  for (int i = 0; i < 128; ++i) CHECK_NEAR(y[std::size_t(i)], x[std::size_t(i)], 2e-6);
}

EXL_TEST(exl3_ref, exllamav3_random_trellis_bit_exact) {
  const auto file = exl3_data() / "reconstruct_random.safetensors";
  if (!std::filesystem::exists(file)) test::skip("no " + file.string());
  auto st = SafetensorsFile::open(file);
  auto find = [&](const std::string& name) -> const TensorInfo* {
    for (const auto& t : st->tensors())
      if (t.name == name) return &t;
    return nullptr;
  };
  int cases = 0;
  for (Exl3Codebook cb : {Exl3Codebook::inst3, Exl3Codebook::mcg, Exl3Codebook::mul1})
    for (int bits2 : test::exl3_all_bits2(cb)) {
      const std::string k = bits2 % 2 ? std::to_string(bits2 / 2) + ".5" : std::to_string(bits2 / 2);
      const std::string suffix = std::string(exl3_codebook_name(cb)) + "." + k;
      const TensorInfo* tr = find("trellis." + suffix);
      const TensorInfo* wh = find("what." + suffix);
      CHECK_MSG(tr && wh, "missing " << suffix);
      Exl3Weight w;
      w.trellis = tr->as<std::uint16_t>();
      w.k = int(tr->shape[0]) * 16;
      w.n = int(tr->shape[1]) * 16;
      w.bits2 = bits2;
      w.codebook = cb;
      CHECK_EQ(tr->shape[2], std::int64_t(w.tile_words()));
      std::vector<half_bits> out(std::size_t(w.k) * w.n);
      exl3_reconstruct_ref(w, out.data());
      const half_bits* want = wh->as<half_bits>();
      std::size_t bad = 0;
      for (std::size_t i = 0; i < out.size(); ++i) bad += out[i] != want[i];
      CHECK_MSG(bad == 0, suffix << ": " << bad << " of " << out.size() << " values differ");
      ++cases;
    }
  CHECK_EQ(cases, 27);
  // had_r_128 with a pre-scale (the input transform of every EXL3 linear).
  const TensorInfo *x = find("had.x"), *pre = find("had.pre"), *y = find("had.y");
  CHECK(x && pre && y);
  const int rows = int(x->shape[0]), cols = int(x->shape[1]);
  std::vector<half_bits> out(std::size_t(rows) * cols);
  exl3_had128_fp16_ref(x->as<half_bits>(), rows, cols, pre->as<half_bits>(), out.data());
  for (std::size_t i = 0; i < out.size(); ++i) CHECK_MSG(out[i] == y->as<half_bits>()[i], "had element " << i);
}

// EXL2 reference decoder and packer: the spec §2.8 worked example bit for bit, pack -> unpack
// -> dequantize round trips for every bit width and mixes, and the layout rules the packer
// enforces.
#include <cstdint>
#include <random>
#include <vector>

#include "exl/kernels/exl2.h"
#include "exl/kernels/exl2_pack.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

// The spec's scale formula, written out independently of the library (spec §2.6).
float spec_scale(half_bits scale_max, int code) {
  const float m = round_to_half(half_to_float(scale_max) * 0.00390625f);
  return round_to_half(float((code + 1) * (code + 1)) * m);
}

}  // namespace

EXL_TEST(exl2_ref, spec_micro_example) {
  const int k = 64, n = 32;
  std::vector<std::uint8_t> q(std::size_t(k) * n);
  std::mt19937 rng(1);
  for (int r = 0; r < k; ++r)
    for (int c = 0; c < n; ++c) q[std::size_t(r) * n + c] = std::uint8_t(rng() % (r < 32 ? 16 : 8));
  const int col0_g0[8] = {15, 10, 0, 3, 12, 4, 4, 1};
  for (int i = 0; i < 8; ++i) q[std::size_t(i) * n] = std::uint8_t(col0_g0[i]);
  const int col0_g1[11] = {1, 1, 2, 6, 3, 2, 7, 4, 6, 7, 3};
  for (int i = 0; i < 11; ++i) q[std::size_t(32 + i) * n] = std::uint8_t(col0_g1[i]);
  // Values 11..20 and the low bit of 21 of the 3-bit stream are the spec's second word 0xB98F25BA
  // (its bit 0 is the high bit of value 10).
  const std::uint32_t w5 = 0xB98F25BAu;
  for (int i = 11; i <= 20; ++i) q[std::size_t(32 + i) * n] = std::uint8_t((w5 >> (3 * i - 32)) & 7u);
  q[std::size_t(32 + 21) * n] = std::uint8_t(((w5 >> 31) & 1u) | (q[std::size_t(53) * n] & 6u));

  std::vector<std::uint8_t> codes(std::size_t(2) * n, 0);
  const int s0[8] = {16, 11, 11, 15, 10, 13, 14, 4}, s1[8] = {9, 16, 13, 13, 12, 10, 6, 16};
  for (int c = 0; c < 8; ++c) {
    codes[c] = std::uint8_t(s0[c] - 1);
    codes[n + c] = std::uint8_t(s1[c] - 1);
  }
  for (int c = 8; c < n; ++c) codes[c] = codes[n + c] = std::uint8_t(rng() % 16);
  const half_bits scale_max[2] = {0x19D8, 0x28FA};
  CHECK_EQ(half_to_float(scale_max[0]), 0.0028533935546875f);
  CHECK_EQ(half_to_float(scale_max[1]), 0.03887939453125f);

  // Permutation: the spec's q_perm[0..7], q_invperm[0..7] and q_perm[33] = 14; the rest fills in order.
  std::vector<std::int32_t> perm(k, -1);
  const int p8[8] = {27, 55, 8, 56, 36, 29, 4, 32}, inv8[8] = {8, 39, 46, 32, 6, 18, 36, 63};
  for (int j = 0; j < 8; ++j) perm[j] = p8[j];
  for (int f = 0; f < 8; ++f) perm[inv8[f]] = f;
  perm[33] = 14;
  std::vector<bool> used(k, false);
  for (int v : perm)
    if (v >= 0) used[v] = true;
  int next = 0;
  for (int& v : perm) {
    if (v >= 0) continue;
    while (used[next]) ++next;
    v = next;
    used[next] = true;
  }

  Exl2PackInput in;
  in.k = k;
  in.n = n;
  in.group_bits = {4, 3};
  in.group_rows = {32, 32};
  in.q = q.data();
  in.scale_codes = codes.data();
  in.scale_max = scale_max;
  in.perm = perm.data();
  Exl2Packed P;
  std::string err;
  CHECK_MSG(exl2_pack(in, P, &err), err);
  CHECK_EQ(P.q_rows, 7);
  CHECK_EQ(P.q_groups.size(), std::size_t(4));
  CHECK_EQ(P.q_groups[0], 4);
  CHECK_EQ(P.q_groups[1], 0);
  CHECK_EQ(P.q_groups[2], 3);
  CHECK_EQ(P.q_groups[3], 4);
  CHECK_EQ(P.q_weight.size(), std::size_t(7 * 32));
  CHECK_EQ(P.q_scale.size(), std::size_t(2 * 4));
  CHECK_EQ(P.q_weight[0 * 32 + 0], 0x144C30AFu);
  CHECK_EQ(P.q_weight[4 * 32 + 0], 0xFE9D3C89u);
  CHECK_EQ(P.q_weight[5 * 32 + 0], 0xB98F25BAu);
  CHECK_EQ(P.q_scale[0], 0x3DC9EAAFu);
  CHECK_EQ(P.q_scale[4], 0xF59BCCF8u);
  for (int f = 0; f < 8; ++f) CHECK_EQ(P.q_invperm[f], inv8[f]);

  const Exl2Weight w = P.view();
  const std::vector<Exl2Group> groups = exl2_groups(w);
  CHECK_EQ(groups.size(), std::size_t(2));
  CHECK_EQ(groups[1].first_row, 32);
  CHECK_EQ(groups[1].rows, 32);
  CHECK_EQ(groups[1].first_qrow, 4);
  // m of group 0 is the subnormal 187 * 2^-24
  CHECK_EQ(float_to_half(half_to_float(scale_max[0]) / 256.0f), half_bits(187));

  std::vector<half_bits> W(std::size_t(k) * n);
  exl2_dequant_ref(w, W.data());
  CHECK_EQ(half_to_float(W[27 * n]), 0.0199737548828125f);
  CHECK_EQ(half_to_float(W[55 * n]), 0.005706787109375f);
  CHECK_EQ(half_to_float(W[14 * n]), -0.036895751953125f);
}

EXL_TEST(exl2_ref, round_trip_every_width) {
  const int widths[6] = {2, 3, 4, 5, 6, 8};
  std::uint32_t seed = 100;
  for (int b : widths) {
    for (int gs : {32, 64, 128}) {
      for (int n : {32, 40, 96}) {
        const test::Exl2RandomLayer L = test::make_exl2_layer(seed++, n, {{b, 160, gs}});
        CHECK_MSG(L.ok, L.error);
        const Exl2Weight w = L.view();
        CHECK_EQ(w.q_rows, 160 * b / 32);
        std::vector<half_bits> W(std::size_t(w.k) * w.n_pad);
        exl2_dequant_ref(w, W.data());
        int row0 = 0;
        for (int g = 0; g < w.groups; ++g) {
          for (int i = 0; i < L.input.group_rows[g]; ++i) {
            const int j = row0 + i;
            for (int c = 0; c < w.n_pad; ++c) {
              const int qv = L.q[std::size_t(j) * w.n_pad + c];
              CHECK_EQ(exl2_unpack_value(w, j, c), qv);
              const float scale = spec_scale(L.scale_max[g], L.codes[std::size_t(g) * w.n_pad + c]);
              const half_bits expect = float_to_half(float(qv - (1 << (b - 1))) * scale);
              CHECK_EQ(W[std::size_t(L.perm[j]) * w.n_pad + c], expect);
              if (c >= n) CHECK_EQ(half_to_float(W[std::size_t(L.perm[j]) * w.n_pad + c]), 0.0f);
            }
          }
          row0 += L.input.group_rows[g];
        }
      }
    }
  }
}

EXL_TEST(exl2_ref, round_trip_mixed_widths) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 30; ++iter) {
    const int k = 32 * (1 + int(rng() % 24));
    const int n = 1 + int(rng() % 100);
    const test::Exl2RandomLayer L = test::make_exl2_layer(rng(), n, test::random_exl2_regions(rng, k));
    CHECK_MSG(L.ok, L.error);
    const Exl2Weight w = L.view();
    const std::vector<Exl2Group> groups = exl2_groups(w);
    int total = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      CHECK_EQ(groups[g].bits, L.input.group_bits[g]);
      CHECK_EQ(groups[g].rows, L.input.group_rows[g]);
      CHECK_EQ(groups[g].first_row, total);
      total += groups[g].rows;
    }
    CHECK_EQ(total, k);
    std::vector<half_bits> W(std::size_t(k) * w.n_pad);
    exl2_dequant_ref(w, W.data());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (int i = 0; i < groups[g].rows; ++i) {
        const int j = groups[g].first_row + i;
        for (int c = 0; c < w.n_pad; ++c) {
          const int qv = L.q[std::size_t(j) * w.n_pad + c];
          CHECK_EQ(exl2_unpack_value(w, j, c), qv);
          const float scale = spec_scale(L.scale_max[g], L.codes[g * w.n_pad + c]);
          CHECK_EQ(W[std::size_t(L.perm[j]) * w.n_pad + c],
                   float_to_half(float(qv - (1 << (groups[g].bits - 1))) * scale));
        }
      }
    }
    for (int f = 0; f < k; ++f) CHECK_EQ(L.perm[L.packed.q_invperm[f]], f);
  }
}

EXL_TEST(exl2_ref, matmul_ref_matches_dequantized_product) {
  std::mt19937 rng(9);
  const test::Exl2RandomLayer L = test::make_exl2_layer(11, 50, {{6, 64, 32}, {4, 96, 64}, {2, 32, 128}});
  CHECK_MSG(L.ok, L.error);
  const Exl2Weight w = L.view();
  std::vector<half_bits> W(std::size_t(w.k) * w.n_pad);
  exl2_dequant_ref(w, W.data());
  const int m = 3;
  const std::vector<float> x = test::random_floats(3, std::size_t(m) * w.k);
  std::vector<float> y(std::size_t(m) * w.n);
  exl2_matmul_ref(w, x.data(), m, y.data());
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < w.n; ++c) {
      double acc = 0.0;
      for (int i = 0; i < w.k; ++i) acc += double(x[r * w.k + i]) * half_to_float(W[std::size_t(i) * w.n_pad + c]);
      CHECK_NEAR(y[r * w.n + c], acc, 1e-5 * (1.0 + std::fabs(acc)));
    }
}

EXL_TEST(exl2_ref, packer_rejects_bad_layouts) {
  test::Exl2RandomLayer L = test::make_exl2_layer(2, 32, {{4, 64, 32}});
  CHECK(L.ok);
  Exl2Packed P;
  std::string err;
  Exl2PackInput in = L.input;
  in.group_bits = {3, 4};  // increasing
  CHECK(!exl2_pack(in, P, &err));
  CHECK(err.find("non-increasing") != std::string::npos);
  in = L.input;
  in.group_bits = {4, 7};
  CHECK(!exl2_pack(in, P, &err));
  in = L.input;
  in.group_rows = {32, 48};
  CHECK(!exl2_pack(in, P, &err));
  std::vector<std::int32_t> bad_perm = L.perm;
  bad_perm[0] = bad_perm[1];
  in = L.input;
  in.perm = bad_perm.data();
  CHECK(!exl2_pack(in, P, &err));
  std::vector<std::uint8_t> bad_q = L.q;
  bad_q[5] = 16;  // out of range for 4 bits
  in = L.input;
  in.q = bad_q.data();
  CHECK(!exl2_pack(in, P, &err));
}

// Quantized KV cache storage: block quantization properties, write/read error per format
// (stated per test), partial-block rewrites, and the tiled CPU attention over every format
// against its reference (which dequantizes the whole prefix).
#include <cmath>
#include <random>
#include <vector>

#include "compare.h"
#include "exl/kernels/kv_quant.h"
#include "exl_test.h"

using namespace exl;

namespace {

std::vector<float> randn(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

EXL_TEST(kv_quant, hadamard_block_round_trip_and_extremes) {
  // A block whose rotated values are known: a single non-zero element e of the even lane set
  // rotates into +-x on all 32 even positions of its warp, so every group's absmax is |x|.
  std::vector<half_bits> x(512, float_to_half(0.0f)), back(512);
  x[64 * 3 + 2 * 5] = float_to_half(2.0f);
  std::vector<std::uint8_t> q(512);
  std::vector<half_bits> sc(16);
  kv_quant_block_ref(x.data(), 8, q.data(), sc.data());
  // Warp 3 holds groups 6 and 7; their absmax is 2, so the scale is 2/128.
  CHECK_EQ(half_to_float(sc[6]), 2.0f / 128.0f);
  CHECK_EQ(half_to_float(sc[7]), 2.0f / 128.0f);
  // Even lane l of warp 3 gets (-1)^popcount(l & 5) * 2: +2 maps to 255 (clamped from 256), -2 to 0.
  for (int l = 0; l < 32; ++l) {
    const int sign = (__builtin_popcount(unsigned(l) & 5u) & 1) ? -1 : 1;
    CHECK_EQ(int(q[64 * 3 + 2 * l]), sign > 0 ? 255 : 0);
  }
  kv_dequant_block_ref(q.data(), sc.data(), 8, back.data());
  // 255 decodes to 127/128 of the value, spread back over one element: within 2/128 of 2.
  CHECK_NEAR(half_to_float(back[64 * 3 + 10]), 2.0f, 2.0 / 64);
}

EXL_TEST(kv_quant, fp8_rounds_to_nearest) {
  // Every finite fp16 value maps to the nearest E5M2 value (ties to even), saturating at the
  // largest finite one; checked exhaustively against a search over all 256 codes.
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(half_bits(h));
    if (!std::isfinite(f)) continue;
    const float got = half_to_float(half_from_fp8(fp8_from_half(half_bits(h))));
    float best = NAN;
    double best_err = INFINITY;
    for (int c = 0; c < 256; ++c) {
      const float v = half_to_float(half_from_fp8(std::uint8_t(c)));
      if (!std::isfinite(v) || std::signbit(v) != std::signbit(f)) continue;
      const double err = std::fabs(double(v) - double(f));
      if (err < best_err || (err == best_err && (c & 1) == 0)) {
        best_err = err;
        best = v;
      }
    }
    CHECK_MSG(std::fabs(double(got) - double(f)) <= best_err, "fp16 " << f << " -> " << got << ", nearest " << best);
  }
}

EXL_TEST(kv_quant, write_read_error_per_format) {
  // Stated errors (relative L2 over N(0,1) data): fp16 1e-3, fp8 (E5M2, rounded) 0.06,
  // Q8 0.01, Q4 0.15.
  const struct { KvFormat f; double tol; } cases[] = {
      {KvFormat::f32, 0.0}, {KvFormat::f16, 1e-3}, {KvFormat::fp8, 0.06}, {KvFormat::q8, 0.01}, {KvFormat::q4, 0.15}};
  for (int row : {64, 128, 384, 512, 1024}) {
    for (const auto& c : cases) {
      const int tokens = 37;
      KvStore s(c.f, 64, row);
      const auto x = randn(std::size_t(tokens) * std::size_t(row), std::uint32_t(row + int(c.f)));
      s.write(x.data(), tokens, 0);
      std::vector<float> back(x.size());
      s.read(0, tokens, back.data());
      const auto d = test::compare(back.data(), x.data(), x.size());
      CHECK_MSG(d.rel_l2 <= c.tol + 1e-12, kv_format_name(c.f) << " row " << row << ": rel L2 " << d.rel_l2);
      if (c.f == KvFormat::q4 || c.f == KvFormat::q8) CHECK_MSG(d.rel_l2 > 0, "quantization must lose something");
    }
  }
}

EXL_TEST(kv_quant, token_by_token_writes_stay_within_error) {
  // Appending one token at a time re-quantizes the partial block each time (as ExLlamaV2 does);
  // the drift must stay within the format's stated error.
  for (KvFormat f : {KvFormat::q8, KvFormat::q4}) {
    const int row = 128, tokens = 45;
    KvStore s(f, 64, row);
    const auto x = randn(std::size_t(tokens) * row, 11);
    for (int t = 0; t < tokens; ++t) s.write(x.data() + std::size_t(t) * row, 1, t);
    std::vector<float> back(x.size());
    s.read(0, tokens, back.data());
    const auto d = test::compare(back.data(), x.data(), x.size());
    CHECK_MSG(d.rel_l2 <= (f == KvFormat::q8 ? 0.012 : 0.17), kv_format_name(f) << ": rel L2 " << d.rel_l2);
    // Reading a sub-range equals the same rows of a full read.
    std::vector<float> part(std::size_t(10) * row);
    s.read(17, 27, part.data());
    for (std::size_t i = 0; i < part.size(); ++i) CHECK_EQ(part[i], back[std::size_t(17) * row + i]);
  }
}

EXL_TEST(kv_quant, attention_over_every_format_matches_reference) {
  std::mt19937 rng(5);
  for (KvFormat f : {KvFormat::f16, KvFormat::fp8, KvFormat::q8, KvFormat::q4}) {
    for (auto [nh, nkv, d] : {std::tuple{6, 2, 64}, std::tuple{4, 4, 32}, std::tuple{8, 1, 128}}) {
      for (auto [past, tokens] : {std::pair{0, 5}, std::pair{1, 1}, std::pair{300, 1}, std::pair{517, 9}}) {
        const int row = nkv * d;
        KvStore k(f, past + tokens + 8, row), v(f, past + tokens + 8, row);
        if (past > 0) {
          const auto kp = randn(std::size_t(past) * row, rng()), vp = randn(std::size_t(past) * row, rng());
          k.write(kp.data(), past, 0);
          v.write(vp.data(), past, 0);
        }
        const auto kn = randn(std::size_t(tokens) * row, rng()), vn = randn(std::size_t(tokens) * row, rng());
        const auto q = randn(std::size_t(tokens) * nh * d, rng());
        AttentionParams p;
        p.tokens = tokens; p.past = past; p.n_heads = nh; p.n_kv_heads = nkv; p.head_dim = d;
        p.scale = 1.0f / std::sqrt(float(d));
        std::vector<float> ref(q.size()), out(q.size());
        attention_kvstore_ref(p, q.data(), k, v, kn.data(), vn.data(), ref.data());
        attention_kvstore_cpu(p, q.data(), k, v, kn.data(), vn.data(), out.data());
        const auto diff = test::compare(out.data(), ref.data(), ref.size());
        CHECK_MSG(diff.rel_l2 <= 1e-5, kv_format_name(f) << " nh " << nh << " past " << past << ": rel L2 " << diff.rel_l2);
      }
    }
  }
}

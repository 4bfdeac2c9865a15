// RMSNorm, SiLU-gated product, residual add and RoPE: reference values computed independently
// in double from the spec (§4.3, §4.4, §4.6), known properties of the RoPE variants, and the
// fast CPU versions against the references (fp32 kernels: relative L2 <= 1e-6,
// max abs <= 1e-5 * (1 + max |ref|)).
#include <cmath>
#include <cstdint>
#include <vector>

#include "compare.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

constexpr double k_pi = 3.14159265358979323846;

bool close_fp32(const std::vector<float>& a, const std::vector<float>& ref) {
  const test::Diff d = test::compare(a.data(), ref.data(), a.size());
  return d.ref_max > 0.0 && d.rel_l2 <= 1e-6 && d.max_abs <= 1e-5 * (1.0 + d.ref_max);
}

}  // namespace

EXL_TEST(norm_rope, rms_norm_known_values) {
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const float w[4] = {1.0f, 2.0f, 0.5f, -1.0f};
  float y[4];
  rms_norm_ref(x, 1, 4, w, DType::f32, 0.0f, y);
  const double r = 1.0 / std::sqrt(7.5);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(y[i], x[i] * w[i] * r, 1e-6);
  rms_norm_cpu(x, 1, 4, w, DType::f32, 0.0f, y);
  for (int i = 0; i < 4; ++i) CHECK_NEAR(y[i], x[i] * w[i] * r, 1e-6);
  rms_norm_ref(x, 1, 4, w, DType::f32, 1.0f, y);  // eps enters under the root
  CHECK_NEAR(y[0], 1.0 / std::sqrt(8.5), 1e-6);
}

EXL_TEST(norm_rope, rms_norm_cpu_matches_reference) {
  for (int dim : {1, 7, 64, 333, 4096}) {
    const int rows = 5;
    const std::vector<float> x = test::random_floats(dim, std::size_t(rows) * dim, -3.0f, 3.0f);
    const std::vector<float> wf = test::random_floats(dim + 1, std::size_t(dim), 0.5f, 1.5f);
    std::vector<half_bits> wh(wf.size());
    for (std::size_t i = 0; i < wf.size(); ++i) wh[i] = float_to_half(wf[i]);
    for (DType dt : {DType::f32, DType::f16}) {
      const void* w = dt == DType::f32 ? static_cast<const void*>(wf.data()) : wh.data();
      std::vector<float> ref(x.size()), out(x);
      rms_norm_ref(x.data(), rows, dim, w, dt, 1e-5f, ref.data());
      rms_norm_cpu(out.data(), rows, dim, w, dt, 1e-5f, out.data());  // aliasing allowed
      CHECK_MSG(close_fp32(out, ref), "dim=" << dim);
    }
  }
}

EXL_TEST(norm_rope, silu_mul_and_add) {
  const float g[3] = {0.0f, 1.0f, -2.0f}, u[3] = {5.0f, 2.0f, 3.0f};
  float o[3];
  silu_mul_ref(g, u, 3, o);
  CHECK_EQ(o[0], 0.0f);
  CHECK_NEAR(o[1], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
  CHECK_NEAR(o[2], 3.0 * -2.0 / (1.0 + std::exp(2.0)), 1e-6);
  const std::int64_t n = 100003;
  const std::vector<float> gate = test::random_floats(1, n, -8.0f, 8.0f), up = test::random_floats(2, n);
  std::vector<float> ref(n), out(gate);
  silu_mul_ref(gate.data(), up.data(), n, ref.data());
  silu_mul_cpu(out.data(), up.data(), n, out.data());  // out aliases gate
  CHECK(close_fp32(out, ref));
  std::vector<float> acc_ref(up), acc(up);
  add_inplace_ref(acc_ref.data(), gate.data(), n);
  add_inplace_cpu(acc.data(), gate.data(), n);
  CHECK(acc == acc_ref);
  CHECK_EQ(acc_ref[5], up[5] + gate[5]);
}

EXL_TEST(norm_rope, table_none_and_alpha) {
  RopeParams p;
  p.head_dim = 64;
  p.theta = 500000.0f;
  RopeTable t = rope_table(p);
  CHECK_EQ(t.inv_freq.size(), std::size_t(32));
  for (int i = 0; i < 32; ++i) CHECK_NEAR(t.inv_freq[i] / std::pow(500000.0, -2.0 * i / 64.0), 1.0, 1e-6);
  CHECK_EQ(t.mscale, 1.0f);
  p.alpha = 2.5f;
  t = rope_table(p);
  const double base = 500000.0 * std::pow(2.5, 64.0 / 62.0);
  for (int i = 0; i < 32; ++i) CHECK_NEAR(t.inv_freq[i] / std::pow(base, -2.0 * i / 64.0), 1.0, 1e-6);
}

EXL_TEST(norm_rope, table_llama3) {
  RopeParams p;
  p.head_dim = 128;
  p.theta = 500000.0f;
  p.scaling = RopeScaling::llama3;
  p.factor = 8.0f;
  p.low_freq_factor = 1.0f;
  p.high_freq_factor = 4.0f;
  p.original_max_position = 8192;
  const RopeTable t = rope_table(p);
  int kept = 0, divided = 0, smoothed = 0;
  for (int i = 0; i < 64; ++i) {
    const double f = 1.0 / std::pow(500000.0, 2.0 * i / 128.0);
    const double wl = 2.0 * k_pi / f;
    double e;
    if (wl < 8192.0 / 4.0) {
      e = f;
      ++kept;
    } else if (wl > 8192.0 / 1.0) {
      e = f / 8.0;
      ++divided;
    } else {
      const double s = (8192.0 / wl - 1.0) / (4.0 - 1.0);
      e = (1.0 - s) * f / 8.0 + s * f;
      ++smoothed;
    }
    CHECK_NEAR(t.inv_freq[i] / e, 1.0, 1e-6);
  }
  CHECK(kept > 0 && divided > 0 && smoothed > 0);  // all three branches exercised
  CHECK_EQ(t.inv_freq[0], 1.0f);
}

EXL_TEST(norm_rope, table_yarn_uses_max_seq_len) {
  RopeParams p;
  p.head_dim = 128;
  p.theta = 10000.0f;
  p.scaling = RopeScaling::yarn;
  p.factor = 4.0f;
  p.original_max_position = 4096;
  p.max_seq_len = 32768;
  const RopeTable t = rope_table(p);
  CHECK_NEAR(t.mscale, 0.1 * std::log(4.0) + 1.0, 1e-6);
  auto expected = [&](double len) {
    const double d = 128.0, base = 10000.0;
    auto corr = [&](double r) { return d * std::log(len / (2.0 * k_pi * r)) / (2.0 * std::log(base)); };
    const double lo = std::max(std::floor(corr(32.0)), 0.0);
    double hi = std::min(std::ceil(corr(1.0)), d - 1.0);
    if (hi == lo) hi += 0.001;
    std::vector<double> f(64);
    for (int i = 0; i < 64; ++i) {
      const double ramp = std::min(1.0, std::max(0.0, (i - lo) / (hi - lo)));
      const double pf = std::pow(base, 2.0 * i / d);
      f[i] = 1.0 / (pf * 4.0) * ramp + 1.0 / pf * (1.0 - ramp);
    }
    return f;
  };
  const std::vector<double> e = expected(32768.0), hf = expected(4096.0);
  bool differs_from_hf = false;
  for (int i = 0; i < 64; ++i) {
    CHECK_NEAR(t.inv_freq[i] / e[i], 1.0, 1e-6);
    if (std::fabs(e[i] / hf[i] - 1.0) > 1e-3) differs_from_hf = true;
  }
  CHECK(differs_from_hf);  // the quirk is visible at this length
  CHECK_NEAR(t.inv_freq[0], 1.0, 1e-6);                          // high frequencies extrapolate
  CHECK_NEAR(t.inv_freq[63] * 4.0 * std::pow(10000.0, 126.0 / 128.0), 1.0, 1e-6);  // low ones interpolate
  p.max_seq_len = 4096;  // not longer than the original context: plain RoPE
  const RopeTable plain = rope_table(p);
  CHECK_EQ(plain.mscale, 1.0f);
  for (int i = 0; i < 64; ++i) CHECK_NEAR(plain.inv_freq[i] * std::pow(10000.0, 2.0 * i / 128.0), 1.0, 1e-6);
}

EXL_TEST(norm_rope, rotation_neox_gptj_and_linear) {
  const int heads = 3, d = 16, tokens = 4;
  RopeParams p;
  p.head_dim = d;
  const RopeTable t = rope_table(p);
  const std::int32_t pos[tokens] = {0, 1, 7, 1000};
  const std::vector<float> x0 = test::random_floats(4, std::size_t(tokens) * heads * d);
  for (RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
    std::vector<float> x(x0);
    rope_apply_ref(x.data(), tokens, heads, d, pos, t, style);
    for (int tk = 0; tk < tokens; ++tk)
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < d / 2; ++i) {
          const int a = style == RopeStyle::neox ? i : 2 * i, b = style == RopeStyle::neox ? i + d / 2 : 2 * i + 1;
          const double th = pos[tk] * std::pow(10000.0, -2.0 * i / d);
          const std::size_t o = (std::size_t(tk) * heads + h) * d;
          CHECK_NEAR(x[o + a], x0[o + a] * std::cos(th) - x0[o + b] * std::sin(th), 2e-4);
          CHECK_NEAR(x[o + b], x0[o + b] * std::cos(th) + x0[o + a] * std::sin(th), 2e-4);
        }
    for (int i = 0; i < heads * d; ++i) CHECK_EQ(x[i], x0[i]);  // position 0 is the identity
    std::vector<float> xc(x0);
    rope_apply_cpu(xc.data(), tokens, heads, d, pos, t, style);
    CHECK(close_fp32(xc, x));
  }
  // linear factor 2: position 2t rotates like position t without scaling
  RopeParams pl = p;
  pl.scaling = RopeScaling::linear;
  pl.factor = 2.0f;
  const RopeTable tl = rope_table(pl);
  const std::int32_t pos2[tokens] = {0, 2, 14, 2000};
  std::vector<float> a(x0), b(x0);
  rope_apply_ref(a.data(), tokens, heads, d, pos2, tl, RopeStyle::neox);
  rope_apply_ref(b.data(), tokens, heads, d, pos, t, RopeStyle::neox);
  CHECK(close_fp32(a, b));
  // different positions give different results (the check above can fail)
  std::vector<float> c(x0);
  rope_apply_ref(c.data(), tokens, heads, d, pos2, t, RopeStyle::neox);
  CHECK(!close_fp32(c, b));
}

EXL_TEST(norm_rope, rope_cpu_matches_reference_yarn) {
  RopeParams p;
  p.head_dim = 128;
  p.scaling = RopeScaling::yarn;
  p.factor = 4.0f;
  p.original_max_position = 4096;
  p.max_seq_len = 16384;
  const RopeTable t = rope_table(p);
  const int tokens = 9, heads = 4;
  std::vector<std::int32_t> pos(tokens);
  for (int i = 0; i < tokens; ++i) pos[i] = 37 + 1500 * i;
  const std::vector<float> x0 = test::random_floats(6, std::size_t(tokens) * heads * 128);
  for (RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
    std::vector<float> r(x0), c(x0);
    rope_apply_ref(r.data(), tokens, heads, 128, pos.data(), t, style);
    rope_apply_cpu(c.data(), tokens, heads, 128, pos.data(), t, style);
    CHECK(close_fp32(c, r));
    // mscale scales the vector norm
    double n0 = 0, n1 = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      n0 += double(x0[i]) * x0[i];
      n1 += double(r[i]) * r[i];
    }
    CHECK_NEAR(std::sqrt(n1 / n0), t.mscale, 1e-5);
  }
}

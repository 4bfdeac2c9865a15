// The kernels the model families add (ops.h, attention.h, rope.h): GELU(tanh)-gated product against
// PyTorch's gelu(approximate="tanh") values, soft-capping, soft-capped attention against a direct
// computation written here, partial rotary and LongRoPE tables; the fast CPU forms against the
// references (fp32: relative L2 <= 1e-5, max abs <= 1e-5 * (1 + max |ref|)).
#include <cmath>
#include <cstdint>
#include <vector>

#include "compare.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/kv_quant.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

bool close_fp32(const std::vector<float>& a, const std::vector<float>& ref) {
  const test::Diff d = test::compare(a.data(), ref.data(), a.size());
  return d.ref_max > 0.0 && d.rel_l2 <= 1e-5 && d.max_abs <= 1e-5 * (1.0 + d.ref_max);
}

}  // namespace

EXL_TEST(family_ops, gelu_tanh_matches_pytorch) {
  // torch.nn.functional.gelu(x, approximate="tanh") in float64 (torch 2.15).
  const float x[7] = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.5f};
  const double torch_ref[7] = {-0.0036373920817729943, -0.15880800939172324, -0.100324649298315, 0.0,
                               0.34571400982514394, 0.8411919906082768, 2.484915733910001};
  const float up[7] = {1, 1, 1, 1, 1, 1, 2};
  float a[7], b[7];
  gelu_tanh_mul_ref(x, up, 7, a);
  gelu_tanh_mul_cpu(x, up, 7, b);
  for (int i = 0; i < 7; ++i) {
    CHECK_NEAR(a[i], torch_ref[i] * up[i], 1e-6);
    CHECK_NEAR(b[i], torch_ref[i] * up[i], 2e-6);
  }
  const std::vector<float> g = test::random_floats(11, 5000, -6.0f, 6.0f), u = test::random_floats(12, 5000);
  std::vector<float> r(g.size()), c(g);
  gelu_tanh_mul_ref(g.data(), u.data(), std::int64_t(g.size()), r.data());
  gelu_tanh_mul_cpu(c.data(), u.data(), std::int64_t(g.size()), c.data());  // aliasing allowed
  CHECK(close_fp32(c, r));
}

EXL_TEST(family_ops, softcap) {
  std::vector<float> x = {-100.0f, -5.0f, 0.0f, 1.0f, 30.0f, 1000.0f}, y = x;
  softcap_inplace_ref(x.data(), 6, 10.0f);
  softcap_inplace_cpu(y.data(), 6, 10.0f);
  const double expect[6] = {-10.0 * std::tanh(10.0), -10.0 * std::tanh(0.5), 0.0, 10.0 * std::tanh(0.1),
                            10.0 * std::tanh(3.0), 10.0};
  for (int i = 0; i < 6; ++i) {
    CHECK_NEAR(x[i], expect[i], 1e-5);
    CHECK_NEAR(y[i], expect[i], 1e-5);
    CHECK(std::fabs(y[i]) <= 10.0f);
  }
}

// Soft-capped windowed GQA attention: reference vs a direct computation, CPU vs reference.
EXL_TEST(family_ops, attention_softcap) {
  const int tokens = 9, past = 14, nh = 4, nkv = 2, d = 24, total = past + tokens, window = 10;
  const float cap = 1.5f, scale = 0.3f;
  const std::size_t row = std::size_t(nkv) * d;
  const std::vector<float> q = test::random_floats(21, std::size_t(tokens) * nh * d, -2.0f, 2.0f);
  const std::vector<float> k = test::random_floats(22, total * row, -2.0f, 2.0f);
  const std::vector<float> v = test::random_floats(23, total * row);
  AttentionParams p;
  p.tokens = tokens; p.past = past; p.n_heads = nh; p.n_kv_heads = nkv; p.head_dim = d;
  p.scale = scale; p.cache_dtype = DType::f32; p.window = window; p.softcap = cap;
  std::vector<float> ref(q.size()), out(q.size()), direct(q.size());
  attention_ref(p, q.data(), k.data(), v.data(), ref.data());
  attention_cpu(p, q.data(), k.data(), v.data(), out.data());
  for (int t = 0; t < tokens; ++t)
    for (int h = 0; h < nh; ++h) {
      const int g = h / (nh / nkv), last = past + t;
      std::vector<double> w;
      double mx = -INFINITY, sum = 0;
      for (int j = last - window + 1; j <= last; ++j) {
        double s = 0;
        for (int e = 0; e < d; ++e) s += double(q[(std::size_t(t) * nh + h) * d + e]) * k[(std::size_t(j) * nkv + g) * d + e];
        w.push_back(cap * std::tanh(s * scale / cap));
        mx = std::max(mx, w.back());
      }
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int e = 0; e < d; ++e) {
        double o = 0;
        for (int j = 0; j < window; ++j) o += w[j] / sum * v[(std::size_t(last - window + 1 + j) * nkv + g) * d + e];
        direct[(std::size_t(t) * nh + h) * d + e] = float(o);
      }
    }
  CHECK(close_fp32(ref, direct));
  CHECK(close_fp32(out, ref));
  p.softcap = 0.0f;  // the cap changes the result
  attention_ref(p, q.data(), k.data(), v.data(), out.data());
  CHECK(test::compare(out.data(), ref.data(), out.size()).rel_l2 > 1e-3);
}

// Partial rotary: the first rotary_dim of each head rotate as a head of that size would; the rest
// pass through. CPU equals the reference.
EXL_TEST(family_ops, rope_partial_rotary) {
  const int tokens = 5, heads = 3, d = 16, rd = 12;
  RopeParams p;
  p.head_dim = d;
  p.rotary_dim = rd;
  p.theta = 10000.0f;
  const RopeTable t = rope_table(p);
  CHECK_EQ(int(t.inv_freq.size()), rd / 2);
  RopeParams full = p;
  full.head_dim = rd;
  full.rotary_dim = 0;
  const RopeTable tf = rope_table(full);
  const std::vector<std::int32_t> pos = {0, 3, 7, 40, 100};
  const std::vector<float> x = test::random_floats(31, std::size_t(tokens) * heads * d);
  std::vector<float> a = x, b = x;
  rope_apply_ref(a.data(), tokens, heads, d, pos.data(), t, RopeStyle::neox);
  rope_apply_cpu(b.data(), tokens, heads, d, pos.data(), t, RopeStyle::neox);
  CHECK(close_fp32(b, a));
  for (int tk = 0; tk < tokens; ++tk)
    for (int h = 0; h < heads; ++h) {
      const std::size_t base = (std::size_t(tk) * heads + h) * d;
      std::vector<float> part(x.begin() + std::ptrdiff_t(base), x.begin() + std::ptrdiff_t(base + rd));
      rope_apply_ref(part.data(), 1, 1, rd, &pos[std::size_t(tk)], tf, RopeStyle::neox);
      for (int i = 0; i < rd; ++i) CHECK_NEAR(a[base + i], part[std::size_t(i)], 1e-6);
      for (int i = rd; i < d; ++i) CHECK_EQ(a[base + i], x[base + i]);
    }
}

// LongRoPE: inv_freq[i] = 1 / (factor[i] * theta^(2i/d)), short or long factors by the flag, and
// the attention factor sqrt(1 + ln(max / original) / ln(original)) on cos and sin.
EXL_TEST(family_ops, longrope_table) {
  RopeParams p;
  p.head_dim = 16;
  p.rotary_dim = 8;
  p.theta = 10000.0f;
  p.scaling = RopeScaling::longrope;
  p.longrope_short = {1.0f, 1.5f, 2.0f, 3.0f};
  p.longrope_long = {2.0f, 4.0f, 8.0f, 16.0f};
  p.original_max_position = 32;
  p.max_seq_len = 128;
  for (bool use_long : {false, true}) {
    p.longrope_use_long = use_long;
    const RopeTable t = rope_table(p);
    CHECK_EQ(int(t.inv_freq.size()), 4);
    for (int i = 0; i < 4; ++i) {
      const double f = use_long ? p.longrope_long[std::size_t(i)] : p.longrope_short[std::size_t(i)];
      CHECK_NEAR(t.inv_freq[std::size_t(i)], 1.0 / (f * std::pow(10000.0, 2.0 * i / 8.0)), 1e-7);
    }
    CHECK_NEAR(t.mscale, std::sqrt(1.0 + std::log(4.0) / std::log(32.0)), 1e-6);
  }
  p.attention_factor = 1.25f;  // as configured
  CHECK_NEAR(rope_table(p).mscale, 1.25, 1e-7);
}

// The quantized-cache attention with a window and soft-capping: the CPU kernel (tiles, online
// softmax) against the reference (whole dequantized prefix, attention_ref).
EXL_TEST(family_ops, attention_kvstore_window_softcap) {
  for (KvFormat f : {KvFormat::q8, KvFormat::q4}) {
    for (auto [past, tokens, window] : {std::tuple{300, 9, 16}, std::tuple{40, 1, 7}, std::tuple{0, 30, 12}}) {
      const int nh = 4, nkv = 2, d = 32, row = nkv * d;
      KvStore k(f, past + tokens + 8, row), v(f, past + tokens + 8, row);
      if (past > 0) {
        const auto kp = test::random_floats(41, std::size_t(past) * row, -2.0f, 2.0f);
        const auto vp = test::random_floats(42, std::size_t(past) * row);
        k.write(kp.data(), past, 0);
        v.write(vp.data(), past, 0);
      }
      const auto kn = test::random_floats(43, std::size_t(tokens) * row, -2.0f, 2.0f);
      const auto vn = test::random_floats(44, std::size_t(tokens) * row);
      const auto q = test::random_floats(45, std::size_t(tokens) * nh * d, -2.0f, 2.0f);
      AttentionParams p;
      p.tokens = tokens; p.past = past; p.n_heads = nh; p.n_kv_heads = nkv; p.head_dim = d;
      p.scale = 0.25f; p.window = window; p.softcap = 1.5f;
      std::vector<float> ref(q.size()), out(q.size());
      attention_kvstore_ref(p, q.data(), k, v, kn.data(), vn.data(), ref.data());
      attention_kvstore_cpu(p, q.data(), k, v, kn.data(), vn.data(), out.data());
      CHECK_MSG(close_fp32(out, ref), kv_format_name(f) << " past " << past << " window " << window);
    }
  }
}

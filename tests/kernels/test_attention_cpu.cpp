// Attention: the reference against a direct masked-softmax computation written independently
// here (full score matrix, -inf mask, GQA head h -> kv head h / (n_heads / n_kv_heads)), with
// past > 0, sliding windows and fp16 caches; the fast CPU kernel against the reference
// (fp32 softmax: relative L2 <= 1e-5, max abs <= 1e-5 * (1 + max |ref|)); the cache write.
#include <cmath>
#include <cstdint>
#include <vector>

#include "compare.h"
#include "exl/kernels/attention.h"
#include "exl2_random.h"
#include "exl_test.h"

using namespace exl;

namespace {

struct Case {
  int tokens, past, n_heads, n_kv, d, window;
  DType dt;
};

// Direct computation: out = softmax(mask(scale * Q K^T)) V per head.
std::vector<float> direct(const Case& c, const std::vector<float>& q, const std::vector<float>& kf,
                          const std::vector<float>& vf) {
  const int total = c.past + c.tokens;
  const double scale = 1.0 / std::sqrt(double(c.d));
  std::vector<float> out(std::size_t(c.tokens) * c.n_heads * c.d);
  for (int h = 0; h < c.n_heads; ++h) {
    const int g = h / (c.n_heads / c.n_kv);
    for (int i = 0; i < c.tokens; ++i) {
      std::vector<double> s(total, -INFINITY);
      for (int j = 0; j < total; ++j) {
        const bool visible = j <= c.past + i && (c.window == 0 || c.past + i - j < c.window);
        if (!visible) continue;
        double dot = 0;
        for (int e = 0; e < c.d; ++e)
          dot += double(q[(std::size_t(i) * c.n_heads + h) * c.d + e]) * kf[(std::size_t(j) * c.n_kv + g) * c.d + e];
        s[j] = dot * scale;
      }
      double mx = -INFINITY, sum = 0;
      for (double v : s) mx = std::max(mx, v);
      for (double& v : s) sum += (v = std::exp(v - mx));
      for (int e = 0; e < c.d; ++e) {
        double o = 0;
        for (int j = 0; j < total; ++j) o += s[j] / sum * vf[(std::size_t(j) * c.n_kv + g) * c.d + e];
        out[(std::size_t(i) * c.n_heads + h) * c.d + e] = float(o);
      }
    }
  }
  return out;
}

void run_case(const Case& c, std::uint32_t seed) {
  const int total = c.past + c.tokens, cap = total + 3;
  const std::size_t row = std::size_t(c.n_kv) * c.d;
  const std::vector<float> q = test::random_floats(seed, std::size_t(c.tokens) * c.n_heads * c.d, -2.0f, 2.0f);
  const std::vector<float> k = test::random_floats(seed + 1, total * row, -2.0f, 2.0f);
  const std::vector<float> v = test::random_floats(seed + 2, total * row);
  const int es = c.dt == DType::f16 ? 2 : 4;
  std::vector<unsigned char> kc(std::size_t(cap) * row * es, 0), vc(kc.size(), 0);
  // past rows first, then the new tokens' rows, through the cache writer
  kv_cache_write_cpu(k.data(), v.data(), c.past, 0, c.n_kv, c.d, c.dt, kc.data(), vc.data());
  kv_cache_write_cpu(k.data() + c.past * row, v.data() + c.past * row, c.tokens, c.past, c.n_kv, c.d, c.dt,
                     kc.data(), vc.data());
  std::vector<float> kf(total * row), vf(total * row);
  for (std::size_t i = 0; i < kf.size(); ++i) {
    kf[i] = c.dt == DType::f16 ? round_to_half(k[i]) : k[i];
    vf[i] = c.dt == DType::f16 ? round_to_half(v[i]) : v[i];
    if (c.dt == DType::f16) CHECK_EQ(reinterpret_cast<const half_bits*>(kc.data())[i], float_to_half(k[i]));
  }
  AttentionParams p;
  p.tokens = c.tokens;
  p.past = c.past;
  p.n_heads = c.n_heads;
  p.n_kv_heads = c.n_kv;
  p.head_dim = c.d;
  p.scale = float(1.0 / std::sqrt(double(c.d)));
  p.cache_dtype = c.dt;
  p.window = c.window;
  const std::vector<float> expect = direct(c, q, kf, vf);
  std::vector<float> ref(expect.size()), out(expect.size());
  attention_ref(p, q.data(), kc.data(), vc.data(), ref.data());
  test::Diff d = test::compare(ref.data(), expect.data(), ref.size());
  CHECK_MSG(d.rel_l2 <= 1e-6, "reference vs direct rel_l2=" << d.rel_l2 << " t=" << c.tokens << " past=" << c.past);
  for (bool simd : {true, false}) {
    test::CpuConfig cfg(simd, 2);
    attention_cpu(p, q.data(), kc.data(), vc.data(), out.data());
    d = test::compare(out.data(), ref.data(), out.size());
    CHECK_MSG(d.rel_l2 <= 1e-5 && d.max_abs <= 1e-5 * (1.0 + d.ref_max),
              "cpu vs ref rel_l2=" << d.rel_l2 << " t=" << c.tokens << " past=" << c.past << " simd=" << simd);
  }
}

}  // namespace

EXL_TEST(attention_cpu, matches_direct_softmax) {
  const Case cases[] = {
      {1, 0, 4, 4, 16, 0, DType::f32},   {1, 9, 8, 2, 32, 0, DType::f32},  {5, 0, 8, 2, 64, 0, DType::f32},
      {4, 13, 6, 3, 20, 0, DType::f16},  {7, 20, 8, 1, 128, 0, DType::f16}, {3, 10, 4, 2, 16, 4, DType::f32},
      {6, 2, 4, 4, 24, 3, DType::f16},   {1, 40, 32, 8, 64, 0, DType::f16},
  };
  std::uint32_t seed = 10;
  for (const Case& c : cases) run_case(c, seed += 7);
}

EXL_TEST(attention_cpu, gqa_mapping_and_causality_matter) {
  // One query, two kv heads with very different values: head h must read kv head h / 2.
  const int d = 8;
  AttentionParams p;
  p.tokens = 2;
  p.past = 0;
  p.n_heads = 4;
  p.n_kv_heads = 2;
  p.head_dim = d;
  p.scale = 1.0f;
  std::vector<float> k(2 * 2 * d, 0.1f), v(2 * 2 * d);
  for (int j = 0; j < 2; ++j)
    for (int g = 0; g < 2; ++g)
      for (int e = 0; e < d; ++e) v[(j * 2 + g) * d + e] = float(100 * g + 10 * j + e);
  const std::vector<float> q = test::random_floats(1, 2 * 4 * d);
  std::vector<float> out(2 * 4 * d), cpu(2 * 4 * d);
  attention_ref(p, q.data(), k.data(), v.data(), out.data());
  attention_cpu(p, q.data(), k.data(), v.data(), cpu.data());
  for (int h = 0; h < 4; ++h) {
    // token 0 sees only key 0: exactly v[0, h / 2]
    for (int e = 0; e < d; ++e) CHECK_NEAR(out[h * d + e], 100 * (h / 2) + e, 1e-5);
    // token 1 sees keys 0 and 1 (equal scores: k is constant): the mean
    for (int e = 0; e < d; ++e) CHECK_NEAR(out[(4 + h) * d + e], 100 * (h / 2) + 5 + e, 1e-4);
  }
  for (std::size_t i = 0; i < out.size(); ++i) CHECK_NEAR(cpu[i], out[i], 1e-4);
}

// Converter: group layouts of the option tables, GPTQ on random matrices (beats round-to-nearest
// in Hessian-weighted error; packs and dequantizes bit-exactly), and the optimizer; on a GPU, the
// device block math against the CPU's.
#include <algorithm>
#include <cmath>
#include <random>

#include "exl/convert.h"
#include "exl/error.h"
#include "exl/kernels/cpu_features.h"
#include "exl/kernels/exl2.h"
#include "exl/kernels/exl2_pack.h"
#include "block_math.h"
#include "exl_test.h"
#if defined(EXL_HAVE_CUDA_LOADER)
#include "test_cuda_support.h"
#endif

using namespace exl;

namespace {

// x: [t, k] with correlated, unevenly scaled features (so act-order and GPTQ matter).
std::vector<float> activations(int t, int k, std::mt19937& rng) {
  std::normal_distribution<float> nd(0, 1);
  std::vector<float> base(std::size_t(t) * 8);
  for (auto& v : base) v = nd(rng);
  std::vector<float> mix(std::size_t(8) * k), scale(static_cast<std::size_t>(k));
  for (auto& v : mix) v = nd(rng);
  for (int i = 0; i < k; ++i) scale[std::size_t(i)] = 0.2f + 3.0f * float(i % 7) / 7.0f;
  std::vector<float> x(std::size_t(t) * k);
  for (int r = 0; r < t; ++r)
    for (int i = 0; i < k; ++i) {
      float s = 0.3f * nd(rng);
      for (int j = 0; j < 8; ++j) s += base[std::size_t(r) * 8 + j] * mix[std::size_t(j) * k + i];
      x[std::size_t(r) * k + i] = s * scale[std::size_t(i)];
    }
  return x;
}

std::vector<double> hessian(const std::vector<float>& x, int t, int k) {
  std::vector<double> h(std::size_t(k) * k, 0.0);
  for (int r = 0; r < t; ++r)
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) h[std::size_t(i) * k + j] += double(x[std::size_t(r) * k + i]) * x[std::size_t(r) * k + j];
  return h;
}

// tr((W - Q) H (W - Q)^T) for w, q: [n, k].
double weighted_error(const std::vector<float>& w, const std::vector<float>& q, const std::vector<double>& h, int n, int k) {
  double e = 0.0;
  std::vector<double> d(static_cast<std::size_t>(k));
  for (int c = 0; c < n; ++c) {
    for (int i = 0; i < k; ++i) d[std::size_t(i)] = double(w[std::size_t(c) * k + i]) - q[std::size_t(c) * k + i];
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) e += d[std::size_t(i)] * h[std::size_t(i) * k + j] * d[std::size_t(j)];
  }
  return e;
}

std::vector<float> uniform(std::mt19937& rng, std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// A small decoder block with random weights: attention with GQA (8 heads on 2 KV heads of 32),
// optional q/k/v biases, and an MLP of 704.
struct TestBlock {
  convert_detail::BlockShape s;
  convert_detail::AttentionWeights aw;
  convert_detail::MlpWeights mw;
  // Draws a fresh [n, k] weight scaled for unit-variance outputs.
  std::vector<float> linear(std::mt19937& rng, int n, int k) const {
    return uniform(rng, std::size_t(n) * k, -std::sqrt(3.0f / k), std::sqrt(3.0f / k));
  }
};
TestBlock test_block(std::mt19937& rng, RopeStyle style, bool bias) {
  TestBlock b;
  auto& s = b.s;
  s.hidden = 256; s.heads = 8; s.kv_heads = 2; s.head_dim = 32; s.intermediate = 704; s.norm_eps = 1e-5f;
  RopeParams rp;
  rp.head_dim = 32; rp.theta = 10000.0f; rp.max_seq_len = 2048;
  s.rope = rope_table(rp);
  s.rope_style = style;
  const int H = s.hidden, qd = s.heads * s.head_dim, kd = s.kv_heads * s.head_dim, I = s.intermediate;
  b.aw.norm = uniform(rng, std::size_t(H), 0.5f, 1.5f);
  b.aw.q = b.linear(rng, qd, H); b.aw.k = b.linear(rng, kd, H); b.aw.v = b.linear(rng, kd, H); b.aw.o = b.linear(rng, H, qd);
  if (bias) {
    b.aw.q_bias = uniform(rng, std::size_t(qd), -0.1f, 0.1f);
    b.aw.k_bias = uniform(rng, std::size_t(kd), -0.1f, 0.1f);
    b.aw.v_bias = uniform(rng, std::size_t(kd), -0.1f, 0.1f);
  }
  b.mw.norm = uniform(rng, std::size_t(H), 0.5f, 1.5f);
  b.mw.gate = b.linear(rng, I, H); b.mw.up = b.linear(rng, I, H); b.mw.down = b.linear(rng, H, I);
  return b;
}

using Rows = std::vector<std::vector<float>>;

// `count` calibration rows of `tokens` x `hidden` uniform in [-1, 1).
Rows random_rows(std::mt19937& rng, int count, int tokens, int hidden) {
  Rows rows;
  for (int r = 0; r < count; ++r) rows.push_back(uniform(rng, std::size_t(tokens) * hidden, -1.0f, 1.0f));
  return rows;
}

// Loads the block into `m`, runs the rows collecting Hessians A and B, prepares both; returns the
// outputs (the measurement's reference).
Rows reference_run(convert_detail::BlockMath& m, const TestBlock& b, bool attention, const Rows& in) {
  using namespace convert_detail;
  const int T = int(in[0].size()) / b.s.hidden;
  m.reset_hessian(hessian_a, b.s.hidden);
  m.reset_hessian(hessian_b, attention ? b.s.heads * b.s.head_dim : b.s.intermediate);
  if (attention) m.load(b.s, b.aw);
  else m.load(b.s, b.mw);
  Rows out = in;
  for (auto& y : out) m.run(y.data(), T, true);
  m.prepare_hessian(hessian_a, int(in.size()), "a");
  m.prepare_hessian(hessian_b, int(in.size()), "b");
  return out;
}

// Packs a quantized layer and dequantizes it with the reference decoder: exactly its `dequant`
// (fp16 values), and zeros in the padding columns.
void check_packs_exactly(const QuantizedLinear& g) {
  const int k = g.k, n = g.n;
  Exl2PackInput in;
  in.k = k; in.n = n;
  in.group_bits = g.layout.bits; in.group_rows = g.layout.rows;
  in.q = g.q.data(); in.scale_codes = g.codes.data(); in.scale_max = g.scale_max.data(); in.perm = g.perm.data();
  Exl2Packed p;
  std::string why;
  CHECK_MSG(exl2_pack(in, p, &why), why);
  std::vector<half_bits> deq(std::size_t(k) * p.n_pad);
  exl2_dequant_ref(p.view(), deq.data());
  int mismatches = 0;
  for (int i = 0; i < k; ++i) {
    for (int c = 0; c < n; ++c)
      if (half_to_float(deq[std::size_t(i) * p.n_pad + c]) != g.dequant[std::size_t(c) * k + i]) ++mismatches;
    for (int c = n; c < p.n_pad; ++c) CHECK_EQ(half_to_float(deq[std::size_t(i) * p.n_pad + c]), 0.0f);
  }
  CHECK_EQ(mismatches, 0);
}

// ---- The reference converter's quantizer, transcribed literally (the naive twin of gptq.cpp) ----
// ExLlamaV2 0.2.7 conversion/adaptivegptq.py (AdaptiveGPTQ.prepare, configure, quantize;
// AdaptiveQuantizer.find_params) and its CUDA kernels quantize_err, fused_quantize_adjust and
// vv_mul_sub: torch's fp32 tensors as float, its Cholesky steps in double, no blocking, no SIMD.
struct RefQuantized {
  std::vector<int> perm;       // stored row j = input feature perm[j]
  std::vector<int> q;          // [k, n] integers, stored rows
  std::vector<float> dequant;  // [n, k] HF layout
};

// Lower Cholesky factor of a symmetric positive definite [k, k] matrix (upper part zeroed).
std::vector<double> cholesky_lower(std::vector<double> a, int k) {
  for (int j = 0; j < k; ++j) {
    double d = a[std::size_t(j) * k + j];
    for (int p = 0; p < j; ++p) d -= a[std::size_t(j) * k + p] * a[std::size_t(j) * k + p];
    d = std::sqrt(d);
    a[std::size_t(j) * k + j] = d;
    for (int i = j + 1; i < k; ++i) {
      double v = a[std::size_t(i) * k + j];
      for (int p = 0; p < j; ++p) v -= a[std::size_t(i) * k + p] * a[std::size_t(j) * k + p];
      a[std::size_t(i) * k + j] = v / d;
    }
    for (int i = 0; i < j; ++i) a[std::size_t(i) * k + j] = 0.0;
  }
  return a;
}

RefQuantized exllamav2_quantize(const std::vector<float>& W, int n, int k, const std::vector<double>& H,
                                const QuantOption& o) {
  RefQuantized r;
  // prepare(): act order by the diagonal (descending), damping 0.12 * mean diagonal.
  r.perm.resize(std::size_t(k));
  for (int i = 0; i < k; ++i) r.perm[std::size_t(i)] = i;
  std::stable_sort(r.perm.begin(), r.perm.end(),
                   [&](int a, int b) { return H[std::size_t(a) * k + a] > H[std::size_t(b) * k + b]; });
  std::vector<double> h(std::size_t(k) * k);
  double mean = 0.0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) h[std::size_t(i) * k + j] = H[std::size_t(r.perm[i]) * k + r.perm[j]];
  for (int i = 0; i < k; ++i) mean += h[std::size_t(i) * k + i] / k;
  for (int i = 0; i < k; ++i) h[std::size_t(i) * k + i] += std::max(0.12 * mean, 1e-5);
  // cholesky, cholesky_inverse (H^-1), cholesky(upper = True) of H^-1: U with H^-1 = U^T U.
  const std::vector<double> L = cholesky_lower(h, k);
  std::vector<double> Li(std::size_t(k) * k, 0.0);  // L^-1 by forward substitution
  for (int c = 0; c < k; ++c)
    for (int i = c; i < k; ++i) {
      double v = i == c ? 1.0 : 0.0;
      for (int p = c; p < i; ++p) v -= L[std::size_t(i) * k + p] * Li[std::size_t(p) * k + c];
      Li[std::size_t(i) * k + c] = v / L[std::size_t(i) * k + i];
    }
  std::vector<double> hinv(std::size_t(k) * k, 0.0);  // (L L^T)^-1 = L^-T L^-1
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      double v = 0.0;
      for (int p = std::max(i, j); p < k; ++p) v += Li[std::size_t(p) * k + i] * Li[std::size_t(p) * k + j];
      hinv[std::size_t(i) * k + j] = v;
    }
  const std::vector<double> Lh = cholesky_lower(hinv, k);
  std::vector<float> U(std::size_t(k) * k);  // upper = Lh^T
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) U[std::size_t(i) * k + j] = float(Lh[std::size_t(j) * k + i]);
  // The weights [k, n] in stored order.
  std::vector<float> w(std::size_t(k) * n);
  for (int i = 0; i < k; ++i)
    for (int c = 0; c < n; ++c) w[std::size_t(i) * n + c] = W[std::size_t(c) * k + r.perm[i]];
  // configure(): groups per part, ceil(min(rows * p, remaining) / group size).
  std::vector<std::pair<int, int>> groups;  // (bits, rows)
  int remaining = k;
  for (const QuantPart& part : o.parts) {
    const int g = int(std::ceil(std::min(double(k) * part.prop, double(remaining)) / part.group_size));
    for (int i = 0; i < g; ++i) groups.push_back({part.bits, part.group_size});
    remaining -= g * part.group_size;
  }
  r.q.assign(std::size_t(k) * n, 0);
  std::vector<float> deq(std::size_t(k) * n), err(std::size_t(k) * n);
  int b = 0;
  for (const auto& [bits, gsz] : groups) {
    const int a = b;
    b = std::min(a + gsz, k);
    const float maxq = float((1 << bits) - 1), qzero = (maxq + 1.0f) / 2.0f;
    // find_params(weights[a:b]): per-column 4-bit scale codes against the group's largest scale,
    // then one multiplier p of 97 in [0.7, 1.2] for the whole group by the error norm 3.5.
    std::vector<float> base(static_cast<std::size_t>(n)), tw(static_cast<std::size_t>(n));
    std::vector<int> qs(static_cast<std::size_t>(n));
    float qmax = 0.0f;
    for (int c = 0; c < n; ++c) {
      float m = 0.0f;
      for (int i = a; i < b; ++i) m = std::max(m, std::fabs(w[std::size_t(i) * n + c]));
      base[std::size_t(c)] = (m + 1e-12f) / (maxq / 2.0f);
      qmax = std::max(qmax, base[std::size_t(c)]);
    }
    for (int c = 0; c < n; ++c) {
      const float qt = std::min(16.0f, std::max(1.0f, std::nearbyint(std::sqrt(base[std::size_t(c)] / qmax) * 16.0f)));
      qs[std::size_t(c)] = int(qt);
      tw[std::size_t(c)] = (qt / 16.0f) * (qt / 16.0f) * qmax;
    }
    double best = 0.0;
    int best_i = 0;
    for (int i = 0; i <= 96; ++i) {
      const float pi = float(i) / 96.0f, p = 0.70f * (1.0f - pi) + 1.2f * pi;
      double e = 0.0;
      for (int row = a; row < b; ++row)
        for (int c = 0; c < n; ++c) {
          const float x = w[std::size_t(row) * n + c], sc = tw[std::size_t(c)] * p;
          const float qv = std::min(maxq - qzero, std::max(-qzero, std::nearbyint(x / sc)));
          e += std::pow(double(std::fabs(qv * sc - x)), 3.5);
        }
      if (i == 0 || e < best) { best = e; best_i = i; }
    }
    const float bpi = float(best_i) / 96.0f;
    const float smax = round_to_half(qmax * (1.2f * bpi + 0.70f * (1.0f - bpi)));
    std::vector<float> scale(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c)  // ((qscale^2).half() * (qscale_max.half() * (1/256).half())).float()
      scale[std::size_t(c)] = round_to_half(float(qs[std::size_t(c)] * qs[std::size_t(c)]) * round_to_half(smax / 256.0f));
    // quantize_range: row by row, each row's error fed into the group's later rows, then the rest.
    for (int row = a; row < b; ++row) {
      for (int c = 0; c < n; ++c) {
        const float x = w[std::size_t(row) * n + c], sc = scale[std::size_t(c)];
        const float qv = std::min(maxq, std::max(0.0f, std::nearbyint(x / sc) + qzero));
        r.q[std::size_t(row) * n + c] = int(qv);
        const float dq = round_to_half((qv - qzero) * sc);  // __hmul(__hsub(h_x, h_qzero), h_s)
        deq[std::size_t(row) * n + c] = dq;
        err[std::size_t(row) * n + c] = (x - dq) / U[std::size_t(row) * k + row];
      }
      for (int j = row; j < b; ++j)
        for (int c = 0; c < n; ++c) w[std::size_t(j) * n + c] -= U[std::size_t(row) * k + j] * err[std::size_t(row) * n + c];
    }
    for (int j = b; j < k; ++j)
      for (int c = 0; c < n; ++c) {
        float v = 0.0f;
        for (int i = a; i < b; ++i) v += U[std::size_t(i) * k + j] * err[std::size_t(i) * n + c];
        w[std::size_t(j) * n + c] -= v;
      }
  }
  r.dequant.assign(std::size_t(n) * k, 0.0f);
  for (int i = 0; i < k; ++i)
    for (int c = 0; c < n; ++c) r.dequant[std::size_t(c) * k + r.perm[i]] = deq[std::size_t(i) * n + c];
  return r;
}

}  // namespace

EXL_TEST(convert, option_tables_give_valid_layouts) {
  CHECK_EQ(attention_options().size(), 19u);
  CHECK_EQ(mlp_options().size(), 17u);
  for (int k : {256, 384, 768, 1024, 4096, 11008 + 32 - 11008 % 32}) {
    std::vector<QuantOption> all;
    for (const auto& b : attention_options()) for (const auto& p : b) all.push_back(p.second);
    for (const auto& b : mlp_options()) for (const auto& p : b) all.push_back(p.second);
    for (int hb : {2, 3, 4, 5, 6, 8}) all.push_back(head_option(hb));
    for (const QuantOption& o : all) {
      const GroupLayout l = group_layout(o, k);
      int sum = 0;
      for (int g = 0; g < l.groups(); ++g) {
        CHECK(l.rows[g] >= 32 && l.rows[g] % 32 == 0);
        if (g + 1 < l.groups()) CHECK(l.bits[g] >= l.bits[g + 1]);
        sum += l.rows[g];
      }
      CHECK_EQ(sum, k);
    }
  }
  // ExLlamaV2's rule: 5 % of 256 rows at 3 bits still takes one whole 64-row group.
  const GroupLayout l = group_layout(attention_options()[0][0].second, 256);
  CHECK(l.bits == (std::vector<int>{3, 2, 2, 2}));
  CHECK(l.rows == (std::vector<int>{64, 64, 64, 64}));
  CHECK_THROWS_ERROR(group_layout(attention_options()[0][0].second, 100), ErrorKind::invalid_argument, "multiple of 32");
  CHECK_THROWS_ERROR(head_option(7), ErrorKind::invalid_argument, "head bits");
}

// gptq_quantize against the literal transcription of the reference converter's quantizer above:
// the same act order, the same integers (a rare last-bit tie aside) and the same Hessian-weighted
// error, for one, two and three bit widths in groups of 32 to 128. (On the real layers of a ref-s
// conversion the two agree on every integer: bench/RESULTS.md, session 17.)
EXL_TEST(convert, gptq_equals_exllamav2_algorithm) {
  std::mt19937 rng(4321);
  const int k = 256, n = 96, t = 768;
  const std::vector<float> x = activations(t, k, rng);
  std::vector<double> h = hessian(x, t, k);
  for (double& v : h) v /= 6.0;
  std::normal_distribution<float> nd(0, 0.04f);
  std::vector<float> w(std::size_t(n) * k);
  for (auto& v : w) v = nd(rng);
  const PreparedHessian ph = prepare_hessian(h, k, "test");
  for (const QuantOption& o : {QuantOption{{{4, 1.0, 128}}}, QuantOption{{{3, 0.1, 64}, {2, 0.9, 64}}},
                               QuantOption{{{8, 0.05, 32}, {4, 0.1, 32}, {3, 0.85, 32}}}, QuantOption{{{6, 1.0, 128}}}}) {
    const QuantizedLinear g = gptq_quantize(w.data(), n, k, ph, o);
    const RefQuantized r = exllamav2_quantize(w, n, k, h, o);
    CHECK(std::vector<int>(ph.perm.begin(), ph.perm.end()) == r.perm);
    int differ = 0;
    for (int i = 0; i < k; ++i)
      for (int c = 0; c < n; ++c) differ += int(g.q[std::size_t(i) * g.n_pad + c]) != r.q[std::size_t(i) * n + c];
    const double eg = weighted_error(w, g.dequant, h, n, k), er = weighted_error(w, r.dequant, h, n, k);
    CHECK_MSG(differ <= k * n / 1000, o.describe() << ": " << differ << " of " << k * n << " integers differ");
    CHECK_MSG(std::fabs(eg - er) <= 1e-3 * er, o.describe() << ": error " << eg << " against the reference's " << er);
  }
}

EXL_TEST(convert, gptq_beats_rtn_and_packs_bit_exactly) {
  std::mt19937 rng(1234);
  const int k = 128, n = 72, t = 512;  // n not a multiple of 32: padding columns
  const std::vector<float> x = activations(t, k, rng);
  std::vector<double> h = hessian(x, t, k);
  for (double& v : h) v /= 4.0;  // "rows" averaging does not change the solution
  std::normal_distribution<float> nd(0, 0.05f);
  std::vector<float> w(std::size_t(n) * k);
  for (auto& v : w) v = nd(rng);
  const PreparedHessian ph = prepare_hessian(h, k, "test");
  // Act-order: stored rows by descending Hessian diagonal.
  for (int j = 1; j < k; ++j)
    CHECK(h[std::size_t(ph.perm[j - 1]) * k + ph.perm[j - 1]] >= h[std::size_t(ph.perm[j]) * k + ph.perm[j]]);
  for (const QuantOption& o : {QuantOption{{{4, 1.0, 32}}}, QuantOption{{{4, 0.25, 32}, {3, 0.75, 64}}},
                               QuantOption{{{8, 0.1, 32}, {6, 0.1, 32}, {2, 0.8, 32}}}}) {
    const QuantizedLinear g = gptq_quantize(w.data(), n, k, ph, o);
    const QuantizedLinear r = gptq_quantize(w.data(), n, k, ph, o, /*rtn=*/true);
    const double eg = weighted_error(w, g.dequant, h, n, k), er = weighted_error(w, r.dequant, h, n, k);
    CHECK_MSG(eg < 0.9 * er, o.describe() << ": gptq " << eg << " rtn " << er);
    check_packs_exactly(g);
    CHECK_EQ(g.total_bits, linear_total_bits(o, k, n));
    // The scale search's AVX2 form (multipliers in vector lanes) picks what the portable loop picks.
    set_cpu_simd_enabled(false);
    const QuantizedLinear gp = gptq_quantize(w.data(), n, k, ph, o);
    set_cpu_simd_enabled(true);
    CHECK_MSG(gp.q == g.q && gp.codes == g.codes && gp.scale_max == g.scale_max && gp.dequant == g.dequant,
              o.describe() << ": the portable scale search chose differently");
  }
}

// The --fast estimate: over every column it is exactly the round-to-nearest error of
// gptq_quantize (identity act-order); over a sample of columns it stays close; it ranks what the
// bits alone do not (4 bits in groups of 32 against 128).
EXL_TEST(convert, rtn_estimate_equals_round_to_nearest) {
  std::mt19937 rng(77);
  const int k = 256, n = 200;
  std::normal_distribution<float> nd(0, 0.05f);
  std::vector<float> w(std::size_t(n) * k);
  for (auto& v : w) v = nd(rng);
  // An identity Hessian: act-order keeps the input order, as the estimate does.
  std::vector<double> h(std::size_t(k) * k, 0.0);
  for (int i = 0; i < k; ++i) h[std::size_t(i) * k + i] = 1.0;
  const PreparedHessian ph = prepare_hessian(h, k, "identity");
  RtnErrorEstimate all(w.data(), n, k, 1), sampled(w.data(), n, k, 7);
  double energy = 0.0;
  for (float v : w) energy += double(v) * v;
  double prev = 0.0;
  for (const QuantOption& o : {QuantOption{{{8, 1.0, 128}}}, QuantOption{{{5, 1.0, 32}}}, QuantOption{{{4, 1.0, 32}}},
                               QuantOption{{{4, 1.0, 128}}}, QuantOption{{{4, 0.25, 32}, {3, 0.75, 64}}},
                               QuantOption{{{3, 1.0, 128}}}, QuantOption{{{2, 1.0, 64}}}}) {
    const QuantizedLinear r = gptq_quantize(w.data(), n, k, ph, o, /*rtn=*/true);
    double err = 0.0;
    for (std::size_t i = 0; i < w.size(); ++i) err += (double(r.dequant[i]) - w[i]) * (double(r.dequant[i]) - w[i]);
    const GroupLayout layout = group_layout(o, k);
    const double est = all.relative_error(layout), est_s = sampled.relative_error(layout);
    CHECK_MSG(std::fabs(est - err / energy) <= 1e-9 * (err / energy), o.describe() << ": " << est << " vs " << err / energy);
    CHECK_EQ(all.relative_error(layout), est);  // the kept group errors give the same answer
    CHECK_MSG(std::fabs(est_s - est) < 0.15 * est, o.describe() << ": sampled " << est_s << " vs " << est);
    CHECK_MSG(est > prev, o.describe() << " should lose more than the option before it");  // listed best first
    prev = est;
  }
}

EXL_TEST(convert, optimizer_hits_budget) {
  // Synthetic measurement: 8 blocks with the real option tables, costs for a 512-wide layer
  // set, accuracy rising with bits (block-dependent sensitivity).
  Measurement m;
  const int H = 512, I = 1536;
  std::uint64_t numel = 0;
  for (int i = 0; i < 8; ++i) {
    const bool attn = i % 2 == 0;
    MeasuredBlock b;
    b.key = "model.layers." + std::to_string(i / 2) + (attn ? ".self_attn" : ".mlp");
    for (const BlockOption& bo : attn ? attention_options() : mlp_options()) {
      MeasuredOption o;
      o.option = bo;
      std::uint64_t weights = 0;
      for (const auto& [p, q] : bo) {
        const int k = p == "down_proj" ? I : H, n = (p == "gate_proj" || p == "up_proj") ? I : H;
        o.total_bits += linear_total_bits(q, k, n);
        weights += std::uint64_t(k) * n;
      }
      const double bpw = double(o.total_bits) / double(weights);
      o.accuracy = 1.0 - (0.5 + 0.2 * (i % 3)) * std::exp2(-bpw);
      b.options.push_back(o);
    }
    numel += attn ? 4ull * H * H : 3ull * H * I;
    m.blocks.push_back(b);
  }
  for (double target : {2.5, 3.0, 4.0, 4.25, 5.0, 6.0}) {
    const std::uint64_t budget = std::uint64_t(double(numel) * target);
    const OptimizerResult r = optimize_strategy(m, budget);
    CHECK_EQ(r.choice.size(), m.blocks.size());
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < r.choice.size(); ++i) sum += m.blocks[i].options[std::size_t(r.choice[i])].total_bits;
    CHECK_EQ(sum, r.total_bits);
    CHECK(r.total_bits <= budget);
    const double bpw = double(r.total_bits) / double(numel);
    CHECK_MSG(bpw > target - 0.1, "target " << target << " got " << bpw);
  }
  CHECK_THROWS_ERROR(optimize_strategy(m, numel), ErrorKind::invalid_argument, "below what the option tables");
}

// On ExLlamaV2's own measurement of ref-s the optimizer lands just under each target.
EXL_TEST(convert, optimizer_on_fixture_measurement) {
  const Measurement m = read_measurement(exl::test::fixture("models/exl2/ref-s-4.0bpw/measurement.json"));
  const std::uint64_t numel = 6ull * (384 * 384 + 2 * 384 * 128 + 384 * 384 + 3 * 384 * 1024);
  for (double target : {3.0, 4.0, 6.0}) {
    const OptimizerResult r = optimize_strategy(m, std::uint64_t(double(numel) * target));
    const double bpw = double(r.total_bits) / double(numel);
    CHECK_MSG(bpw <= target && bpw > target - 0.1, "target " << target << " got " << bpw);
  }
}

// The measurement's candidates: evaluate() with a candidate in use equals quantizing the projection,
// replacing its weight and running the rows directly; changed() and a fresh load give the weights
// object back; cleared candidates are gone.
EXL_TEST(convert, measurement_candidates_equal_direct_quantization) {
  using namespace convert_detail;
  std::mt19937 rng(79);
  const TestBlock b = test_block(rng, RopeStyle::neox, true);
  const int T = 45, H = b.s.hidden;
  const Rows in = random_rows(rng, 3, T, H);
  for (const bool attention : {true, false}) {
    auto m = make_cpu_block_math();
    const Rows ref = reference_run(*m, b, attention, in);
    m->set_rows(in, ref);
    CHECK_EQ(m->evaluate(), 0.0);
    // The first token is left out of the error: a sink-like first token 100x the others' size
    // would otherwise hide a 10 % error on every other token.
    {
      std::vector<float> r0(std::size_t(4) * H, 1.0f), y0 = r0;
      for (int i = 0; i < H; ++i) r0[std::size_t(i)] = y0[std::size_t(i)] = 100.0f;
      for (std::size_t i = std::size_t(H); i < y0.size(); ++i) y0[i] = 1.1f;
      CHECK(std::fabs(relative_error(y0, r0, first_token_skip(4, H)) - 0.1) < 1e-6);
      CHECK(relative_error(y0, r0) < 0.02);
      CHECK_EQ(first_token_skip(1, H), 0u);
    }
    const std::string proj = attention ? "v_proj" : "down_proj", other = attention ? "q_proj" : "gate_proj";
    const HessianSlot slot = attention ? hessian_a : hessian_b;
    const int k = attention ? H : b.s.intermediate, n = attention ? b.s.kv_heads * b.s.head_dim : H;
    const QuantOption o1{{{3, 1.0, 64}}}, o2{{{4, 0.1, 32}, {2, 0.9, 64}}};
    m->add_candidate(7, slot, proj, n, k, o1);
    m->add_candidate(9, slot, proj, n, k, o2);
    m->add_candidate(11, hessian_a, other, attention ? H : b.s.intermediate, H, o1);
    for (const auto& [id, o] : {std::pair{7, o1}, std::pair{9, o2}}) {
      m->use_candidate(proj, id);
      const double e = m->evaluate();
      // Directly: the projection's quantized weight in a copy of the block, every row run.
      TestBlock c = b;
      std::vector<float>& w = attention ? c.aw.v : c.mw.down;
      w = m->quantize(slot, w.data(), n, k, o).dequant;
      auto direct = make_cpu_block_math();
      if (attention) direct->load(c.s, c.aw);
      else direct->load(c.s, c.mw);
      double sum = 0.0;
      for (std::size_t r = 0; r < in.size(); ++r) {
        std::vector<float> y = in[r];
        direct->run(y.data(), T, false);
        sum += relative_error(y, ref[r], first_token_skip(T, H));
      }
      CHECK_EQ(e, sum / 3.0);
      CHECK_MSG(e > 1e-3 && e < 0.5, o.describe() << ": error " << e);
    }
    m->use_candidate(other, 11);
    const double both = m->evaluate();
    CHECK(both > 0.0);
    m->changed(proj);  // the weights object's projection again; the other candidate stays in use
    const double other_only = m->evaluate();
    CHECK(other_only > 0.0 && other_only != both);
    if (attention) m->load(b.s, b.aw);
    else m->load(b.s, b.mw);
    CHECK_EQ(m->evaluate(), 0.0);
    m->clear_candidates();
    CHECK_THROWS_ERROR(m->use_candidate(proj, 7), ErrorKind::internal, "no candidate 7");
  }
}

// ---- the GPU block math (kernels/cuda/convert_math.cu) against the CPU's ----
#if defined(EXL_HAVE_CUDA_LOADER)
namespace {

// sqrt(sum (a - b)^2 / sum b^2)
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

template <class T>
double same_fraction(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size() || a.empty()) return 0.0;
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return double(same) / double(a.size());
}

// Both maths' GPTQ of the same weight agree closely (the last ulps differ, so a few integers sit on
// the other side of a rounding boundary), and the GPU's result packs to exactly its dequant.
void check_gptq_pair(const QuantizedLinear& cpu, const QuantizedLinear& gpu, const std::vector<float>& w,
                     const std::vector<double>& h, int n, int k, const QuantOption& o) {
  CHECK(gpu.perm == cpu.perm);
  CHECK_EQ(gpu.total_bits, cpu.total_bits);
  CHECK_MSG(same_fraction(gpu.q, cpu.q) >= 0.97, o.describe() << ": q same " << same_fraction(gpu.q, cpu.q));
  CHECK_MSG(same_fraction(gpu.codes, cpu.codes) >= 0.97, o.describe() << ": codes same " << same_fraction(gpu.codes, cpu.codes));
  CHECK_MSG(same_fraction(gpu.scale_max, cpu.scale_max) >= 0.75,
            o.describe() << ": scale_max same " << same_fraction(gpu.scale_max, cpu.scale_max));
  const double ec = weighted_error(w, cpu.dequant, h, n, k), eg = weighted_error(w, gpu.dequant, h, n, k);
  CHECK_MSG(eg <= ec * 1.03 && ec <= eg * 1.03, o.describe() << ": weighted error gpu " << eg << " cpu " << ec);
  check_packs_exactly(gpu);
}

}  // namespace

// Hessian preparation: the same act order and the same factor (k = 320: five Cholesky blocks,
// the last one full), a clear error for a Hessian with NaN, and GPTQ close to the CPU's.
EXL_GPU_TEST(convert, cuda_hessian_and_gptq_match_cpu) {
  const exl_cuda_api& api = exl::test::cuda_api();
  std::mt19937 rng(77);
  for (const auto& [k, n] : {std::pair{320, 72}, std::pair{128, 200}}) {
    const int t = 512;
    const std::vector<float> x = activations(t, k, rng);
    const std::vector<double> h = hessian(x, t, k);
    const PreparedHessian ph = prepare_hessian(h, k, "test");
    auto gpu = convert_detail::make_cuda_block_math(0);
    gpu->reset_hessian(convert_detail::hessian_c, k);
    gpu->add_hessian(convert_detail::hessian_c, x.data(), 200);  // two adds: the accumulation
    gpu->add_hessian(convert_detail::hessian_c, x.data() + std::size_t(200) * k, t - 200);
    const std::vector<std::int32_t> perm = gpu->prepare_hessian(convert_detail::hessian_c, 1, "test");
    CHECK(perm == ph.perm);
    // The factor itself, through the module's table.
    exl_cuda_convert* c = nullptr;
    CUDA_OK(api.convert_create(0, 0, &c));
    CUDA_OK(api.convert_hessian_reset(c, 0, k));
    CUDA_OK(api.convert_hessian_add(c, 0, x.data(), t));
    std::vector<std::int32_t> p2(static_cast<std::size_t>(k));
    CUDA_OK(api.convert_hessian_prepare(c, 0, 1.0, p2.data()));
    std::vector<float> u(std::size_t(k) * k, -1.0f);
    CUDA_OK(api.convert_hessian_factor(c, 0, u.data()));
    float umax = 0.0f, dmax = 0.0f;
    for (std::size_t i = 0; i < u.size(); ++i) {
      umax = std::max(umax, std::fabs(ph.u[i]));
      dmax = std::max(dmax, std::fabs(u[i] - ph.u[i]));
    }
    CHECK_MSG(dmax <= 1e-4f * umax, "k " << k << ": factor differs by " << dmax << " (max " << umax << ")");
    // A Hessian with NaN: a clear error, and the handle stays usable.
    std::vector<float> bad = x;
    bad[5] = std::nanf("");
    CUDA_OK(api.convert_hessian_reset(c, 1, k));
    CUDA_OK(api.convert_hessian_add(c, 1, bad.data(), t));
    CHECK_EQ(api.convert_hessian_prepare(c, 1, 1.0, p2.data()), int(EXL_CUDA_ERR_INVALID));
    CHECK(std::string(api.last_error()).find("positive definite") != std::string::npos);
    std::vector<std::uint8_t> q(std::size_t(k) * 224), codes(224);
    std::vector<std::uint16_t> smax(1);
    std::vector<float> dq(std::size_t(n) * k);
    const int bits = 4, rows = k;
    CHECK_EQ(api.convert_gptq(c, 2, x.data(), n, k, 1, &bits, &rows, 0, q.data(), codes.data(), smax.data(), dq.data()),
             int(EXL_CUDA_ERR_INVALID));  // slot 2 never reset
    api.convert_destroy(c);

    std::normal_distribution<float> nd(0, 0.05f);
    std::vector<float> w(std::size_t(n) * k);
    for (auto& v : w) v = nd(rng);
    for (const QuantOption& o : {QuantOption{{{4, 1.0, 32}}}, QuantOption{{{4, 0.25, 32}, {3, 0.75, 64}}},
                                 QuantOption{{{8, 0.1, 32}, {6, 0.1, 32}, {2, 0.8, 128}}}}) {
      const QuantizedLinear qc = gptq_quantize(w.data(), n, k, ph, o);
      const QuantizedLinear qg = gpu->quantize(convert_detail::hessian_c, w.data(), n, k, o);
      check_gptq_pair(qc, qg, w, h, n, k, o);
      const QuantizedLinear rtn = gptq_quantize(w.data(), n, k, ph, o, /*rtn=*/true);
      CHECK(weighted_error(w, qg.dequant, h, n, k) < 0.9 * weighted_error(w, rtn.dequant, h, n, k));
    }
  }
}

// The FP blocks (attention with GQA, both RoPE styles, with and without biases; the MLP) and the
// Hessians they collect: the GPU's outputs and act orders equal the CPU's to fp32 rounding.
EXL_GPU_TEST(convert, cuda_blocks_match_cpu) {
  exl::test::cuda_api();
  std::mt19937 rng(78);
  using namespace convert_detail;
  for (const RopeStyle style : {RopeStyle::neox, RopeStyle::gptj}) {
    for (const bool bias : {false, true}) {
      TestBlock b = test_block(rng, style, bias);
      const BlockShape& s = b.s;
      AttentionWeights& aw = b.aw;
      const MlpWeights& mw = b.mw;
      const int H = s.hidden, qd = s.heads * s.head_dim, I = s.intermediate, T = 77;
      const std::vector<float> x = uniform(rng, std::size_t(T) * H, -1.0f, 1.0f);
      auto cpu = make_cpu_block_math();
      auto gpu = make_cuda_block_math(0);
      for (const bool attention : {true, false}) {
        std::vector<float> yc = x, yg = x;
        std::vector<std::int32_t> pc[2], pg[2];
        const int kb = attention ? qd : I;
        for (BlockMath* m : {cpu.get(), gpu.get()}) {
          std::vector<float>& y = m == cpu.get() ? yc : yg;
          m->reset_hessian(hessian_a, H);
          m->reset_hessian(hessian_b, kb);
          if (attention) m->load(s, aw);
          else m->load(s, mw);
          m->run(y.data(), T, true);
          auto* p = m == cpu.get() ? pc : pg;
          p[0] = m->prepare_hessian(hessian_a, 1, "a");
          p[1] = m->prepare_hessian(hessian_b, 1, "b");
        }
        CHECK_MSG(rel_diff(yg, yc) < 1e-5, "attention " << attention << " bias " << bias << ": output differs by "
                                                         << rel_diff(yg, yc));
        CHECK_MSG(same_fraction(pg[0], pc[0]) >= 0.95, "act order A: " << same_fraction(pg[0], pc[0]));
        CHECK_MSG(same_fraction(pg[1], pc[1]) >= 0.95, "act order B: " << same_fraction(pg[1], pc[1]));
        // changed(): a replaced projection is what the next run uses
        if (attention) {
          std::vector<float> y2 = x, y3 = x;
          aw.o = b.linear(rng, H, qd);
          gpu->changed("o_proj");
          gpu->run(y2.data(), T, false);
          cpu->load(s, aw);
          cpu->run(y3.data(), T, false);
          CHECK(rel_diff(y2, y3) < 1e-5);
          CHECK(rel_diff(y2, yg) > 1e-3);
        }
      }
    }
  }
}

// The measurement on the device: candidates kept there and evaluate() computed there give the
// CPU's errors (the GPTQ integers differ in a few rounding ties, hence a tolerance), and the
// reference run against itself gives zero.
EXL_GPU_TEST(convert, cuda_measurement_matches_cpu) {
  exl::test::cuda_api();
  using namespace convert_detail;
  std::mt19937 rng(80);
  const TestBlock b = test_block(rng, RopeStyle::neox, true);
  const int T = 64, H = b.s.hidden;
  const Rows in = random_rows(rng, 4, T, H);
  for (const bool attention : {true, false}) {
    auto cpu = make_cpu_block_math();
    auto gpu = make_cuda_block_math(0);
    const Rows rc = reference_run(*cpu, b, attention, in), rg = reference_run(*gpu, b, attention, in);
    CHECK(rel_diff(rg[0], rc[0]) < 1e-5);
    cpu->set_rows(in, rc);
    gpu->set_rows(in, rg);
    CHECK_MSG(gpu->evaluate() < 1e-6, "reference against itself: " << gpu->evaluate());
    const std::vector<std::pair<std::string, HessianSlot>> projs =
        attention ? std::vector<std::pair<std::string, HessianSlot>>{{"q_proj", hessian_a}, {"k_proj", hessian_a},
                                                                     {"v_proj", hessian_a}, {"o_proj", hessian_b}}
                  : std::vector<std::pair<std::string, HessianSlot>>{{"gate_proj", hessian_a}, {"up_proj", hessian_a},
                                                                     {"down_proj", hessian_b}};
    const QuantOption opts[] = {QuantOption{{{3, 1.0, 64}}}, QuantOption{{{4, 0.1, 32}, {2, 0.9, 64}}}};
    int id = 0;
    for (const auto& [proj, slot] : projs) {
      const int qd = b.s.heads * b.s.head_dim, kd = b.s.kv_heads * b.s.head_dim;
      const int k = slot == hessian_a ? H : (attention ? qd : b.s.intermediate);
      const int n = proj == "q_proj" ? qd : (proj == "k_proj" || proj == "v_proj") ? kd
                    : (proj == "gate_proj" || proj == "up_proj") ? b.s.intermediate : H;
      for (const QuantOption& o : opts) {
        cpu->add_candidate(id, slot, proj, n, k, o);
        gpu->add_candidate(id, slot, proj, n, k, o);
        ++id;
      }
    }
    // Every projection's first candidate, then its second, one projection at a time.
    for (int c = 0; c < id; ++c) {
      const std::string& proj = projs[std::size_t(c / 2)].first;
      cpu->use_candidate(proj, c);
      gpu->use_candidate(proj, c);
      const double ec = cpu->evaluate(), eg = gpu->evaluate();
      CHECK_MSG(std::fabs(eg - ec) <= 0.03 * ec && ec > 1e-3,
                "attention " << attention << " candidate " << c << ": gpu " << eg << " cpu " << ec);
    }
    gpu->clear_candidates();
    CHECK_THROWS_ERROR(gpu->use_candidate(projs[0].first, 0), ErrorKind::invalid_argument, "no candidate 0");
  }
}
#endif

// Converter: group layouts of the option tables, GPTQ on random matrices (beats round-to-nearest
// in Hessian-weighted error; packs and dequantizes bit-exactly), and the optimizer.
#include <cmath>
#include <random>

#include "exl/convert.h"
#include "exl/error.h"
#include "exl/kernels/exl2.h"
#include "exl/kernels/exl2_pack.h"
#include "exl_test.h"

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
    // Pack and dequantize with the reference decoder: identical fp16 values.
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
    CHECK_EQ(g.total_bits, linear_total_bits(o, k, n));
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

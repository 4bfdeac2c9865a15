// CPU implementation of the converter's per-layer math, from the engine's CPU kernels (fp32
// activations and weights; the causal attention of one row starts at position 0).
#include <cmath>
#include <numeric>

#include "block_math.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/linear.h"
#include "exl/kernels/ops.h"

namespace exl::convert_detail {
namespace {

void run_linear(const float* x, int m, int k, const std::vector<float>& w, int n, const std::vector<float>& bias,
                float* y) {
  linear_cpu(x, m, k, w.data(), DType::f32, n, bias.empty() ? nullptr : bias.data(), y);
}

class CpuBlockMath final : public BlockMath {
 public:
  void attention(const BlockShape& s, const AttentionWeights& w, float* x, int T, BlockTaps taps) override {
    const int H = s.hidden, qd = s.heads * s.head_dim, kd = s.kv_heads * s.head_dim;
    a_.resize(std::size_t(T) * H);
    q_.resize(std::size_t(T) * qd);
    k_.resize(std::size_t(T) * kd);
    v_.resize(std::size_t(T) * kd);
    att_.resize(std::size_t(T) * qd);
    t_.resize(std::size_t(T) * H);
    pos_.resize(std::size_t(T));
    std::iota(pos_.begin(), pos_.end(), 0);
    rms_norm_cpu(x, T, H, w.norm.data(), DType::f32, s.norm_eps, a_.data());
    if (taps.a) *taps.a = a_;
    run_linear(a_.data(), T, H, w.q, qd, w.q_bias, q_.data());
    run_linear(a_.data(), T, H, w.k, kd, w.k_bias, k_.data());
    run_linear(a_.data(), T, H, w.v, kd, w.v_bias, v_.data());
    rope_apply_cpu(q_.data(), T, s.heads, s.head_dim, pos_.data(), s.rope, s.rope_style);
    rope_apply_cpu(k_.data(), T, s.kv_heads, s.head_dim, pos_.data(), s.rope, s.rope_style);
    AttentionParams ap;
    ap.tokens = T;
    ap.past = 0;
    ap.n_heads = s.heads;
    ap.n_kv_heads = s.kv_heads;
    ap.head_dim = s.head_dim;
    ap.scale = 1.0f / std::sqrt(float(s.head_dim));
    ap.cache_dtype = DType::f32;
    // With past = 0 and an fp32 cache, the cache layout [T, kv_heads, d] is k/v themselves.
    attention_cpu(ap, q_.data(), k_.data(), v_.data(), att_.data());
    if (taps.b) *taps.b = att_;
    run_linear(att_.data(), T, qd, w.o, H, w.o_bias, t_.data());
    add_inplace_cpu(x, t_.data(), std::int64_t(T) * H);
  }

  void mlp(const BlockShape& s, const MlpWeights& w, float* x, int T, BlockTaps taps) override {
    const int H = s.hidden, I = s.intermediate;
    a_.resize(std::size_t(T) * H);
    g_.resize(std::size_t(T) * I);
    u_.resize(std::size_t(T) * I);
    t_.resize(std::size_t(T) * H);
    rms_norm_cpu(x, T, H, w.norm.data(), DType::f32, s.norm_eps, a_.data());
    if (taps.a) *taps.a = a_;
    static const std::vector<float> none;
    run_linear(a_.data(), T, H, w.gate, I, none, g_.data());
    run_linear(a_.data(), T, H, w.up, I, none, u_.data());
    silu_mul_cpu(g_.data(), u_.data(), std::int64_t(g_.size()), g_.data());
    if (taps.b) *taps.b = g_;
    run_linear(g_.data(), T, I, w.down, H, none, t_.data());
    add_inplace_cpu(x, t_.data(), std::int64_t(T) * H);
  }

  void accumulate_hessian(const float* x, int T, int k, std::vector<double>& h) override {
    xt_.resize(std::size_t(k) * T);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < k; ++i) xt_[std::size_t(i) * T + t] = x[std::size_t(t) * k + i];
    prod_.resize(std::size_t(k) * k);
    // prod[i, j] = sum_t xt[i, t] * xt[j, t]: a linear layer with xt as both input and weight.
    linear_cpu(xt_.data(), k, T, xt_.data(), DType::f32, k, nullptr, prod_.data());
    for (std::size_t i = 0; i < prod_.size(); ++i) h[i] += double(prod_[i]);
  }

  QuantizedLinear quantize(const float* w, int n, int k, const PreparedHessian& h, const QuantOption& o) override {
    return gptq_quantize(w, n, k, h, o);
  }

 private:
  std::vector<float> a_, q_, k_, v_, att_, t_, g_, u_, xt_, prod_;
  std::vector<std::int32_t> pos_;
};

}  // namespace

std::unique_ptr<BlockMath> make_cpu_block_math() { return std::make_unique<CpuBlockMath>(); }

}  // namespace exl::convert_detail

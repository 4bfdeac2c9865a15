// CPU implementation of the converter's per-layer math, from the engine's CPU kernels (fp32
// activations and weights; the causal attention of one row starts at position 0), with the
// family's q/k norms, output norms, query scale, soft-cap, window and activation (BlockShape).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

#include "block_math.h"
#include "exl/error.h"
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
  void load(const BlockShape& s, const AttentionWeights& w) override {
    shape_ = s;
    attn_ = &w;
    mlp_ = nullptr;
    in_use_.clear();
  }
  void load(const BlockShape& s, const MlpWeights& w) override {
    shape_ = s;
    mlp_ = &w;
    attn_ = nullptr;
    in_use_.clear();
  }
  // The runs read the weights object itself; a candidate in use gives way to it.
  void changed(const std::string& proj) override { in_use_.erase(proj); }

  void run(float* x, int T, bool collect) override {
    if (attn_) attention(shape_, *attn_, x, T, collect);
    else if (mlp_) mlp(shape_, *mlp_, x, T, collect);
    else throw Error(ErrorKind::internal, "converter: no block loaded");
  }

  void reset_hessian(int slot, int k) override {
    Hessian& h = hess_.at(std::size_t(slot));
    h.k = k;
    h.sum.assign(std::size_t(k) * k, 0.0);
    h.prepared = {};
  }

  void add_hessian(int slot, const float* x, int T) override {
    Hessian& h = hess_.at(std::size_t(slot));
    const int k = h.k;
    xt_.resize(std::size_t(k) * T);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < k; ++i) xt_[std::size_t(i) * T + t] = x[std::size_t(t) * k + i];
    prod_.resize(std::size_t(k) * k);
    // prod[i, j] = sum_t xt[i, t] * xt[j, t]: a linear layer with xt as both input and weight.
    linear_cpu(xt_.data(), k, T, xt_.data(), DType::f32, k, nullptr, prod_.data());
    for (std::size_t i = 0; i < prod_.size(); ++i) h.sum[i] += double(prod_[i]);
  }

  std::vector<std::int32_t> prepare_hessian(int slot, int rows, const std::string& what) override {
    Hessian& h = hess_.at(std::size_t(slot));
    for (double& v : h.sum) v /= double(rows);
    h.prepared = exl::prepare_hessian(std::move(h.sum), h.k, what);
    h.sum.clear();
    return h.prepared.perm;
  }

  std::vector<double> averaged_hessian(int slot, int rows) override {
    Hessian& h = hess_.at(std::size_t(slot));
    std::vector<double> out = std::move(h.sum);
    h.sum.clear();
    for (double& v : out) v /= double(std::max(1, rows));
    return out;
  }

  QuantizedLinear quantize(int slot, const float* w, int n, int k, const QuantOption& o) override {
    return gptq_quantize(w, n, k, hess_.at(std::size_t(slot)).prepared, o);
  }

  void add_candidate(int id, int slot, const std::string& proj, int n, int k, const QuantOption& o) override {
    const std::vector<float>& w = loaded(proj);
    if (w.size() != std::size_t(n) * std::size_t(k))
      throw Error(ErrorKind::internal, "converter: candidate shape does not match " + proj);
    candidates_[id] = quantize(slot, w.data(), n, k, o).dequant;
  }
  void use_candidate(const std::string& proj, int id) override {
    const auto it = candidates_.find(id);
    if (it == candidates_.end()) throw Error(ErrorKind::internal, "converter: no candidate " + std::to_string(id));
    (void)loaded(proj);
    in_use_[proj] = &it->second;
  }
  void clear_candidates() override {
    in_use_.clear();
    candidates_.clear();
  }
  void set_rows(const std::vector<std::vector<float>>& in, const std::vector<std::vector<float>>& ref) override {
    if (in.size() != ref.size() || in.empty()) throw Error(ErrorKind::internal, "converter: rows and references differ");
    rows_in_ = &in;
    rows_ref_ = &ref;
  }
  double evaluate() override {
    if (!rows_in_) throw Error(ErrorKind::internal, "converter: no measurement rows");
    const int T = int((*rows_in_)[0].size()) / shape_.hidden;
    double sum = 0.0;
    for (std::size_t r = 0; r < rows_in_->size(); ++r) {
      y_ = (*rows_in_)[r];
      run(y_.data(), T, false);
      if (!std::isfinite(y_[0])) throw Error(ErrorKind::internal, "NaN/inf in the block output");
      sum += relative_error(y_, (*rows_ref_)[r], first_token_skip(T, shape_.hidden));
    }
    return sum / double(rows_in_->size());
  }

 private:
  const std::vector<float>& loaded(const std::string& proj) const {
    if (attn_) return projection(*attn_, proj);
    if (mlp_) return projection(*mlp_, proj);
    throw Error(ErrorKind::internal, "converter: no block loaded");
  }
  // The weight a run uses: the candidate in use, else the weights object's.
  const std::vector<float>& weight(const char* proj, const std::vector<float>& own) const {
    const auto it = in_use_.find(proj);
    return it == in_use_.end() ? own : *it->second;
  }

  void attention(const BlockShape& s, const AttentionWeights& w, float* x, int T, bool collect) {
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
    if (collect) add_hessian(hessian_a, a_.data(), T);
    run_linear(a_.data(), T, H, weight("q_proj", w.q), qd, w.q_bias, q_.data());
    run_linear(a_.data(), T, H, weight("k_proj", w.k), kd, w.k_bias, k_.data());
    run_linear(a_.data(), T, H, weight("v_proj", w.v), kd, w.v_bias, v_.data());
    if (!w.q_norm.empty()) {
      rms_norm_cpu(q_.data(), T * s.heads, s.head_dim, w.q_norm.data(), DType::f32, s.norm_eps, q_.data());
      rms_norm_cpu(k_.data(), T * s.kv_heads, s.head_dim, w.k_norm.data(), DType::f32, s.norm_eps, k_.data());
    }
    rope_apply_cpu(q_.data(), T, s.heads, s.head_dim, pos_.data(), s.rope, s.rope_style);
    rope_apply_cpu(k_.data(), T, s.kv_heads, s.head_dim, pos_.data(), s.rope, s.rope_style);
    AttentionParams ap;
    ap.tokens = T;
    ap.past = 0;
    ap.n_heads = s.heads;
    ap.n_kv_heads = s.kv_heads;
    ap.head_dim = s.head_dim;
    ap.scale = s.attention_scale > 0.0f ? s.attention_scale : 1.0f / std::sqrt(float(s.head_dim));
    ap.softcap = s.attn_softcap;
    ap.window = s.window;
    ap.cache_dtype = DType::f32;
    // With past = 0 and an fp32 cache, the cache layout [T, kv_heads, d] is k/v themselves.
    attention_cpu(ap, q_.data(), k_.data(), v_.data(), att_.data());
    if (collect) add_hessian(hessian_b, att_.data(), T);
    run_linear(att_.data(), T, qd, weight("o_proj", w.o), H, w.o_bias, t_.data());
    if (!w.out_norm.empty()) rms_norm_cpu(t_.data(), T, H, w.out_norm.data(), DType::f32, s.norm_eps, t_.data());
    add_inplace_cpu(x, t_.data(), std::int64_t(T) * H);
  }

  void mlp(const BlockShape& s, const MlpWeights& w, float* x, int T, bool collect) {
    const int H = s.hidden, I = s.intermediate;
    a_.resize(std::size_t(T) * H);
    g_.resize(std::size_t(T) * I);
    u_.resize(std::size_t(T) * I);
    t_.resize(std::size_t(T) * H);
    rms_norm_cpu(x, T, H, w.norm.data(), DType::f32, s.norm_eps, a_.data());
    if (collect) add_hessian(hessian_a, a_.data(), T);
    static const std::vector<float> none;
    run_linear(a_.data(), T, H, weight("gate_proj", w.gate), I, none, g_.data());
    run_linear(a_.data(), T, H, weight("up_proj", w.up), I, none, u_.data());
    if (s.gelu) gelu_tanh_mul_cpu(g_.data(), u_.data(), std::int64_t(g_.size()), g_.data());
    else silu_mul_cpu(g_.data(), u_.data(), std::int64_t(g_.size()), g_.data());
    if (collect) add_hessian(hessian_b, g_.data(), T);
    run_linear(g_.data(), T, I, weight("down_proj", w.down), H, none, t_.data());
    if (!w.out_norm.empty()) rms_norm_cpu(t_.data(), T, H, w.out_norm.data(), DType::f32, s.norm_eps, t_.data());
    add_inplace_cpu(x, t_.data(), std::int64_t(T) * H);
  }

  struct Hessian {
    int k = 0;
    std::vector<double> sum;
    PreparedHessian prepared;
  };
  BlockShape shape_;
  const AttentionWeights* attn_ = nullptr;
  const MlpWeights* mlp_ = nullptr;
  std::array<Hessian, 3> hess_;
  std::map<int, std::vector<float>> candidates_;
  std::map<std::string, const std::vector<float>*> in_use_;
  const std::vector<std::vector<float>>* rows_in_ = nullptr;
  const std::vector<std::vector<float>>* rows_ref_ = nullptr;
  std::vector<float> a_, q_, k_, v_, att_, t_, g_, u_, xt_, prod_, y_;
  std::vector<std::int32_t> pos_;
};

}  // namespace

const std::vector<float>& projection(const AttentionWeights& w, const std::string& p) {
  if (p == "q_proj") return w.q;
  if (p == "k_proj") return w.k;
  if (p == "v_proj") return w.v;
  if (p == "o_proj") return w.o;
  throw Error(ErrorKind::internal, "converter: no attention projection " + p);
}
const std::vector<float>& projection(const MlpWeights& w, const std::string& p) {
  if (p == "gate_proj") return w.gate;
  if (p == "up_proj") return w.up;
  if (p == "down_proj") return w.down;
  throw Error(ErrorKind::internal, "converter: no MLP projection " + p);
}

double relative_error(const std::vector<float>& y, const std::vector<float>& ref, std::size_t skip) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = skip; i < y.size(); ++i) {
    const double a = std::clamp(double(y[i]), -65504.0, 65504.0), b = std::clamp(double(ref[i]), -65504.0, 65504.0);
    num += (a - b) * (a - b);
    den += b * b;
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::unique_ptr<BlockMath> make_cpu_block_math() { return std::make_unique<CpuBlockMath>(); }

}  // namespace exl::convert_detail

// The converter's block math on the GPU: a BlockMath that forwards to the exl_cuda module's
// convert entries (kernels/cuda/convert_math.cu). Weights go up once per load and once per
// changed projection; Hessians stay on the device; GPTQ returns the packed integers, codes,
// scales and the dequantized weight, from which the layout and bit count are filled here exactly
// as the CPU path does.
#include <array>
#include <map>

#include "block_math.h"
#include "exl/error.h"

#if defined(EXL_HAVE_CUDA_LOADER)
#include "cuda_loader.h"
#endif

namespace exl::convert_detail {

#if defined(EXL_HAVE_CUDA_LOADER)
namespace {

class CudaBlockMath final : public BlockMath {
 public:
  explicit CudaBlockMath(int device) {
    std::string why;
    api_ = cuda_loader::api(&why);
    if (!api_) throw Error(ErrorKind::device, "convert on the GPU: " + why);
    cuda_loader::check(api_->convert_create(device, 0, &handle_), "convert_create");
  }
  ~CudaBlockMath() override {
    if (handle_) api_->convert_destroy(handle_);
  }
  CudaBlockMath(const CudaBlockMath&) = delete;
  CudaBlockMath& operator=(const CudaBlockMath&) = delete;

  // The module's block is the Llama block: a family block is refused by name.
  static void require_llama(const BlockShape& s, bool extra_norms) {
    if (s.beyond_llama() || extra_norms)
      throw Error(ErrorKind::unsupported, "the GPU block math runs only the Llama block (this family needs "
                                          "q/k or output norms, GeGLU, a query scale, soft-capping or a window); "
                                          "convert with --device cpu");
  }
  void load(const BlockShape& s, const AttentionWeights& w) override {
    require_llama(s, !w.q_norm.empty() || !w.out_norm.empty());
    describe(s);
    attention_ = true;
    upload(EXL_CUDA_CONV_NORM, w.norm);
    const std::pair<int, const std::vector<float>*> slots[] = {
        {EXL_CUDA_CONV_Q, &w.q},           {EXL_CUDA_CONV_K, &w.k},           {EXL_CUDA_CONV_V, &w.v},
        {EXL_CUDA_CONV_O, &w.o},           {EXL_CUDA_CONV_Q_BIAS, &w.q_bias}, {EXL_CUDA_CONV_K_BIAS, &w.k_bias},
        {EXL_CUDA_CONV_V_BIAS, &w.v_bias}, {EXL_CUDA_CONV_O_BIAS, &w.o_bias}};
    for (const auto& [slot, v] : slots) upload(slot, *v);
    attn_ = &w;
    mlp_ = nullptr;
  }
  void load(const BlockShape& s, const MlpWeights& w) override {
    require_llama(s, !w.out_norm.empty());
    describe(s);
    attention_ = false;
    upload(EXL_CUDA_CONV_NORM, w.norm);
    upload(EXL_CUDA_CONV_GATE, w.gate);
    upload(EXL_CUDA_CONV_UP, w.up);
    upload(EXL_CUDA_CONV_DOWN, w.down);
    mlp_ = &w;
    attn_ = nullptr;
  }
  void changed(const std::string& p) override { upload(weight_slot(p), loaded(p)); }
  void run(float* x, int tokens, bool collect) override {
    cuda_loader::check(api_->convert_run_block(handle_, &shape_, attention_ ? 1 : 0, x, tokens, collect ? 1 : 0),
                       "convert_run_block");
  }
  void reset_hessian(int slot, int k) override {
    cuda_loader::check(api_->convert_hessian_reset(handle_, slot, k), "convert_hessian_reset");
    k_[slot] = k;
  }
  void add_hessian(int slot, const float* x, int tokens) override {
    cuda_loader::check(api_->convert_hessian_add(handle_, slot, x, tokens), "convert_hessian_add");
  }
  std::vector<std::int32_t> prepare_hessian(int slot, int rows, const std::string& what) override {
    std::vector<std::int32_t> perm(std::size_t(k_.at(std::size_t(slot))));
    const int st = api_->convert_hessian_prepare(handle_, slot, 1.0 / double(rows), perm.data());
    if (st == EXL_CUDA_ERR_INVALID)
      throw Error(ErrorKind::internal, "the Hessian is not positive definite even after damping", {}, what);
    cuda_loader::check(st, "convert_hessian_prepare");
    perm_[slot] = perm;
    return perm;
  }
  std::vector<double> averaged_hessian(int, int) override {
    // The exl_cuda module keeps its Hessians on the device and has no download yet: EXL3
    // conversions run their block math on the CPU (convert_model chooses it).
    throw Error(ErrorKind::unsupported, "the GPU block math does not hand out raw Hessians (EXL3 conversion runs on the CPU)");
  }
  QuantizedLinear quantize(int slot, const float* w, int n, int k, const QuantOption& o) override {
    if (k_.at(std::size_t(slot)) != k) throw Error(ErrorKind::internal, "Hessian and weight disagree on in_features");
    QuantizedLinear r;
    r.k = k;
    r.n = n;
    r.n_pad = (n + 31) / 32 * 32;
    r.layout = group_layout(o, k);
    r.perm = perm_[slot];
    r.total_bits = linear_total_bits(r.layout, k, n);
    const int G = r.layout.groups();
    r.q.assign(std::size_t(k) * r.n_pad, 0);
    r.codes.assign(std::size_t(G) * r.n_pad, 0);
    r.scale_max.assign(std::size_t(G), 0);
    r.dequant.assign(std::size_t(n) * k, 0.0f);
    cuda_loader::check(api_->convert_gptq(handle_, slot, w, n, k, G, r.layout.bits.data(), r.layout.rows.data(), 0,
                                          r.q.data(), r.codes.data(), r.scale_max.data(), r.dequant.data()),
                       "convert_gptq");
    return r;
  }

  void add_candidate(int id, int slot, const std::string& proj, int n, int k, const QuantOption& o) override {
    const GroupLayout layout = group_layout(o, k);
    host_candidates_.erase(id);
    const int st = api_->convert_candidate(handle_, id, slot, weight_slot(proj), n, k, layout.groups(),
                                           layout.bits.data(), layout.rows.data());
    if (st == EXL_CUDA_ERR_OUT_OF_MEMORY) {  // no room on the device: keep this one in host memory
      host_candidates_[id] = quantize(slot, loaded(proj).data(), n, k, o).dequant;
      return;
    }
    cuda_loader::check(st, "convert_candidate");
  }
  void use_candidate(const std::string& proj, int id) override {
    const auto it = host_candidates_.find(id);
    if (it != host_candidates_.end()) upload(weight_slot(proj), it->second);
    else cuda_loader::check(api_->convert_candidate_use(handle_, weight_slot(proj), id), "convert_candidate_use");
  }
  void clear_candidates() override {
    host_candidates_.clear();
    cuda_loader::check(api_->convert_candidates_clear(handle_), "convert_candidates_clear");
  }
  void set_rows(const std::vector<std::vector<float>>& in, const std::vector<std::vector<float>>& ref) override {
    if (in.size() != ref.size() || in.empty()) throw Error(ErrorKind::internal, "converter: rows and references differ");
    const int H = shape_.hidden, T = int(in[0].size()) / H, R = int(in.size());
    for (int r = 0; r < R; ++r) {
      cuda_loader::check(api_->convert_rows(handle_, 0, r, R, in[std::size_t(r)].data(), T, H), "convert_rows");
      cuda_loader::check(api_->convert_rows(handle_, 1, r, R, ref[std::size_t(r)].data(), T, H), "convert_rows");
    }
  }
  double evaluate() override {
    double m = 0.0;
    const int st = api_->convert_evaluate(handle_, &shape_, attention_ ? 1 : 0, &m);
    if (st == EXL_CUDA_ERR_INVALID) throw Error(ErrorKind::internal, std::string(api_->last_error()));
    cuda_loader::check(st, "convert_evaluate");
    return m;
  }

 private:
  int weight_slot(const std::string& p) const {
    static const std::pair<const char*, int> slots[] = {
        {"q_proj", EXL_CUDA_CONV_Q},       {"k_proj", EXL_CUDA_CONV_K},   {"v_proj", EXL_CUDA_CONV_V},
        {"o_proj", EXL_CUDA_CONV_O},       {"gate_proj", EXL_CUDA_CONV_GATE}, {"up_proj", EXL_CUDA_CONV_UP},
        {"down_proj", EXL_CUDA_CONV_DOWN}};
    for (const auto& [name, slot] : slots)
      if (p == name && (slot == EXL_CUDA_CONV_GATE || slot == EXL_CUDA_CONV_UP || slot == EXL_CUDA_CONV_DOWN) != attention_)
        return slot;
    throw Error(ErrorKind::internal, "converter: the loaded block has no projection " + p);
  }
  // The loaded weights object's projection.
  const std::vector<float>& loaded(const std::string& p) const {
    if (attn_) return projection(*attn_, p);
    if (mlp_) return projection(*mlp_, p);
    throw Error(ErrorKind::internal, "converter: no block loaded");
  }
  void describe(const BlockShape& s) {
    inv_freq_ = s.rope.inv_freq;
    shape_ = exl_cuda_block_shape{};
    shape_.hidden = s.hidden;
    shape_.heads = s.heads;
    shape_.kv_heads = s.kv_heads;
    shape_.head_dim = s.head_dim;
    shape_.intermediate = s.intermediate;
    shape_.norm_eps = s.norm_eps;
    shape_.rope_inv_freq = inv_freq_.data();
    shape_.rope_mscale = s.rope.mscale;
    shape_.rope_position_divisor = s.rope.position_divisor;
    shape_.rope_style = s.rope_style == RopeStyle::gptj ? 1 : 0;
  }
  void upload(int slot, const std::vector<float>& v) {
    cuda_loader::check(api_->convert_set_tensor(handle_, slot, v.data(), std::int64_t(v.size())),
                       "convert_set_tensor");
  }

  const exl_cuda_api* api_ = nullptr;
  exl_cuda_convert* handle_ = nullptr;
  exl_cuda_block_shape shape_{};
  std::vector<float> inv_freq_;
  bool attention_ = true;
  const AttentionWeights* attn_ = nullptr;
  const MlpWeights* mlp_ = nullptr;
  std::array<int, 3> k_{};
  std::array<std::vector<std::int32_t>, 3> perm_;
  std::map<int, std::vector<float>> host_candidates_;
};

}  // namespace

std::unique_ptr<BlockMath> make_cuda_block_math(int device) { return std::make_unique<CudaBlockMath>(device); }

#else

std::unique_ptr<BlockMath> make_cuda_block_math(int) {
  throw Error(ErrorKind::unsupported, "this build has no CUDA support: convert with --device cpu");
}

#endif

}  // namespace exl::convert_detail

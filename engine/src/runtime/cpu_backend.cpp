// The CPU backend: the forward pass of every supported family from the fast kernels in
// kernels/cpu, interpreting the model's FamilyDescription (norm kind and placement, q/k norms,
// activation, embedding and query scaling, soft-capping, per-layer window and RoPE), fp32
// activations, weights read in place from the memory-mapped files (fp16/bf16 dense or packed
// EXL2, dequantized on the fly). The KV cache (fp32, fp16, fp8, q8, q4 stores per layer) is a pool
// of pages managed by a PageCache: the active sequence's positions reach their rows through its
// page table, and the pages of earlier sequences stay cached for prefix reuse. The contiguous
// (unpaged) cache is the same with a single page as long as the context. A mixture-of-experts
// layer (Mixtral, Qwen3-MoE) routes each token to its top-k experts and runs only those: the chunk's
// tokens are grouped by expert, so each chosen expert's weights are read once per step.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "exl/backend.h"
#include "exl/error.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/cpu_features.h"
#include "exl/kernels/exl2.h"
#include "exl/kernels/exl3.h"
#include "exl/kernels/kv_quant.h"
#include "exl/kernels/linear.h"
#include "exl/kernels/moe.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/rope.h"
#include "exl/kernels/threads.h"
#include "exl/model.h"
#include "exl/moe_routing.h"
#include "page_cache.h"

namespace exl {
namespace {

std::vector<float> to_float_vector(const TensorInfo* t, int expected) {
  std::vector<float> out;
  if (!t) return out;
  out.resize(std::size_t(expected), 0.0f);
  const std::int64_t n = std::min<std::int64_t>(t->numel(), expected);
  for (std::int64_t i = 0; i < n; ++i) {
    switch (t->dtype) {
      case DType::f16: out[std::size_t(i)] = half_to_float(t->as<half_bits>()[i]); break;
      case DType::bf16: out[std::size_t(i)] = bf16_to_float(t->as<std::uint16_t>()[i]); break;
      case DType::f32: out[std::size_t(i)] = t->as<float>()[i]; break;
      default: throw Error(ErrorKind::shape, "bias must be a float tensor", t->file, t->name);
    }
  }
  return out;
}

// One linear layer as the CPU backend runs it. Where the AVX2 kernels run, an EXL2 layer's packed
// weights are copied once, at load, into the tile-contiguous layout they stream (exl2_tile_cpu:
// 1.5x faster decode than walking the file's layout down column strips, bench/RESULTS.md). The
// memory map's pages of q_weight are then no longer read (clean pages the system may drop), but
// until it does they count too: memory() reports both.
struct CpuLinear {
  const LinearTensors* src = nullptr;
  std::vector<float> bias;  // fp32, out_features (empty: none)
  Exl2Weight view;          // EXL2: the layer's view with q_tiled set
  std::vector<std::uint32_t> tiled;

  void init(const LinearTensors& l) {
    src = &l;
    const TensorInfo* b = l.kind == LinearKind::exl2 ? (l.exl2->bias ? l.exl2->bias : l.bias)
                          : l.kind == LinearKind::exl3 ? l.exl3->bias
                                                       : l.bias;
    bias = to_float_vector(b, l.out_features);
    if (l.kind == LinearKind::exl2) {
      view = l.exl2->view;
      if (!cpu_simd_active()) return;  // the portable kernels read q_weight
      tiled.resize(std::size_t(view.n_pad) * std::size_t(view.q_rows));
      exl2_tile_cpu(view, tiled.data());
      view.q_tiled = tiled.data();
    }
  }
  std::uint64_t tiled_bytes() const { return tiled.size() * sizeof(std::uint32_t); }
  void run_exl3(const float* x, int m, float* y) const;

  // y[m, out] = x[m, in] . W (+ bias)
  void run(const float* x, int m, float* y) const {
    const LinearTensors& l = *src;
    if (l.kind == LinearKind::exl3) {
      run_exl3(x, m, y);
    } else if (l.kind == LinearKind::exl2) {
      exl2_matmul_cpu(view, x, m, y);
      if (!bias.empty())
        for (int r = 0; r < m; ++r)
          add_inplace_cpu(y + std::int64_t(r) * l.out_features, bias.data(), l.out_features);
    } else {
      linear_cpu(x, m, l.in_features, l.weight->data, l.weight->dtype, l.out_features,
                 bias.empty() ? nullptr : bias.data(), y);
    }
  }
};

// EXL3 (kernels/cpu/exl3_cpu.cpp): features padded to multiples of 128 in the file; inputs are
// zero-extended and padded outputs dropped (their svh is 0). The bias is added last.
void CpuLinear::run_exl3(const float* x, int m, float* y) const {
  const LinearTensors& l = *src;
  const Exl3Weight& w = l.exl3->view;
  if (w.k == l.in_features && w.n == l.out_features) {
    exl3_matmul_cpu(w, x, m, y);
  } else {
    std::vector<float> xp(std::size_t(m) * w.k, 0.0f), yp(std::size_t(m) * w.n);
    for (int r = 0; r < m; ++r)
      std::copy(x + std::int64_t(r) * l.in_features, x + std::int64_t(r + 1) * l.in_features, xp.begin() + std::int64_t(r) * w.k);
    exl3_matmul_cpu(w, xp.data(), m, yp.data());
    for (int r = 0; r < m; ++r)
      std::copy(yp.begin() + std::int64_t(r) * w.n, yp.begin() + std::int64_t(r) * w.n + l.out_features, y + std::int64_t(r) * l.out_features);
  }
  if (!bias.empty())
    for (int r = 0; r < m; ++r) add_inplace_cpu(y + std::int64_t(r) * l.out_features, bias.data(), l.out_features);
}

// A norm weight as the kernels take it: the tensor in place (NormKind::rms), or 1 + w in fp32
// (NormKind::rms_one_plus, Gemma: transformers adds 1 to the fp32 weight).
struct CpuNorm {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<float> plus_one;

  void init(const TensorInfo* t, NormKind kind) {
    if (!t) return;
    data = t->data;
    dtype = t->dtype;
    if (kind == NormKind::rms_one_plus) {
      plus_one = to_float_vector(t, int(t->numel()));
      for (float& w : plus_one) w += 1.0f;
      data = plus_one.data();
      dtype = DType::f32;
    }
  }
  explicit operator bool() const { return data != nullptr; }
  void run(const float* x, int rows, int dim, float eps, float* y) const { rms_norm_cpu(x, rows, dim, data, dtype, eps, y); }
};

struct CpuExpert {
  CpuLinear gate, up, down;
};

struct CpuLayer {
  CpuLinear q, k, v, o, gate, up, down;
  CpuLinear router;                // sparse layers: [hidden -> num_experts]
  std::vector<CpuExpert> experts;  // empty: a dense MLP
  CpuNorm input_norm, q_norm, k_norm, attn_out_norm, mlp_norm, mlp_out_norm;
};

class CpuBackend final : public Backend, private PageStorage {
 public:
  explicit CpuBackend(const BackendOptions& o) : opts_(o) {
    if (o.threads > 0) set_cpu_threads(o.threads);
  }

  std::string name() const override { return "cpu"; }

  void load(std::shared_ptr<const Model> model) override {
    model_ = std::move(model);
    const ModelConfig& c = model_->config();
    layers_.assign(std::size_t(c.num_layers), {});
    for (int i = 0; i < c.num_layers; ++i) {
      const LayerTensors& t = model_->layers()[std::size_t(i)];
      CpuLayer& l = layers_[std::size_t(i)];
      l.q.init(t.q); l.k.init(t.k); l.v.init(t.v); l.o.init(t.o);
      if (t.sparse()) {
        l.router.init(t.router);
        l.experts.resize(t.experts.size());
        for (std::size_t e = 0; e < t.experts.size(); ++e) {
          l.experts[e].gate.init(t.experts[e].gate);
          l.experts[e].up.init(t.experts[e].up);
          l.experts[e].down.init(t.experts[e].down);
        }
      } else {
        l.gate.init(t.gate); l.up.init(t.up); l.down.init(t.down);
      }
      const NormKind nk = c.family.norm;
      l.input_norm.init(t.input_norm, nk);
      l.q_norm.init(t.q_norm, nk);
      l.k_norm.init(t.k_norm, nk);
      if (c.family.sandwich_norms) l.attn_out_norm.init(t.post_attention_norm, nk);
      l.mlp_norm.init(t.mlp_norm(), nk);
      l.mlp_out_norm.init(t.post_feedforward_norm, nk);
    }
    head_.init(model_->head());
    final_norm_.init(&model_->final_norm(), c.family.norm);
    make_rope_tables(0);
    k_cache_.clear();
    v_cache_.clear();
    seq_.close();
  }

  void allocate_cache(const CacheOptions& options) override {
    require_model();
    if (options.max_seq_len <= 0) throw Error(ErrorKind::invalid_argument, "cache length must be positive");
    const ModelConfig& c = model_->config();
    k_format_ = kv_format_for(options.type, options.k_bits, "key");
    v_format_ = kv_format_for(options.type, options.v_bits, "value");
    const int row = c.num_kv_heads * c.head_dim;
    int page_tokens = options.max_seq_len, pages = 1;
    if (options.paged) {
      page_tokens = kPageTokens;
      const bool quantized = k_format_ == KvFormat::q8 || k_format_ == KvFormat::q4 || v_format_ == KvFormat::q8 ||
                             v_format_ == KvFormat::q4;
      if (quantized && page_tokens % kv_q_block(row) != 0)
        throw Error(ErrorKind::unsupported, "a paged quantized cache needs K/V rows whose quantization blocks fit a "
                                            "page (row of " + std::to_string(row) + " elements); use the unpaged cache");
      const int tokens = std::max(options.max_seq_len, options.cache_tokens);
      pages = (tokens + page_tokens - 1) / page_tokens;
    }
    k_cache_.clear();
    v_cache_.clear();
    seq_.close();
    try {
      for (int i = 0; i < c.num_layers; ++i) {
        k_cache_.emplace_back(k_format_, pages * page_tokens, row);
        v_cache_.emplace_back(v_format_, pages * page_tokens, row);
      }
    } catch (const std::bad_alloc&) {
      k_cache_.clear();
      v_cache_.clear();
      throw Error(ErrorKind::out_of_memory, "not enough host memory for a KV cache of " +
                                                std::to_string(pages * page_tokens) + " tokens");
    }
    seq_.open(pages, page_tokens, options.max_seq_len);
    make_rope_tables(options.max_seq_len);
  }

  int cache_capacity() const override { return seq_.capacity(); }
  int cache_length() const override { return seq_.length(); }
  void truncate_cache(int length) override { seq_.truncate(length); }
  int reuse_prefix(std::span<const std::int32_t> tokens, int max_reuse) override {
    return seq_.reuse_prefix(tokens, max_reuse);
  }

  int vocab_size() const override { return model_ ? model_->config().vocab_size : 0; }

  MemoryStats memory() const override {
    MemoryStats m;
    for (const auto& k : k_cache_) m.cache_bytes += k.bytes();
    for (const auto& v : v_cache_) m.cache_bytes += v.bytes();
    // The model's tensors as mapped, and the EXL2 layers' tile-contiguous copies.
    if (model_) {
      std::uint64_t tiled = head_.tiled_bytes();
      for (const CpuLayer& l : layers_) {
        for (const CpuLinear* c : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) tiled += c->tiled_bytes();
        for (const CpuExpert& e : l.experts) tiled += e.gate.tiled_bytes() + e.up.tiled_bytes() + e.down.tiled_bytes();
      }
      m.weights_bytes = model_->tensors().total_bytes() + tiled;
    }
    m.scratch_bytes = scratch_bytes();
    return m;
  }

  void forward(std::span<const std::int32_t> ids, LogitsWanted wanted, std::vector<float>& logits) override;

 private:
  // RoPE tables for a context (LongRoPE's factors depend on it): the global one and the local
  // layers' (Gemma 3).
  void make_rope_tables(int context) {
    const ModelConfig& c = model_->config();
    rope_ = rope_table(rope_for_context(c, context));
    rope_local_ = rope_table(rope_for_context(c, context, true));
  }
  void require_model() const {
    if (!model_) throw Error(ErrorKind::invalid_argument, "no model loaded in the CPU backend");
  }
  std::uint64_t scratch_bytes() const {
    return 4 * (x_.capacity() + a_.capacity() + q_.capacity() + k_.capacity() + v_.capacity() + att_.capacity() +
                g_.capacity() + u_.capacity() + t_.capacity() + router_.capacity() + route_w_.capacity() +
                route_e_.capacity() + xs_.capacity() + ys_.capacity() + rows_.capacity());
  }
  void run_experts(const CpuLayer& l, int layer, int T);

  BackendOptions opts_;
  std::shared_ptr<const Model> model_;
  std::vector<CpuLayer> layers_;
  CpuLinear head_;
  CpuNorm final_norm_;
  RopeTable rope_, rope_local_;
  static KvFormat kv_format_for(CacheType type, int bits, const char* what) {
    if (bits == 16) return KvFormat::f16;
    if (bits == 8) return KvFormat::q8;
    if (bits == 4) return KvFormat::q4;
    if (bits != 0)
      throw Error(ErrorKind::invalid_argument, std::string("unsupported ") + what + " cache width " +
                                                   std::to_string(bits) + " (4, 8 or 16 bits)");
    switch (type) {
      case CacheType::fp32: return KvFormat::f32;
      case CacheType::fp16: return KvFormat::f16;
      case CacheType::fp8: return KvFormat::fp8;
      case CacheType::q8: return KvFormat::q8;
      case CacheType::q6: return std::string(what) == "key" ? KvFormat::q8 : KvFormat::q4;  // K8/V4
      case CacheType::q4: return KvFormat::q4;
    }
    return KvFormat::f16;
  }
  // Both stores plain f32/f16: attention reads them in place.
  bool plain_cache() const {
    return (k_format_ == KvFormat::f32 || k_format_ == KvFormat::f16) && k_format_ == v_format_;
  }

  // PageStorage: copy on write of one page, every layer's K and V.
  void copy_page(int dst, int src) override {
    const int n = seq_.page_tokens();
    for (auto& k : k_cache_) k.copy_rows(dst * n, src * n, n);
    for (auto& v : v_cache_) v.copy_rows(dst * n, src * n, n);
  }

  KvFormat k_format_ = KvFormat::f16, v_format_ = KvFormat::f16;
  std::vector<KvStore> k_cache_, v_cache_;  // per layer: pages x page_tokens rows
  ActiveSequence seq_;  // the page cache and its active sequence
  std::vector<float> x_, a_, q_, k_, v_, att_, g_, u_, t_;
  std::vector<float> router_, route_w_, xs_, ys_;   // mixture of experts: logits, weights, gathered rows
  std::vector<std::int32_t> route_e_, rows_;
  std::vector<std::int32_t> pos_;
};

void CpuBackend::forward(std::span<const std::int32_t> ids, LogitsWanted wanted, std::vector<float>& logits) {
  require_model();
  const ModelConfig& c = model_->config();
  const int T = int(ids.size());
  const int cache_len = seq_.check_step(T);
  if (T == 0) {
    logits.clear();
    return;
  }
  if (T > opts_.max_chunk_size)
    throw Error(ErrorKind::invalid_argument, "chunk of " + std::to_string(T) + " tokens exceeds max_chunk_size " +
                                                 std::to_string(opts_.max_chunk_size));
  for (std::int32_t id : ids)
    if (id < 0 || id >= c.vocab_size)
      throw Error(ErrorKind::invalid_argument, "token id " + std::to_string(id) + " outside the vocabulary (" +
                                                   std::to_string(c.vocab_size) + ")");

  const int H = c.hidden_size, nh = c.num_heads, nkv = c.num_kv_heads, d = c.head_dim, I = c.intermediate_size;
  const std::size_t TH = std::size_t(T) * std::size_t(H);
  x_.resize(TH); a_.resize(TH);
  q_.resize(std::size_t(T) * std::size_t(nh) * std::size_t(d));
  k_.resize(std::size_t(T) * std::size_t(nkv) * std::size_t(d));
  v_.resize(k_.size());
  att_.resize(q_.size());
  g_.resize(std::size_t(T) * std::size_t(std::max(I, c.moe.expert_intermediate)));
  u_.resize(g_.size());
  t_.resize(TH);
  pos_.resize(std::size_t(T));
  std::iota(pos_.begin(), pos_.end(), cache_len);
  // Pages for the new positions (a shared page is copied first); they hold no K/V for these ids
  // until commit() below, so an error part-way leaves the sequence as it was.
  seq_.reserve(T, *this);
  const std::span<const std::int32_t> table = seq_.page_table();

  const FamilyDescription& fam = c.family;
  const TensorInfo& emb = model_->embedding();
  embedding_cpu(emb.data, emb.dtype, c.vocab_size, H, ids.data(), T, x_.data());
  if (fam.embedding_scale != 1.0f)
    for (float& v : x_) v *= fam.embedding_scale;

  AttentionParams ap;
  ap.tokens = T; ap.past = cache_len; ap.n_heads = nh; ap.n_kv_heads = nkv; ap.head_dim = d;
  ap.scale = fam.attention_scale > 0.0f ? fam.attention_scale : 1.0f / std::sqrt(float(d));
  ap.softcap = fam.attn_logit_softcap;
  ap.cache_dtype = k_format_ == KvFormat::f32 ? DType::f32 : DType::f16;
  ap.page_table = table.data();
  ap.page_tokens = seq_.page_tokens();
  const bool plain = plain_cache();

  for (int li = 0; li < c.num_layers; ++li) {
    const CpuLayer& l = layers_[std::size_t(li)];
    const LayerAttention la = std::size_t(li) < c.layer_attention.size() ? c.layer_attention[std::size_t(li)] : LayerAttention{};
    l.input_norm.run(x_.data(), T, H, c.rms_norm_eps, a_.data());
    l.q.run(a_.data(), T, q_.data());
    l.k.run(a_.data(), T, k_.data());
    l.v.run(a_.data(), T, v_.data());
    if (l.q_norm) {  // per head, before RoPE
      l.q_norm.run(q_.data(), T * nh, d, c.rms_norm_eps, q_.data());
      l.k_norm.run(k_.data(), T * nkv, d, c.rms_norm_eps, k_.data());
    }
    const RopeTable& rope = la.local_rope ? rope_local_ : rope_;
    rope_apply_cpu(q_.data(), T, nh, d, pos_.data(), rope, c.rope.style);
    rope_apply_cpu(k_.data(), T, nkv, d, pos_.data(), rope, c.rope.style);
    ap.window = la.window;
    KvStore& kc = k_cache_[std::size_t(li)];
    KvStore& vc = v_cache_[std::size_t(li)];
    if (plain) {
      kv_write_positions(kc, ap, k_.data(), T, cache_len);
      kv_write_positions(vc, ap, v_.data(), T, cache_len);
      attention_cpu(ap, q_.data(), kc.raw(), vc.raw(), att_.data());
    } else {
      // Quantized cache: attend to the dequantized prefix and the chunk's own K/V, then store the chunk.
      attention_kvstore_cpu(ap, q_.data(), kc, vc, k_.data(), v_.data(), att_.data());
      kv_write_positions(kc, ap, k_.data(), T, cache_len);
      kv_write_positions(vc, ap, v_.data(), T, cache_len);
    }
    l.o.run(att_.data(), T, t_.data());
    if (l.attn_out_norm) l.attn_out_norm.run(t_.data(), T, H, c.rms_norm_eps, t_.data());
    add_inplace_cpu(x_.data(), t_.data(), std::int64_t(TH));

    l.mlp_norm.run(x_.data(), T, H, c.rms_norm_eps, a_.data());
    if (!l.experts.empty()) {
      run_experts(l, li, T);
    } else {
      const std::int64_t n = std::int64_t(T) * I;
      l.gate.run(a_.data(), T, g_.data());
      l.up.run(a_.data(), T, u_.data());
      if (fam.activation == Activation::gelu_tanh)
        gelu_tanh_mul_cpu(g_.data(), u_.data(), n, g_.data());
      else
        silu_mul_cpu(g_.data(), u_.data(), n, g_.data());
      l.down.run(g_.data(), T, t_.data());
    }
    if (l.mlp_out_norm) l.mlp_out_norm.run(t_.data(), T, H, c.rms_norm_eps, t_.data());
    add_inplace_cpu(x_.data(), t_.data(), std::int64_t(TH));
  }
  seq_.commit(ids);

  if (wanted == LogitsWanted::none) {
    logits.clear();
    return;
  }
  const int rows = wanted == LogitsWanted::all ? T : 1;
  const float* src = x_.data() + std::size_t(T - rows) * std::size_t(H);
  final_norm_.run(src, rows, H, c.rms_norm_eps, a_.data());
  logits.resize(std::size_t(rows) * std::size_t(c.vocab_size));
  head_.run(a_.data(), rows, logits.data());
  if (fam.final_logit_softcap > 0.0f)
    softcap_inplace_cpu(logits.data(), std::int64_t(logits.size()), fam.final_logit_softcap);
}

// A sparse layer's MLP on the normed rows a_[T, H] into t_[T, H]: the router's logits, softmax and
// top-k per token (moe_route_ref), then expert by expert in index order the rows routed to it,
// gathered, through its SwiGLU MLP, each output row added to its token's sum times its weight. Each
// token's sum thus takes its experts in ascending index order, as transformers' loop does. Only the
// chosen experts run; each reads its weights once per step whatever the number of its rows.
void CpuBackend::run_experts(const CpuLayer& l, int layer, int T) {
  const ModelConfig& c = model_->config();
  const MoeDescription& moe = c.moe;
  const int H = c.hidden_size, E = moe.num_experts, K = moe.top_k, I = moe.expert_intermediate;
  router_.resize(std::size_t(T) * std::size_t(E));
  route_e_.resize(std::size_t(T) * std::size_t(K));
  route_w_.resize(route_e_.size());
  l.router.run(a_.data(), T, router_.data());
  moe_route_ref(router_.data(), T, E, K, moe.norm_topk_prob, route_e_.data(), route_w_.data());
  if (const MoeRoutingObserver* watch = moe_routing_observer()) (*watch)(layer, T, K, route_e_.data());

  xs_.resize(std::size_t(T) * std::size_t(H));
  ys_.resize(xs_.size());
  rows_.resize(std::size_t(T) * std::size_t(K));
  std::fill(t_.begin(), t_.begin() + std::ptrdiff_t(std::size_t(T) * std::size_t(H)), 0.0f);
  for (int e = 0; e < E; ++e) {
    int n = 0;  // slots (token * K + j) routed to e, in token order
    for (int s = 0; s < T * K; ++s)
      if (route_e_[std::size_t(s)] == e) rows_[std::size_t(n++)] = s;
    if (n == 0) continue;
    for (int r = 0; r < n; ++r) {
      const float* src = a_.data() + std::size_t(rows_[std::size_t(r)] / K) * std::size_t(H);
      std::copy(src, src + H, xs_.data() + std::size_t(r) * std::size_t(H));
    }
    const CpuExpert& x = l.experts[std::size_t(e)];
    x.gate.run(xs_.data(), n, g_.data());
    x.up.run(xs_.data(), n, u_.data());
    silu_mul_cpu(g_.data(), u_.data(), std::int64_t(n) * I, g_.data());
    x.down.run(g_.data(), n, ys_.data());
    for (int r = 0; r < n; ++r) {
      const int slot = rows_[std::size_t(r)];
      const float w = route_w_[std::size_t(slot)];
      float* dst = t_.data() + std::size_t(slot / K) * std::size_t(H);
      const float* y = ys_.data() + std::size_t(r) * std::size_t(H);
      for (int h = 0; h < H; ++h) dst[h] += w * y[h];
    }
  }
}

}  // namespace

const char* cache_type_name(CacheType t) {
  switch (t) {
    case CacheType::fp32: return "fp32";
    case CacheType::fp16: return "fp16";
    case CacheType::fp8: return "fp8";
    case CacheType::q8: return "q8";
    case CacheType::q6: return "q6";
    case CacheType::q4: return "q4";
  }
  return "?";
}

CacheType parse_cache_type(const std::string& s) {
  for (CacheType t : {CacheType::fp32, CacheType::fp16, CacheType::fp8, CacheType::q8, CacheType::q6, CacheType::q4})
    if (s == cache_type_name(t)) return t;
  throw Error(ErrorKind::invalid_argument, "unknown cache type '" + s + "' (fp16, fp32, fp8, q8, q6, q4)");
}

std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

}  // namespace exl

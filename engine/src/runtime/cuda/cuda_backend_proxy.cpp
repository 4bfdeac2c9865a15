// CudaBackend (engine side): implements exl::Backend by describing the Model to the exl_cuda
// module in plain C structs (pointers into the memory map, dtypes, shapes) and calling its
// table. The module owns everything on the device; this class owns the module's handle.
// The KV cache's bookkeeping is the CPU backend's: a PageCache (page_cache.h) here decides which
// store page holds each position, shares and evicts pages, and finds cached prefixes; before each
// step the module gets the active sequence's page table and length (set_cache_pages) and copies
// pages on write (copy_cache_page). The unpaged cache is one page as long as the context.
// A layer split (BackendOptions::split) is one module backend per segment, linked in order: every
// step runs the segments one after the other (each hands its residual to the next), the page
// table and page copies go to all of them, and only the last one produces logits or samples.
#include <algorithm>
#include <set>
#include <cmath>
#include <cstdlib>

#include "cuda_loader.h"
#include "device_sampler_pack.h"
#include "exl/cuda.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/kernels/rope.h"
#include "exl/log.h"
#include "exl/model.h"
#include "../page_cache.h"

namespace exl {
namespace {

int dtype_code(DType t) {
  switch (t) {
    case DType::f32: return EXL_CUDA_F32;
    case DType::f16: return EXL_CUDA_F16;
    case DType::bf16: return EXL_CUDA_BF16;
    default: throw Error(ErrorKind::unsupported, "the CUDA backend needs f16/bf16/f32 dense tensors");
  }
}

exl_cuda_linear describe(const LinearTensors& l) {
  exl_cuda_linear d{};
  d.in_features = l.in_features;
  d.out_features = l.out_features;
  const TensorInfo* bias = l.bias;
  if (l.kind == LinearKind::exl3) {
    const Exl3Weight& w = l.exl3->view;
    d.kind = 2;
    d.exl3 = exl_cuda_exl3{w.trellis, w.suh, w.svh, w.k, w.n, w.bits2, int(w.codebook)};
    if (l.exl3->bias) bias = l.exl3->bias;
  } else if (l.kind == LinearKind::exl2) {
    const Exl2Weight& w = l.exl2->view;
    d.kind = 1;
    d.exl2 = exl_cuda_exl2{w.q_weight, w.q_scale, w.q_scale_max, w.q_groups, w.q_perm, w.k, w.n, w.n_pad, w.groups,
                           w.q_rows};
    if (l.exl2->bias) bias = l.exl2->bias;
  } else {
    d.kind = 0;
    d.weight = l.weight->data;
    d.weight_dtype = dtype_code(l.weight->dtype);
  }
  if (bias) {
    d.bias = bias->data;
    d.bias_dtype = dtype_code(bias->dtype);
  }
  return d;
}

class CudaBackend final : public Backend, private PageStorage {
 public:
  explicit CudaBackend(const BackendOptions& o) : opts_(o) {
    std::string why;
    api_ = cuda_loader::api(&why);
    if (!api_) throw Error(ErrorKind::device, "CUDA backend unavailable: " + why);
    std::vector<LayerSegment> split = o.split;
    if (split.empty()) split.push_back({o.device, 0, o.vram_limit});
    for (std::size_t i = 0; i < split.size(); ++i)
      if (split[i].layers < 0 || (split[i].layers == 0 && i + 1 < split.size()))
        throw Error(ErrorKind::invalid_argument, "layer split: segment " + std::to_string(i) + " on cuda:" +
                                                     std::to_string(split[i].device) + " holds " +
                                                     std::to_string(split[i].layers) +
                                                     " layers (only the last may be 0: the rest)");
    int first = 0;
    for (const LayerSegment& g : split) {
      exl_cuda_options co{};
      co.device = g.device;
      co.max_chunk = o.max_chunk_size;
      co.cuda_graphs = o.cuda_graphs ? 1 : 0;
      co.fast_reduce = o.deterministic ? 0 : 1;
      co.vram_limit = g.vram_limit;
      co.layer_first = first;
      co.layer_count = g.layers;
      Segment seg;
      seg.device = g.device;
      seg.first = first;
      seg.count = g.layers;
      // Created one by one: a failure destroys the ones made so far (~CudaBackend does not run).
      try {
        cuda_loader::check(api_->create(&co, &seg.handle), "create");
      } catch (...) {
        destroy_all();
        throw;
      }
      segs_.push_back(seg);
      first += g.layers;
    }
    device_sampling_ = device_sampler_enabled(std::getenv("EXL_CUDA_DEVICE_SAMPLER"));
    if (!device_sampling_) log(LogLevel::info, "CUDA backend: device sampling off (EXL_CUDA_DEVICE_SAMPLER=0)");
  }
  ~CudaBackend() override { destroy_all(); }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  // The module runs every family the engine describes (ABI 10: exl_cuda_family and the layers'
  // norms, windows and RoPE tables), LongRoPE's long factors included (the module takes the long
  // table for a cache longer than the original context), so nothing is refused here any more;
  // features_beyond_llama stays the list of what a Llama-only backend would lack.

  std::string name() const override {
    std::string n;
    for (const Segment& g : segs_) n += (n.empty() ? "cuda:" : "+cuda:") + std::to_string(g.device);
    return n;
  }

  void load(std::shared_ptr<const Model> model) override {
    const ModelConfig& c = model->config();
    // Mixture-of-experts layers (Mixtral, Qwen3-MoE) have no module counterpart yet.
    if (c.moe.active())
      throw Error(ErrorKind::unsupported,
                  "mixture-of-experts models (" + c.architecture + ") run on the CPU backend for now; use --device cpu",
                  (c.dir / "config.json").string(), "architectures");
    const FamilyDescription& fam = c.family;
    std::vector<exl_cuda_layer> layers(std::size_t(c.num_layers));
    bool any_local = false;
    for (int i = 0; i < c.num_layers; ++i) {
      const LayerTensors& t = model->layers()[std::size_t(i)];
      exl_cuda_layer& l = layers[std::size_t(i)];
      auto norm = [](const TensorInfo* w, const void*& data, int& dtype) {
        if (!w) return;
        data = w->data;
        dtype = dtype_code(w->dtype);
      };
      norm(t.input_norm, l.input_norm, l.input_norm_dtype);
      norm(t.mlp_norm(), l.post_norm, l.post_norm_dtype);  // Llama: post_attention_norm
      norm(t.q_norm, l.q_norm, l.q_norm_dtype);
      norm(t.k_norm, l.k_norm, l.k_norm_dtype);
      if (fam.sandwich_norms) norm(t.post_attention_norm, l.attn_out_norm, l.attn_out_norm_dtype);
      norm(t.post_feedforward_norm, l.mlp_out_norm, l.mlp_out_norm_dtype);
      if (std::size_t(i) < c.layer_attention.size()) {
        l.window = c.layer_attention[std::size_t(i)].window;
        l.local_rope = c.layer_attention[std::size_t(i)].local_rope ? 1 : 0;
        any_local = any_local || l.local_rope;
      }
      l.q = describe(t.q); l.k = describe(t.k); l.v = describe(t.v); l.o = describe(t.o);
      l.gate = describe(t.gate); l.up = describe(t.up); l.down = describe(t.down);
    }
    const RopeTable rope = rope_table(rope_for_context(c, 0));
    // LongRoPE: the long factors' table too, which the module takes for caches longer than the
    // original context (as the CPU backend's rope_for_context(c, context)).
    const bool longrope = c.rope.scaling == RopeScaling::longrope && c.rope.original_max_position > 0;
    const RopeTable rope_long = longrope ? rope_table(rope_for_context(c, c.rope.original_max_position + 1)) : RopeTable{};
    const RopeTable rope_local = any_local ? rope_table(rope_for_context(c, 0, true)) : RopeTable{};
    auto table = [&](const RopeTable& r) {
      return exl_cuda_rope{r.inv_freq.data(), rope_half(r, c.head_dim), r.mscale, r.position_divisor};
    };
    exl_cuda_model m{};
    m.vocab = c.vocab_size; m.hidden = c.hidden_size; m.num_layers = c.num_layers; m.num_heads = c.num_heads;
    m.num_kv_heads = c.num_kv_heads; m.head_dim = c.head_dim; m.intermediate = c.intermediate_size;
    m.rms_eps = c.rms_norm_eps;
    m.rope_inv_freq = rope.inv_freq.data();
    m.rope_mscale = rope.mscale;
    m.rope_position_divisor = rope.position_divisor;
    m.rope_style = c.rope.style == RopeStyle::gptj ? 1 : 0;
    m.embedding = model->embedding().data;
    m.embedding_dtype = dtype_code(model->embedding().dtype);
    m.final_norm = model->final_norm().data;
    m.final_norm_dtype = dtype_code(model->final_norm().dtype);
    m.head = describe(model->head());
    m.layers = layers.data();
    exl_cuda_family& f = m.family;
    f.norm_one_plus = fam.norm == NormKind::rms_one_plus ? 1 : 0;
    f.gelu_tanh = fam.activation == Activation::gelu_tanh ? 1 : 0;
    f.embedding_scale = fam.embedding_scale;
    f.attention_scale = fam.attention_scale;
    f.attn_logit_softcap = fam.attn_logit_softcap;
    f.final_logit_softcap = fam.final_logit_softcap;
    f.rotary_half = rope_half(rope, c.head_dim);
    if (longrope) {
      f.rope_long = table(rope_long);
      f.rope_long_after = c.rope.original_max_position;
    }
    if (any_local) f.rope_local = table(rope_local);
    model_.reset();
    // The split must place every layer: the explicit counts (the last one 0 = the rest) add up.
    const Segment& tail = segs_.back();
    if (tail.first >= c.num_layers || (tail.count > 0 && tail.first + tail.count != c.num_layers))
      throw Error(ErrorKind::invalid_argument,
                  "layer split: the segments place " + std::to_string(tail.count > 0 ? tail.first + tail.count : tail.first) +
                      (tail.count > 0 ? "" : "+") + " layers; the model has " + std::to_string(c.num_layers));
    for (Segment& g : segs_) {
      g.layers = g.count > 0 ? g.count : c.num_layers - g.first;
      cuda_loader::check(api_->load(g.handle, &m, nullptr, nullptr), "load");
    }
    for (std::size_t i = 1; i < segs_.size(); ++i)
      cuda_loader::check(api_->link_segments(segs_[i - 1].handle, segs_[i].handle, opts_.split_via_host ? 1 : 0),
                         "link_segments");
    model_ = std::move(model);
    seq_.close();
    sent_.clear();
  }

  // The module's store formats (kernels.h KvFmt): 1 fp16, 2 fp8, 3 q8, 4 q4.
  static int store_format(CacheType type, int bits, bool key) {
    if (bits == 16) return 1;
    if (bits == 8) return 3;
    if (bits == 4) return 4;
    if (bits != 0)
      throw Error(ErrorKind::invalid_argument, std::string("unsupported ") + (key ? "key" : "value") +
                                                   " cache width " + std::to_string(bits) + " (4, 8 or 16 bits)");
    switch (type) {
      case CacheType::fp16: return 1;
      case CacheType::fp8: return 2;
      case CacheType::q8: return 3;
      case CacheType::q6: return key ? 3 : 4;  // K8/V4
      case CacheType::q4: return 4;
      case CacheType::fp32: break;
    }
    throw Error(ErrorKind::unsupported, "the CUDA backend has no fp32 cache (fp16, fp8, q8, q6 or q4)");
  }

  void allocate_cache(const CacheOptions& options) override {
    if (!model_) throw Error(ErrorKind::invalid_argument, "allocate_cache before load");
    if (options.max_seq_len <= 0) throw Error(ErrorKind::invalid_argument, "cache length must be positive");
    const int code = store_format(options.type, options.k_bits, true) | store_format(options.type, options.v_bits, false) << 8;
    seq_.close();
    sent_.clear();
    static_assert(kPageTokens == 256, "the module's pages hold 256 positions");
    int pages = 1, page_tokens = options.max_seq_len;
    if (options.paged) {
      const int tokens = std::max(options.max_seq_len, options.cache_tokens);
      page_tokens = kPageTokens;
      pages = (tokens + kPageTokens - 1) / kPageTokens;
      for (const Segment& g : segs_)
        cuda_loader::check(api_->allocate_paged_cache(g.handle, options.max_seq_len, pages, code), "allocate_cache");
    } else {
      for (const Segment& g : segs_)
        cuda_loader::check(api_->allocate_cache(g.handle, options.max_seq_len, code), "allocate_cache");
    }
    seq_.open(pages, page_tokens, options.max_seq_len);
    paged_ = options.paged;
  }
  int cache_capacity() const override { return seq_.capacity(); }
  int cache_length() const override { return seq_.length(); }
  void truncate_cache(int length) override { seq_.truncate(length); }
  int reuse_prefix(std::span<const std::int32_t> tokens, int max_reuse) override {
    return seq_.reuse_prefix(tokens, max_reuse);
  }

  void forward(std::span<const std::int32_t> ids, LogitsWanted wanted, std::vector<float>& logits) override {
    if (ids.empty()) { logits.clear(); return; }
    const int mode = wanted == LogitsWanted::none ? 0 : wanted == LogitsWanted::last ? 1 : 2;
    const std::size_t rows = mode == 0 ? 0 : mode == 1 ? 1 : ids.size();
    logits.resize(rows * std::size_t(vocab_size()));
    begin_step(ids);
    run_segments_before_last(ids);
    cuda_loader::check(api_->forward(segs_.back().handle, ids.data(), int(ids.size()), mode, logits.data()), "forward");
    seq_.commit(ids);
  }

  int vocab_size() const override { return model_ ? model_->config().vocab_size : 0; }

  // Decode steps sample on the device: only the chosen id comes back (speculative verification
  // still reads host logits through forward()). Lists too long for the device buffers fall back
  // to the host sampler.
  std::int32_t forward_sample(std::span<const std::int32_t> ids, Sampler& sampler,
                              std::span<const std::int32_t> context) override {
    if (!device_sampling_ || ids.empty()) return host_forward_sample(*this, ids, sampler, context);
    packer_.pack(sampler.settings(), context, vocab_size(), pack_);
    if (pack_.banned.size() + pack_.bias_ids.size() > EXL_CUDA_SAMPLER_MAX_EDITS ||
        pack_.penalty_ids.size() > std::size_t(seq_.capacity()) + 64)
      return host_forward_sample(*this, ids, sampler, context);
    exl_cuda_sampler c{};
    c.greedy = pack_.greedy ? 1 : 0;
    c.temperature = pack_.temperature;
    c.top_k = pack_.top_k; c.top_p = pack_.top_p; c.min_p = pack_.min_p; c.typical = pack_.typical;
    c.repetition_penalty = pack_.repetition_penalty;
    c.frequency_penalty = pack_.frequency_penalty;
    c.presence_penalty = pack_.presence_penalty;
    c.vocab_limit = pack_.vocab_limit;
    c.penalty_ids = pack_.penalty_ids.data();
    c.penalty_counts = pack_.penalty_counts.data();
    c.num_penalty = int(pack_.penalty_ids.size());
    c.banned = pack_.banned.data();
    c.num_banned = int(pack_.banned.size());
    c.bias_ids = pack_.bias_ids.data();
    c.bias_values = pack_.bias_values.data();
    c.num_bias = int(pack_.bias_ids.size());
    c.uniform = pack_.greedy ? 0.0 : sampler.next_uniform();  // one uniform per draw, as on the host
    exl_cuda_sample_result r{};
    begin_step(ids);
    run_segments_before_last(ids);
    cuda_loader::check(api_->forward_sample(segs_.back().handle, ids.data(), int(ids.size()), &c, &r),
                       "forward_sample");
    seq_.commit(ids);
    return r.id;
  }
  bool samples_on_device() const override { return device_sampling_; }

  MemoryStats memory() const override {
    MemoryStats s;
    std::set<int> counted;
    for (const Segment& g : segs_) {
      exl_cuda_memory m{};
      cuda_loader::check(api_->memory(g.handle, &m), "memory");
      DeviceMemoryStats d;
      d.device = g.device;
      d.first_layer = g.first;
      d.layers = g.layers;
      d.weights_bytes = m.weights_bytes; d.cache_bytes = m.cache_bytes; d.scratch_bytes = m.scratch_bytes;
      d.device_total = m.device_total; d.device_free = m.device_free;
      s.weights_bytes += m.weights_bytes; s.cache_bytes += m.cache_bytes; s.scratch_bytes += m.scratch_bytes;
      if (counted.insert(g.device).second) { s.device_total += m.device_total; s.device_free += m.device_free; }
      s.devices.push_back(d);
    }
    return s;
  }

 private:
  // Before a step of n ids: the pages for its positions (a shared page is copied first; an error
  // leaves the sequence as it was), then the module gets the page table, where it changed, and
  // the length. commit() after the module wrote the K/V.
  void begin_step(std::span<const std::int32_t> ids) {
    const int length = seq_.check_step(int(ids.size()));
    seq_.reserve(int(ids.size()), *this);
    const std::span<const std::int32_t> table = seq_.page_table();
    const bool send = paged_ && !std::equal(table.begin(), table.end(), sent_.begin(), sent_.end());
    for (const Segment& g : segs_)
      cuda_loader::check(api_->set_cache_pages(g.handle, send ? table.data() : nullptr, int(table.size()), length),
                         "set_cache_pages");
    if (send) sent_.assign(table.begin(), table.end());
  }
  // A layer split: every segment but the last runs the step (no logits); each hands its residual
  // to the next when the next one starts.
  void run_segments_before_last(std::span<const std::int32_t> ids) {
    for (std::size_t i = 0; i + 1 < segs_.size(); ++i)
      cuda_loader::check(api_->forward(segs_[i].handle, ids.data(), int(ids.size()), 0, nullptr), "forward");
  }
  // PageStorage: copy on write of one page, every layer's K and V.
  void copy_page(int dst, int src) override {
    for (const Segment& g : segs_) cuda_loader::check(api_->copy_cache_page(g.handle, dst, src), "copy_cache_page");
  }
  void destroy_all() {
    for (auto it = segs_.rbegin(); it != segs_.rend(); ++it)
      if (it->handle) api_->destroy(it->handle);
    segs_.clear();
  }

  // One module backend per device segment (one without a split).
  struct Segment {
    exl_cuda_backend* handle = nullptr;
    int device = 0;
    int first = 0;   // the model's index of its first layer
    int count = 0;   // as given (0: the rest)
    int layers = 0;  // resolved at load
  };

  BackendOptions opts_;
  const exl_cuda_api* api_ = nullptr;
  std::vector<Segment> segs_;
  std::shared_ptr<const Model> model_;
  ActiveSequence seq_;               // the page cache and its active sequence
  bool paged_ = false;
  std::vector<std::int32_t> sent_;   // the page table the module holds
  bool device_sampling_ = true;
  DeviceSamplerPacker packer_;
  DeviceSamplerPack pack_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

}  // namespace exl

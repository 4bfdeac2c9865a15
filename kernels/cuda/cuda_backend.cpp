// The CUDA backend's model-level steps: load (weights to the device), allocate_cache (fp16 KV
// cache and all scratch), forward (prefill chunks eagerly, the one-token decode step through a
// captured CUDA graph) and truncate. Residual stream fp32; projections' inputs fp16.
#include "cuda_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "exl/kernels/half.h"
#include "launch.cuh"

namespace exl::cuda {

namespace {
// EXL_CUDA_MEMTRACE=1 (planner measurements): the device's memory in use and the allocator's count
// at milestones (backend ready, model loaded, cache and scratch allocated, graphs captured, the
// first eager steps), on stderr.
bool mem_trace_on() {
  static const bool on = [] {
    const char* e = std::getenv("EXL_CUDA_MEMTRACE");
    return e && std::string(e) == "1";
  }();
  return on;
}
void mem_trace(const char* what, const Allocator& a) {
  if (!mem_trace_on()) return;
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) { (void)cudaGetLastError(); return; }
  std::fprintf(stderr, "memtrace %-24s device used %10.1f MiB, allocator %10.1f MiB\n", what,
               double(total_b - free_b) / 1048576.0, double(a.in_use) / 1048576.0);
}

constexpr int k_split_len = 256;
// Chunks shorter than this take the decode attention kernels (kernels.h: attention).
constexpr int k_short_chunk = 32;

template <class T>
void upload_small(DeviceBuffer& dst, Allocator* a, const std::vector<T>& v, const char* what, cudaStream_t s) {
  dst.allocate(a, v.size() * sizeof(T), what);
  EXL_CUDA_CHECK(cudaMemcpyAsync(dst.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  EXL_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::vector<std::uint16_t> half_vector(const void* src, int dtype, std::size_t n) {
  std::vector<std::uint16_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == EXL_CUDA_F16) out[i] = static_cast<const std::uint16_t*>(src)[i];
    else if (dtype == EXL_CUDA_BF16) out[i] = float_to_half(bf16_to_float(static_cast<const std::uint16_t*>(src)[i]));
    else if (dtype == EXL_CUDA_F32) out[i] = float_to_half(static_cast<const float*>(src)[i]);
    else throw_status(EXL_CUDA_ERR_UNSUPPORTED, "norm/embedding dtype " + std::to_string(dtype));
  }
  return out;
}

void upload_half(DeviceBuffer& dst, Allocator* a, const void* src, int dtype, std::size_t n, std::uint64_t seed,
                 float lo, float hi, const char* what, cudaStream_t s) {
  if (src) return upload_small(dst, a, half_vector(src, dtype, n), what, s);
  EXL_CUDA_REQUIRE(seed != 0, std::string("missing tensor: ") + what);
  dst.allocate(a, n * 2, what);
  fill_random_half(dst.get<__half>(), n, seed, lo, hi, s);
}

// A norm weight in fp32 (one_plus: 1 + w, added in fp32 as the CPU backend and transformers do).
void upload_norm32(DeviceBuffer& dst, Allocator* a, const void* src, int dtype, std::size_t n, bool one_plus,
                   const char* what, cudaStream_t s) {
  EXL_CUDA_REQUIRE(src, std::string("missing tensor: ") + what);
  std::vector<float> w(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (dtype == EXL_CUDA_F16) w[i] = half_to_float(static_cast<const std::uint16_t*>(src)[i]);
    else if (dtype == EXL_CUDA_BF16) w[i] = bf16_to_float(static_cast<const std::uint16_t*>(src)[i]);
    else if (dtype == EXL_CUDA_F32) w[i] = static_cast<const float*>(src)[i];
    else throw_status(EXL_CUDA_ERR_UNSUPPORTED, std::string(what) + ": norm dtype " + std::to_string(dtype));
    if (one_plus) w[i] += 1.0f;
  }
  upload_small(dst, a, w, what, s);
}

// Whether the EXL2 layers (same input) store their rows in one order.
bool same_input_perm(std::initializer_list<const exl_cuda_linear*> ls) {
  const exl_cuda_linear* first = *ls.begin();
  for (const exl_cuda_linear* l : ls) {
    if (l->kind != 1 || l->in_features != first->in_features) return false;
    const std::int32_t* a = first->exl2.q_perm;
    const std::int32_t* b = l->exl2.q_perm;
    if (!a && !b) continue;  // synthetic: given one seed (load)
    if (!a || !b || !std::equal(a, a + l->in_features, b)) return false;
  }
  return true;
}

}  // namespace

CudaBackend::CudaBackend(const exl_cuda_options& o) : opt_(o) {
  check_device_index(o.device);
  use_device(o.device);
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, o.device));
  int cc_major = 0;
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, o.device));
  const char* pdl_env = std::getenv("EXL_CUDA_PDL");
  set_pdl(cc_major >= 9 && !(pdl_env && std::string(pdl_env) == "0"));
  if (opt_.max_chunk <= 0) opt_.max_chunk = 2048;
  if (opt_.gemv_max_rows <= 0) opt_.gemv_max_rows = 16;
  alloc_.limit = o.vram_limit;
  stream_ = std::make_unique<Stream>();
  cublas_ = std::make_unique<CublasHandle>();
  EXL_CUBLAS_CHECK(cublasSetStream(cublas_->get(), stream_->get()));
  cublas_ws_.allocate(&alloc_, 32u << 20, "cuBLAS workspace");
  EXL_CUBLAS_CHECK(cublasSetWorkspace(cublas_->get(), cublas_ws_.get(), cublas_ws_.bytes()));
  gemv_ws_.allocate(&alloc_, stream_->get());
  // The EXL2 GEMV's split-K sums in a fixed order (seeded runs repeat bit for bit) unless the
  // caller chose the faster atomics.
  if (!opt_.fast_reduce) gemv_view_ = gemv_ws_.view();
  // The one-launch decode step (RoPE, cache write, attention and merge): selftested, but slower
  // than the separate launches on the H200 so far (bench/RESULTS.md), so only on request.
  const char* fused = std::getenv("EXL_CUDA_FUSED_DECODE");
  fused_decode_ = fused && std::string(fused) == "1";
  // EXL_CUDA_GRAPHS=0: every step enqueued launch by launch (to tell a graph problem from a kernel's).
  if (const char* g = std::getenv("EXL_CUDA_GRAPHS")) opt_.cuda_graphs = std::string(g) != "0";
  if (const char* u = std::getenv("EXL_CUDA_UNFOLD")) unfold_rows_ = std::string(u) != "0";
  if (const char* f = std::getenv("EXL_CUDA_PERM_FOLD")) fold_perms_ = std::string(f) != "0";
  // Decode attention on tensor cores (attention.cu); EXL_CUDA_ATTN_MMA=0: the CUDA-core kernels.
  if (const char* a = std::getenv("EXL_CUDA_ATTN_MMA")) set_decode_mma(std::string(a) != "0");
  if (const char* a = std::getenv("EXL_CUDA_ATTN_REG")) set_decode_reg(std::string(a) != "0");
  if (const char* f = std::getenv("EXL_CUDA_KV_FOLD")) fold_kv_ = std::string(f) != "0";
  // EXL_CUDA_EXL3_FOLD=1: the EXL3 decode GEMV applies the output transform (A/B runs).
  if (const char* f = std::getenv("EXL_CUDA_EXL3_FOLD")) fold_exl3_out_ = std::string(f) != "0";
  if (const char* f = std::getenv("EXL_CUDA_EXL3_GROUP")) group_exl3_ = std::string(f) != "0";
  if (const char* f = std::getenv("EXL_CUDA_ROPE_FOLD")) fold_rope_ = std::string(f) != "0";
  // Prefill's reconstruct beside the GEMMs (DequantPipe); EXL_CUDA_DQ_OVERLAP=0 inline, and
  // EXL_CUDA_DQ_SKIP=1 (measurements only: wrong results) without the reconstruct.
  {
    const char* o = std::getenv("EXL_CUDA_DQ_OVERLAP");
    const char* k = std::getenv("EXL_CUDA_DQ_SKIP");
    dq_.set_mode(!(o && std::string(o) == "0"), k && std::string(k) == "1");
  }
  // The fused path's q/k/v, gate/up and residual in exact accumulators (kernels.h, GemvInput);
  // EXL_CUDA_EXACT=0: fp32 through the ordered split-K pass (or fp32 atomics), for comparison.
  if (const char* e = std::getenv("EXL_CUDA_EXACT")) exact_acc_ = std::string(e) != "0";
  mem_trace("backend ready", alloc_);
}

void CudaBackend::load(const exl_cuda_model& m, exl_cuda_progress_fn progress, void* user) {
  use_device(opt_.device);
  EXL_CUDA_REQUIRE(m.num_layers > 0 && m.hidden > 0 && m.num_heads > 0 && m.num_kv_heads > 0 && m.head_dim > 0 &&
                       m.layers && m.rope_inv_freq,
                   "load: incomplete model description");
  reset_graphs();
  loaded_ = false;
  layers_.clear();
  embedding_.reset(); final_norm_.reset(); head_ = DeviceLinear{};
  const int total = m.num_layers;
  const int count = opt_.layer_count > 0 ? opt_.layer_count : total - opt_.layer_first;
  EXL_CUDA_REQUIRE(opt_.layer_first >= 0 && count > 0 && opt_.layer_first + count <= total,
                   "load: layer segment " + std::to_string(opt_.layer_first) + " + " + std::to_string(count) +
                       " outside the model's " + std::to_string(total) + " layers");
  first_layer_ = opt_.layer_first;
  has_embedding_ = first_layer_ == 0;
  has_head_ = first_layer_ + count == total;
  vocab_ = m.vocab; hidden_ = m.hidden; nl_ = count; nh_ = m.num_heads; nkv_ = m.num_kv_heads;
  hd_ = m.head_dim; inter_ = m.intermediate; eps_ = m.rms_eps; rope_style_ = m.rope_style;
  const cudaStream_t s = stream_->get();
  const std::uint64_t seed = m.synthetic_seed;
  weight_bytes_ = 0;
  // The family (ABI 10; all zero: Llama). Norm-level features take the general layer form with
  // fp32 norms; attention-level ones (scale, soft-cap, windows) work in every form.
  const exl_cuda_family& fam = m.family;
  EXL_CUDA_REQUIRE(fam.rotary_half >= 0 && fam.rotary_half <= hd_ / 2, "load: rotary_half outside 0..head_dim/2");
  gelu_ = fam.gelu_tanh != 0;
  emb_scale_ = fam.embedding_scale > 0.0f ? fam.embedding_scale : 1.0f;
  attn_scale_ = fam.attention_scale;
  attn_softcap_ = fam.attn_logit_softcap;
  final_softcap_ = fam.final_logit_softcap;
  EXL_CUDA_REQUIRE(attn_scale_ >= 0.0f && attn_softcap_ >= 0.0f && final_softcap_ >= 0.0f,
                   "load: negative attention scale or soft-cap");
  auto partial = [&](int rh) { return rh > 0 && rh < hd_ / 2; };
  bool layer_norms = false;
  attn_features_ = attn_softcap_ > 0.0f;
  for (int i = 0; i < count; ++i) {
    const exl_cuda_layer& L = m.layers[opt_.layer_first + i];
    EXL_CUDA_REQUIRE(L.window >= 0 && (!L.local_rope || fam.rope_local.inv_freq),
                     "load: layer " + std::to_string(opt_.layer_first + i) + ": negative window or no local RoPE table");
    // (q/k head norms alone, Qwen3's, keep the fused path: applied to its fp32 q and k)
    layer_norms = layer_norms || L.attn_out_norm || L.mlp_out_norm || L.local_rope;
    attn_features_ = attn_features_ || L.window > 0;
  }
  family_norms_ = fam.norm_one_plus || gelu_ || emb_scale_ != 1.0f || final_softcap_ > 0.0f || layer_norms ||
                  partial(fam.rotary_half) || fam.rope_long.inv_freq || fam.rope_local.inv_freq;
  auto load_rope = [&](Rope& r, const float* inv, int rotary_half, float mscale, float divisor, const char* what) {
    const int rh = rotary_half > 0 ? rotary_half : hd_ / 2;
    EXL_CUDA_REQUIRE(rh <= hd_ / 2, std::string("load: ") + what + ": rotary_half past head_dim / 2");
    std::vector<float> f(std::size_t(hd_ / 2), 0.0f);
    std::copy(inv, inv + rh, f.begin());
    upload_small(r.inv_freq, &alloc_, f, what, s);
    r.mscale = mscale;
    r.pos_div = divisor > 0 ? divisor : 1.0f;
    r.rotary_half = rh < hd_ / 2 ? rh : 0;
  };
  rope_ = Rope{}; rope_long_ = Rope{}; rope_local_ = Rope{};
  load_rope(rope_, m.rope_inv_freq, fam.rotary_half, m.rope_mscale, m.rope_position_divisor, "rope");
  const exl_cuda_rope &lr = fam.rope_long, &lc = fam.rope_local;
  if (lr.inv_freq) load_rope(rope_long_, lr.inv_freq, lr.rotary_half, lr.mscale, lr.position_divisor, "rope (long)");
  if (lc.inv_freq) load_rope(rope_local_, lc.inv_freq, lc.rotary_half, lc.mscale, lc.position_divisor, "rope (local)");
  rope_long_after_ = lr.inv_freq ? fam.rope_long_after : 0;
  use_long_ = false;
  const bool one_plus = fam.norm_one_plus != 0;
  if (has_embedding_)
    upload_half(embedding_, &alloc_, m.embedding, m.embedding_dtype, std::size_t(vocab_) * hidden_,
                seed ? seed + 11 : 0, -0.05f, 0.05f, "embedding", s);
  final_norm32_.reset();
  if (has_head_ && family_norms_)
    upload_norm32(final_norm32_, &alloc_, m.final_norm, m.final_norm_dtype, std::size_t(hidden_), one_plus, "final norm", s);
  else if (has_head_)
    upload_half(final_norm_, &alloc_, m.final_norm, m.final_norm_dtype, std::size_t(hidden_), seed ? seed + 12 : 0,
                0.9f, 1.1f, "final norm", s);
  layers_.resize(std::size_t(nl_));
  for (int i = 0; i < nl_; ++i) {
    const int g = first_layer_ + i;  // the model's layer index (synthetic seeds as on one device)
    const exl_cuda_layer& src = m.layers[g];
    DeviceLayer& l = layers_[std::size_t(i)];
    const std::uint64_t ls = seed ? seed + 1000ull * (g + 1) : 0;
    l.window = src.window;
    l.local_rope = src.local_rope != 0;
    EXL_CUDA_REQUIRE(!src.q_norm == !src.k_norm, "load: a q norm needs a k norm");
    if (src.q_norm) upload_norm32(l.q_norm32, &alloc_, src.q_norm, src.q_norm_dtype, std::size_t(hd_), one_plus, "q norm", s);
    if (src.k_norm) upload_norm32(l.k_norm32, &alloc_, src.k_norm, src.k_norm_dtype, std::size_t(hd_), one_plus, "k norm", s);
    if (family_norms_) {
      const std::size_t H = std::size_t(hidden_);
      upload_norm32(l.input_norm32, &alloc_, src.input_norm, src.input_norm_dtype, H, one_plus, "input norm", s);
      upload_norm32(l.post_norm32, &alloc_, src.post_norm, src.post_norm_dtype, H, one_plus, "MLP input norm", s);
      if (src.attn_out_norm)
        upload_norm32(l.attn_out_norm32, &alloc_, src.attn_out_norm, src.attn_out_norm_dtype, H, one_plus,
                      "attention output norm", s);
      if (src.mlp_out_norm)
        upload_norm32(l.mlp_out_norm32, &alloc_, src.mlp_out_norm, src.mlp_out_norm_dtype, H, one_plus,
                      "MLP output norm", s);
    } else {
      upload_half(l.input_norm, &alloc_, src.input_norm, src.input_norm_dtype, std::size_t(hidden_), ls, 0.9f, 1.1f,
                  "input norm", s);
      upload_half(l.post_norm, &alloc_, src.post_norm, src.post_norm_dtype, std::size_t(hidden_), ls + 1, 0.9f, 1.1f,
                  "post-attention norm", s);
    }
    const exl_cuda_linear* srcs[7] = {&src.q, &src.k, &src.v, &src.o, &src.gate, &src.up, &src.down};
    const std::array<DeviceLinear*, 7> dsts = l.linears();
    // Input permutations. The down projection's is folded into gate's and up's output columns
    // (their outputs then come in down's stored row order, so down reads its input in order);
    // synthetic layers that share an input share a permutation, as converted models do.
    LinearFold folds[7];
    // Linear j's input permutation as uploaded (stored, or the synthetic one of its seed).
    auto host_perm = [&](int j) {
      const exl_cuda_linear& L = *srcs[j];
      return L.exl2.q_perm ? std::vector<std::int32_t>(L.exl2.q_perm, L.exl2.q_perm + L.in_features)
                           : synthetic_perm(L.in_features, ls + 10 * (j + 1));
    };
    std::vector<std::int32_t> down_perm;
    const bool all_exl2 = src.gate.kind == 1 && src.up.kind == 1 && src.down.kind == 1;
    if (fold_perms_ && all_exl2 && src.gate.out_features == src.down.in_features &&
        src.up.out_features == src.down.in_features) {
      down_perm = host_perm(6);
      folds[4].col_perm = folds[5].col_perm = down_perm.data();
      folds[6].rows_in_order = true;
      l.down_in_order = true;
    }
    if (ls) folds[1].perm_seed = folds[2].perm_seed = ls + 10, folds[5].perm_seed = ls + 50;
    for (int j = 0; j < 7; ++j)
      upload_linear(*srcs[j], &alloc_, ls ? ls + 10 * (j + 1) : 0, s, *dsts[j], &weight_bytes_, folds[j]);
    if (fold_perms_ && src.o.kind == 1) {
      const int od = src.o.in_features;
      const std::vector<std::int32_t> perm = host_perm(3);
      std::vector<std::int32_t> pos(std::size_t(od), 0);
      for (int i = 0; i < od; ++i) pos[std::size_t(perm[std::size_t(i)])] = i;
      upload_small(l.o_pos, &alloc_, pos, "o input order", s);
    }
    l.qkv_one_perm = same_input_perm({&src.q, &src.k, &src.v});
    l.gu_one_perm = same_input_perm({&src.gate, &src.up});
    if (progress) progress(user, std::uint64_t(i + 1), std::uint64_t(nl_ + 1));
  }
  if (has_head_) upload_linear(m.head, &alloc_, seed ? seed + 7 : 0, s, head_, &weight_bytes_);
  // The embedding table and the norms count as weights too (memory(), the planner's "weights").
  weight_bytes_ += embedding_.bytes() + final_norm_.bytes() + final_norm32_.bytes();
  for (const DeviceLayer& l : layers_)
    weight_bytes_ += l.input_norm.bytes() + l.post_norm.bytes() + l.input_norm32.bytes() + l.post_norm32.bytes() +
                     l.q_norm32.bytes() + l.k_norm32.bytes() + l.attn_out_norm32.bytes() + l.mlp_out_norm32.bytes();
  fused_ok_ = (head_.exl2 || !has_head_) && hidden_ % 4 == 0 && hidden_ <= 65536 && inter_ <= 65536 && nh_ * hd_ <= 65536 &&
              hd_ % 2 == 0 && hd_ <= 512 && !family_norms_;
  for (const DeviceLayer& l : layers_)
    for (const DeviceLinear* p : l.linears()) fused_ok_ = fused_ok_ && p->exl2;
  if (const char* e = std::getenv("EXL_CUDA_FUSED"); e && std::string(e) == "0") fused_ok_ = false;
  if (progress) progress(user, std::uint64_t(nl_ + 1), std::uint64_t(nl_ + 1));
  stream_->sync();
  loaded_ = true;
  capacity_ = 0;
  cache_len_ = 0;
  mem_trace("model loaded", alloc_);
  log_message(1, "exl_cuda: loaded " + std::to_string(nl_) + " layers (" + std::to_string(first_layer_) + " .. " +
                     std::to_string(first_layer_ + nl_ - 1) + ") on device " + std::to_string(opt_.device) + ", " + std::to_string(weight_bytes_ >> 20) +
                     " MiB of weights" + (fused_ok_ ? ", fused decode path" : ""));
}

void CudaBackend::allocate_cache(int max_seq_len, int kfmt, int vfmt, int pages) {
  EXL_CUDA_REQUIRE(loaded_, "allocate_cache before load");
  EXL_CUDA_REQUIRE(max_seq_len > 0, "cache length must be positive");
  const int table_len = (max_seq_len + k_kv_page_tokens - 1) / k_kv_page_tokens;
  EXL_CUDA_REQUIRE(pages == 0 || pages >= table_len,
                   "a paged cache of " + std::to_string(pages) + " pages cannot hold one sequence of " +
                       std::to_string(max_seq_len) + " tokens (" + std::to_string(table_len) + " pages)");
  if ((kv_rotated(kfmt) || kv_rotated(vfmt)) && hd_ % 64 != 0)
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "a Q8/Q4 cache needs head_dim a multiple of 64 (the model has " +
                                               std::to_string(hd_) + ")");
  use_device(opt_.device);
  reset_graphs();
  capacity_ = 0;
  for (DeviceLayer& l : layers_) { l.k_cache.reset(); l.v_cache.reset(); l.k_scales.reset(); l.v_scales.reset(); }
  k_stage_.reset(); v_stage_.reset();
  pages_.reset();
  store_pages_ = 0;
  kfmt_ = kfmt; vfmt_ = vfmt;
  // Q8/Q4 stores hold whole 512-element blocks: the capacity rounded up to the block's tokens
  // (a page, 256 tokens, is always a whole number of blocks).
  const int row = nkv_ * hd_;
  const int qb = kv_rotated(kfmt) || kv_rotated(vfmt) ? kv_q_block_tokens(row) : 1;
  const std::size_t tokens = pages > 0 ? std::size_t(pages) * k_kv_page_tokens : std::size_t(max_seq_len);
  const std::size_t elems = (tokens + qb - 1) / qb * qb * row;
  const cudaStream_t s = stream_->get();
  auto store = [&](DeviceBuffer& data, DeviceBuffer& scales, int fmt, const char* what, const char* swhat) {
    data.allocate(&alloc_, kv_store_data_bytes(fmt, elems), what);
    if (fmt == kv_f16) return;
    // Zeroed, as the CPU store: a partly written block re-quantizes its other rows from here.
    EXL_CUDA_CHECK(cudaMemsetAsync(data.get(), 0, data.bytes(), s));
    if (!kv_rotated(fmt)) return;
    scales.allocate(&alloc_, elems / 32 * 2, swhat);
    EXL_CUDA_CHECK(cudaMemsetAsync(scales.get(), 0, scales.bytes(), s));
  };
  for (DeviceLayer& l : layers_) {
    store(l.k_cache, l.k_scales, kfmt, "K cache", "K cache scales");
    store(l.v_cache, l.v_scales, vfmt, "V cache", "V cache scales");
  }
  const std::size_t stage = std::size_t(std::min(opt_.max_chunk, max_seq_len)) * row * 2;
  if (kfmt != kv_f16) k_stage_.allocate(&alloc_, stage, "K staging (quantized cache)");
  if (vfmt != kv_f16) v_stage_.allocate(&alloc_, stage, "V staging (quantized cache)");
  if (pages > 0) {
    // The page table starts as the identity (logical page i in store page i), so a caller that
    // never sets one (benchmarks, module tests) sees a contiguous sequence.
    pages_.allocate(&alloc_, std::size_t(table_len) * 4, "KV page table");
    h_pages_.assign(std::size_t(table_len), 0);
    for (int i = 0; i < table_len; ++i) h_pages_[std::size_t(i)] = i;
    EXL_CUDA_CHECK(cudaMemcpyAsync(pages_.get(), h_pages_.data(), pages_.bytes(), cudaMemcpyHostToDevice, s));
    stream_->sync();  // h_pages_ is pageable and changes later
    store_pages_ = pages;
  }
  capacity_ = max_seq_len;
  cache_len_ = 0;
  // LongRoPE: the long factors for a context past the original one (as the CPU backend's tables).
  use_long_ = rope_long_after_ > 0 && max_seq_len > rope_long_after_;
  mem_trace("cache allocated", alloc_);
  allocate_scratch();
  mem_trace("scratch allocated", alloc_);
}

RopeParams CudaBackend::rope_params(const Rope& r, float2* cs) const {
  return RopeParams{r.inv_freq.get<float>(), r.mscale, r.pos_div, hd_, step_.get<int>(), cs};
}

float CudaBackend::attention_scale() const { return attn_scale_ > 0.0f ? attn_scale_ : 1.0f / std::sqrt(float(hd_)); }

// RMSNorm of rows of the residual into fp16 y: the fp32 weights of a family model, else the fp16 ones.
void CudaBackend::norm_rows(const float* x, int rows, const DeviceBuffer& w16, const DeviceBuffer& w32, __half* y,
                            cudaStream_t s) {
  if (w32.bytes()) rms_norm_w32(x, rows, hidden_, w32.get<float>(), eps_, y, nullptr, nullptr, s);
  else rms_norm(x, rows, hidden_, w16.get<__half>(), eps_, y, s);
}

void CudaBackend::allocate_scratch() {
  const int C = std::min(opt_.max_chunk, capacity_);
  chunk_ = C;
  const std::size_t qd = std::size_t(nh_) * hd_, kd = std::size_t(nkv_) * hd_;
  const std::size_t wide = std::max({std::size_t(hidden_), qd, std::size_t(inter_)});
  x_.allocate(&alloc_, std::size_t(C) * hidden_ * 4, "residual");
  a_.allocate(&alloc_, std::size_t(C) * wide * 2, "activations");
  // q, k, v (and gate, up) back to back for the current t, so one memset clears them.
  qkv32_.allocate(&alloc_, std::size_t(C) * (qd + 2 * kd) * 4, "q, k, v");
  qh_.allocate(&alloc_, std::size_t(C) * qd * 2, "q fp16");
  att_.allocate(&alloc_, std::size_t(C) * qd * 2, "attention out");
  gu32_.allocate(&alloc_, std::size_t(C) * inter_ * 2 * 4, "gate, up");
  logit_rows_ = !has_head_ ? 0 : int(std::max<std::size_t>(1, std::min<std::size_t>(C, (256u << 20) / (std::size_t(vocab_) * 4))));
  logits_.allocate(&alloc_, std::size_t(logit_rows_) * vocab_ * 4, "logits");
  // Reconstruct buffers for the prefill path (two: DequantPipe): the largest non-head layer.
  std::size_t dq_elems = 0;
  for (const DeviceLayer& l : layers_)
    for (const DeviceLinear* p : l.linears())
      if (p->exl2) dq_elems = std::max(dq_elems, std::size_t(p->view.k) * p->view.n_pad);
      else if (p->exl3) dq_elems = std::max(dq_elems, std::size_t(p->view3.k) * p->view3.n);
  if (C <= opt_.gemv_max_rows) dq_elems = 0;
  dq_.allocate(&alloc_, dq_elems);
  // EXL3 scratch: passes of up to exl3_pass_rows rows of the layers' linears (cuBLAS) or 8 (GEMV); the head,
  // as wide as the vocabulary, runs in shorter passes when these hold fewer of its rows.
  std::size_t xr_elems = 0, z_elems = 0, tickets = 0;
  auto exl3_needs = [&](const DeviceLinear& l, std::size_t rows) {
    if (!l.exl3) return;
    const Exl3Need need = exl3_need(l.view3, std::min<std::size_t>(rows, std::size_t(C)), sm_count_);
    xr_elems = std::max(xr_elems, need.xr);
    z_elems = std::max(z_elems, need.z);
    tickets = std::max(tickets, need.tickets);
  };
  for (const DeviceLayer& l : layers_) {
    // Decode's grouped launches (q, k, v; gate, up) hold their partials side by side: at most every
    // linear of the layer's one row times its splits, and their tickets.
    std::size_t side_z = 0, side_tickets = 0;
    for (const DeviceLinear* p : l.linears()) {
      exl3_needs(*p, std::size_t(exl3_pass_rows));
      if (!p->exl3) continue;
      side_z += std::size_t(exl3_gemv_splits(p->view3, sm_count_)) * std::size_t(p->view3.n);
      side_tickets += std::size_t(p->view3.n / 128);
    }
    z_elems = std::max(z_elems, side_z);
    tickets = std::max(tickets, side_tickets);
  }
  if (has_head_) exl3_needs(head_, 1);
  exl3_xr_.allocate(&alloc_, xr_elems * 2, "EXL3 transformed input");
  // The products, then the decode GEMV's tickets (zeroed here; each launch leaves them zeroed).
  exl3_z_.allocate(&alloc_, (z_elems + tickets) * 4, "EXL3 products");
  if (tickets) EXL_CUDA_CHECK(cudaMemset(exl3_z_.get<float>() + z_elems, 0, tickets * 4));
  if (!fold_exl3_out_) tickets = 0;
  exl3_work_ = Exl3Work{exl3_xr_.get<__half>(), xr_elems, exl3_z_.get<float>(), z_elems,
                        tickets ? reinterpret_cast<unsigned*>(exl3_z_.get<float>() + z_elems) : nullptr, tickets};
  // Decode attention: as many 4-warp CTAs per multiprocessor over the KV heads as fit at once (four
  // for the CUDA-core kernels; the tensor-core kernel's tiles take 53-70 KB of shared memory).
  const int per_sm = decode_ctas_per_sm(hd_, kfmt_, vfmt_);
  decode_splits_ = std::max(1, std::min((capacity_ + 15) / 16, per_sm * sm_count_ / std::max(1, nkv_)));
  // EXL_CUDA_ATTN_SPLITS=N: N CTAs per KV head instead (tuning runs).
  if (const char* e = std::getenv("EXL_CUDA_ATTN_SPLITS"); e && std::atoi(e) > 0)
    decode_splits_ = std::min(std::atoi(e), std::max(1, (capacity_ + 63) / 64));
  const std::size_t budget = 64u << 20;  // bytes of attention partials for a prefill chunk
  chunk_splits_ = int(std::max<std::size_t>(1, std::min<std::size_t>(decode_splits_, budget / (std::size_t(C) * nh_ * (hd_ + 2) * 4))));
  const std::size_t parts = std::max(std::size_t(std::max(decode_splits_, (capacity_ + k_split_len - 1) / k_split_len)) * nh_ * (hd_ + 2),
                                     std::size_t(C) * nh_ * chunk_splits_ * (hd_ + 2));
  part_.allocate(&alloc_, parts * 4, "attention partials");
  att_counters_.allocate(&alloc_, std::size_t(nkv_) * 4, "attention split counters");
  EXL_CUDA_CHECK(cudaMemsetAsync(att_counters_.get(), 0, att_counters_.bytes(), stream_->get()));
  cs_.allocate(&alloc_, std::size_t(C) * (hd_ / 2) * 8, "RoPE table");
  cs_local_.reset();
  if (rope_local_.inv_freq.bytes()) cs_local_.allocate(&alloc_, std::size_t(C) * (hd_ / 2) * 8, "RoPE table (local)");
  out32_.reset();
  bool sandwich = false;
  for (const DeviceLayer& l : layers_) sandwich = sandwich || l.attn_out_norm32.bytes() || l.mlp_out_norm32.bytes();
  if (sandwich) out32_.allocate(&alloc_, std::size_t(C) * hidden_ * 4, "block output (sandwich norms)");
  const std::size_t fr = std::size_t(std::min(C, std::max(1, opt_.gemv_max_rows)));
  for (int i = 0; i < 2; ++i) {
    fqkv_[i].reset(); fgu_[i].reset();
    if (!fused_ok_) continue;
    fqkv_[i].allocate(&alloc_, fr * (qd + 2 * kd) * 8, "q, k, v (fused path)");  // fp32 or exact (int64)
    fgu_[i].allocate(&alloc_, fr * inter_ * 2 * 8, "gate, up (fused path)");
  }
  // (also where this segment is not fused: a fused previous segment hands its residual over exact)
  xq_.allocate(&alloc_, fr * hidden_ * 8, "residual (fused path, exact)");
  step_.allocate(&alloc_, 16, "step");
  ids_.allocate(&alloc_, std::size_t(C) * 4, "ids");
  h_step_ = PinnedBuffer(16);
  h_ids_ = PinnedBuffer(std::size_t(C) * 4);
  h_logits_ = PinnedBuffer(std::size_t(logit_rows_) * vocab_ * 4);
  size_hidden_out();
  allocate_sampler();
}

// The init regions that clear (or bias-initialise) the accumulators of `layer` for t tokens:
// q, k, v and gate, up (the fused path's outputs, set layer % 2), or, for layer == num_layers,
// the head_rows rows of logits.
int CudaBackend::accumulator_inits(int layer, int t, int head_rows, GemvInit* out) const {
  int n = 0;
  auto add = [&](float* dst, long long* dstq, const DeviceBuffer& bias, int width, int rows) {
    out[n].dst = dst;
    out[n].dstq = dstq;
    out[n].bias = bias.get<float>();
    out[n].count = rows * width;
    out[n].n = width;
    ++n;
  };
  if (layer >= nl_) {
    if (head_rows > 0) add(logits_.get<float>(), nullptr, head_.bias, vocab_, head_rows);
    return n;
  }
  const DeviceLayer& l = layers_[std::size_t(layer)];
  const int qd = nh_ * hd_, kd = nkv_ * hd_;
  // Element `off` of an accumulator set, fp32 or exact (int64) at the same element offsets.
  auto acc = [&](const DeviceBuffer& set, bool exact, std::size_t off, const DeviceBuffer& bias, int width) {
    add(exact ? nullptr : set.get<float>() + off, exact ? set.get<long long>() + off : nullptr, bias, width, t);
  };
  const DeviceBuffer &qkv = fqkv_[layer % 2], &gu = fgu_[layer % 2];
  const bool eqkv = exact_qkv(t, l);
  acc(qkv, eqkv, 0, l.q.bias, qd);
  acc(qkv, eqkv, std::size_t(t) * qd, l.k.bias, kd);
  acc(qkv, eqkv, std::size_t(t) * (qd + kd), l.v.bias, kd);
  acc(gu, exact_acc_, 0, l.gate.bias, inter_);
  acc(gu, exact_acc_, std::size_t(t) * inter_, l.up.bias, inter_);
  return n;
}

const __half* CudaBackend::attend(DeviceLayer& l, const AttentionShape& as, AccIn q32, AccIn k32, AccIn v32,
                                  bool o_order) {
  const cudaStream_t s = stream_->get();
  const std::int32_t* o_pos = o_order ? l.o_pos.get<std::int32_t>() : nullptr;
  const int* past = step_.get<int>();
  const int t = as.t;
  const bool kq = kfmt_ != kv_f16, vq = vfmt_ != kv_f16;
  // One token over FP16 stores: RoPE and the new cache row inside the attention kernel (no
  // rope_qkv_cache launch; EXL_CUDA_ROPE_FOLD=0 keeps the launch).
  // The layer's RoPE table (Gemma 3's local layers have their own) and its partial rotary.
  const Rope& rope_l = l.local_rope ? rope_local_ : rope();
  const float2* cs = (l.local_rope ? cs_local_ : cs_).get<float2>();
  if (fold_rope_ && !family_norms_ && !kq && !vq && attention_folds_rope(as)) {
    const DecodeRope rope{q32, k32, v32, cs_.get<float2>(), rope_style_};
    AttentionShape a = as;
    a.rope = &rope;
    attention(a, nullptr, l.k_cache.get<__half>(), l.v_cache.get<__half>(), past, part_.get<float>(), att_.get<__half>(),
              nullptr, s, o_pos);
    return att_.get<__half>();
  }
  __half* qh = qh_.get<__half>();
  __half* kdst = kq ? k_stage_.get<__half>() : l.k_cache.get<__half>();
  __half* vdst = vq ? v_stage_.get<__half>() : l.v_cache.get<__half>();
  const KvStoreWrite kw{kfmt_, l.k_cache.get(), l.k_scales.get<__half>(), kdst, as.pages};
  const KvStoreWrite vw{vfmt_, l.v_cache.get(), l.v_scales.get<__half>(), vdst, as.pages};
  // Quantized stores: RoPE also rotates q and the staged rows (kv_prepare's work) and, where the
  // write covers whole blocks, writes the stores (kv_finish's); in the decode form the merge
  // rotates the output back. Attention reads the chunk's own rows from the staging either way.
  // EXL_CUDA_KV_FOLD=0: the separate passes (kv_prepare, kv_finish), for comparison.
  RopeKvFold f;
  f.rotate_q = f.rotate_k = fold_kv_ && kv_rotated(kfmt_);
  f.rotate_v = fold_kv_ && kv_rotated(vfmt_);
  const int row = nkv_ * hd_;
  const bool k_here = fold_kv_ && kq && kv_fold_store(kfmt_, row), v_here = fold_kv_ && vq && kv_fold_store(vfmt_, row);
  if (k_here) f.k = kw;
  if (v_here) f.v = vw;
  rope_qkv_cache(q32, k32, v32, t, nh_, nkv_, hd_, past, cs, rope_style_, qh, kdst, vdst, s, kq, vq, as.pages, f,
                 rope_l.rotary_half);
  if (!fold_kv_ && (kq || vq)) kv_prepare(qh, t, nh_, nkv_, hd_, kfmt_, kdst, vfmt_, vdst, s);
  if (!kq && !vq) {
    attention(as, qh, l.k_cache.get<__half>(), l.v_cache.get<__half>(), past, part_.get<float>(), att_.get<__half>(),
              nullptr, s, o_pos);
    return att_.get<__half>();
  }
  AttentionShape a = as;
  if (kv_rotated(kfmt_)) a.scale /= 32.0f;  // (H q) . (H k) = 32 q . k
  const KvSource ksrc{kfmt_, l.k_cache.get(), l.k_scales.get<__half>(), kq ? kdst : nullptr};
  const KvSource vsrc{vfmt_, l.v_cache.get(), l.v_scales.get<__half>(), vq ? vdst : nullptr};
  const bool v_rot = kv_rotated(vfmt_);
  a.rotate_out = fold_kv_ && v_rot && attention_decode_form(a);
  const bool rot_left = v_rot && !a.rotate_out;  // the prefill form: kv_finish rotates the output back
  attention(a, qh, ksrc, vsrc, past, part_.get<float>(), att_.get<__half>(), nullptr, s, rot_left ? nullptr : o_pos);
  if (!rot_left && (!kq || k_here) && (!vq || v_here)) return att_.get<__half>();
  // kv_finish: what RoPE did not do. A rotated output goes into o's order in a_ (free until the
  // next RMSNorm).
  const KvStoreWrite k_left = k_here ? KvStoreWrite{kfmt_} : kw, v_left = v_here ? KvStoreWrite{vfmt_} : vw;
  __half* dst = rot_left && o_pos ? a_.get<__half>() : nullptr;
  kv_finish(rot_left ? att_.get<__half>() : nullptr, t, nh_, nkv_, hd_, k_left, v_left, past, s, dst,
            dst ? o_pos : nullptr);
  return dst ? dst : att_.get<__half>();
}

// The input of a GEMV that reads RMSNorm(x) (rows rows, the fp32 residual or its exact
// accumulator): with `perm`, one RMSNorm launch writes it into a_ in that stored row order (read
// contiguously); `unfold`: one RMSNorm launch in feature order; otherwise the GEMV folds the norm
// into its gather.
void CudaBackend::norm_input(GemvCall& c, AccIn x, int rows, const DeviceBuffer& w, const std::int32_t* perm,
                             bool unfold) {
  c.in.ldx = hidden_;
  if (perm || unfold) {
    rms_norm(x, rows, hidden_, w.get<__half>(), eps_, a_.get<__half>(), stream_->get(), perm);
    c.mode = k_x_half; c.in.x = a_.get<__half>(); c.in.permuted = perm != nullptr;
  } else {
    c.mode = k_x_norm; c.in.xf = x.f; c.in.xq = x.q; c.in.norm_w = w.get<__half>(); c.in.eps = eps_;
  }
}

// x (fp32, or its exact accumulator xq) += bias of an o or down projection.
void CudaBackend::add_residual_bias(float* x, long long* xq, int t, const DeviceBuffer& bias) {
  if (xq) add_bias_exact(xq, t, hidden_, hidden_, bias.get<float>(), stream_->get());
  else prepare_output(x, t, hidden_, hidden_, bias.get<float>(), true, stream_->get());
}

bool CudaBackend::fused_attention_step(int t) const {
  return t == 1 && fused_decode_ && kfmt_ == kv_f16 && vfmt_ == kv_f16 && !attn_features_ && hd_ >= 64;
}

// The layer's q/k head norms (Qwen3, Gemma 3), if it has them: per head, before RoPE, in place on
// the fp32 q [t * heads, head_dim] and k.
void CudaBackend::head_norms(const DeviceLayer& l, int t, float* q32, float* k32) {
  if (!l.q_norm32.bytes()) return;
  const cudaStream_t s = stream_->get();
  rms_norm_w32(q32, t * nh_, hd_, l.q_norm32.get<float>(), eps_, nullptr, q32, nullptr, s);
  rms_norm_w32(k32, t * nkv_, hd_, l.k_norm32.get<float>(), eps_, nullptr, k32, nullptr, s);
}

// Whether the fused path keeps q, k, v in exact accumulators (not for the one-launch attention
// step, which reads fp32).
bool CudaBackend::exact_qkv(int t, const DeviceLayer& l) const {
  return exact_acc_ && !fused_attention_step(t) && !l.q_norm32.bytes();  // the head norms read fp32
}

// The fused form for t <= gemv_max_rows tokens of an all-EXL2 model: 6 or 7 launches per layer,
// each allowed to start early (PDL, launch.cuh). RMSNorm is folded into the q/k/v and gate/up
// launches, SiLU * up into the down projection; accumulators alternate between two sets, and
// each q/k/v launch clears the next layer's set (the last one clears the logits), so no memset
// or separate norm kernel sits between the matrix launches.
void CudaBackend::enqueue_fused(int t, int splits, int split_len, int head_row0, int head_rows) {
  const cudaStream_t s = stream_->get();
  const int* past = step_.get<int>();
  const int qd = nh_ * hd_, kd = nkv_ * hd_;
  float* x = x_.get<float>();
  // The residual in an exact accumulator (o and down add into it without the ordered split-K
  // pass); x_ (fp32) stays what layer segments hand over.
  long long* xq = exact_acc_ ? xq_.get<long long>() : nullptr;
  auto residual = [&](std::size_t row) { return xq ? AccIn{nullptr, xq + row * hidden_} : AccIn{x + row * hidden_}; };
  GemvInit inits[k_gemv_max_inits];
  const RopeParams rp = rope_params(rope(), cs_.get<float2>());
  // An input that came exact is in xq_ already; one that came as fp32 (in x) is converted by the
  // first kernel where this path keeps the residual exact.
  const bool in_exact = enqueue_hidden_in(t);
  if (in_exact && !xq) exact_to_float(xq_.get<long long>(), std::int64_t(t) * hidden_, x, s);
  embedding_step(embedding_.get<__half>(), hidden_, ids_.get<std::int32_t>(), t, x, rp, inits,
                 accumulator_inits(0, t, head_rows, inits), s, in_exact ? nullptr : xq);
  AttentionShape as{t, nh_, nkv_, hd_, attention_scale(), split_len, splits, page_table()};
  as.softcap = attn_softcap_;
  const bool fused_step = fused_attention_step(t);
  for (int li = 0; li < nl_; ++li) {
    const DeviceLayer& l = layers_[std::size_t(li)];
    as.window = l.window;
    float* q32 = fqkv_[li % 2].get<float>();
    float* k32 = q32 + std::size_t(t) * qd;
    float* v32 = k32 + std::size_t(t) * kd;
    float* g32 = fgu_[li % 2].get<float>();
    float* u32 = g32 + std::size_t(t) * inter_;
    // Exact accumulators (int64 at the same element offsets): q, k, v and gate, up.
    long long* qq = fqkv_[li % 2].get<long long>();
    long long* kq = qq + std::size_t(t) * qd;
    long long* vq = kq + std::size_t(t) * kd;
    long long* gq = fgu_[li % 2].get<long long>();
    long long* uq = gq + std::size_t(t) * inter_;
    const bool eqkv = exact_qkv(t, l), egu = exact_acc_;
    auto acc_in = [](bool exact, float* f, long long* q) { return exact ? AccIn{nullptr, q} : AccIn{f}; };
    GemvCall c;
    c.m = t;
    c.sm_count = sm_count_; c.ws = gemv_view_;
    if (eqkv)
      c.add_exact(l.q.view, qq, qd).add_exact(l.k.view, kq, kd).add_exact(l.v.view, vq, kd);
    else
      c.add(l.q.view, q32, qd).add(l.k.view, k32, kd).add(l.v.view, v32, kd);
    const bool unfold = t > 1 && unfold_rows_;
    __half* a = a_.get<__half>();
    norm_input(c, residual(0), t, l.input_norm, fold_perms_ && l.qkv_one_perm ? l.q.view.perm : nullptr, unfold);
    c.inits = accumulator_inits(li + 1, t, head_rows, c.init);
    exl2_gemv_run(c, s);
    head_norms(l, t, q32, k32);  // fp32 q and k here
    // The attention output in o's stored row order where its permutation is known (t < 32 here).
    const bool o_order = !fused_step && t < k_short_chunk && l.o_pos.bytes() > 0;  // o_pos: fold_perms_
    const __half* o_in = att_.get<__half>();
    if (fused_step) {  // RoPE, cache write, attention, merge: one launch
      DecodeStepInputs in;
      in.q = q32; in.k = k32; in.v = v32; in.cs = cs_.get<float2>(); in.style = rope_style_;
      in.counters = att_counters_.get<unsigned>();
      attention_decode_step(as, in, l.k_cache.get<__half>(), l.v_cache.get<__half>(), past, part_.get<float>(),
                            att_.get<__half>(), nullptr, s);
    } else {
      o_in = attend(layers_[std::size_t(li)], as, acc_in(eqkv, q32, qq), acc_in(eqkv, k32, kq), acc_in(eqkv, v32, vq),
                    o_order);
    }
    add_residual_bias(x, xq, t, l.o.bias);  // no-op without bias
    GemvCall o;
    o.m = t; o.sm_count = sm_count_; o.ws = gemv_view_;
    if (xq) o.add_exact(l.o.view, xq, hidden_); else o.add(l.o.view, x, hidden_);
    o.mode = k_x_half; o.in.x = o_in; o.in.ldx = qd; o.in.permuted = o_order;
    exl2_gemv_run(o, s);
    GemvCall gu;
    gu.m = t; gu.sm_count = sm_count_; gu.ws = gemv_view_;
    if (egu)
      gu.add_exact(l.gate.view, gq, inter_).add_exact(l.up.view, uq, inter_);
    else
      gu.add(l.gate.view, g32, inter_).add(l.up.view, u32, inter_);
    norm_input(gu, residual(0), t, l.post_norm, fold_perms_ && l.gu_one_perm ? l.gate.view.perm : nullptr, unfold);
    exl2_gemv_run(gu, s);
    add_residual_bias(x, xq, t, l.down.bias);
    GemvCall d;
    d.m = t; d.sm_count = sm_count_; d.ws = gemv_view_;
    if (xq) d.add_exact(l.down.view, xq, hidden_); else d.add(l.down.view, x, hidden_);
    if (unfold) {
      silu_mul(acc_in(egu, g32, gq), acc_in(egu, u32, uq), std::int64_t(t) * inter_, a, s);
      d.mode = k_x_half; d.in.x = a; d.in.ldx = inter_;
    } else {
      const AccIn gate = acc_in(egu, g32, gq), up = acc_in(egu, u32, uq);
      d.mode = k_x_silu; d.in.ldx = inter_;
      d.in.xf = gate.f; d.in.xq = gate.q; d.in.up = up.f; d.in.upq = up.q;
    }
    d.in.permuted = l.down_in_order;
    exl2_gemv_run(d, s);
  }
  // x is final; the next segment takes it exact (a segment with a head hands nothing on).
  enqueue_hidden_out(t, xq != nullptr);
  if (head_rows <= 0) return;
  // The logits were cleared by the last layer's q/k/v launch.
  GemvCall h;
  h.m = head_rows; h.sm_count = sm_count_; h.ws = gemv_view_;
  h.add(head_.view, logits_.get<float>(), vocab_);
  norm_input(h, residual(std::size_t(head_row0)), head_rows, final_norm_, fold_perms_ ? head_.view.perm : nullptr,
             head_rows > 1 && unfold_rows_);
  exl2_gemv_run(h, s);
  if (copy_logits_)
    EXL_CUDA_CHECK(cudaMemcpyAsync(h_logits_.get(), logits_.get(), std::size_t(head_rows) * vocab_ * 4,
                                   cudaMemcpyDeviceToHost, s));
}

Exl3Input CudaBackend::exl3_norm_input(const float* x, const DeviceBuffer& w16, const DeviceBuffer& w32) const {
  Exl3Input in;
  in.xf = x;
  in.eps = eps_;
  in.in_features = hidden_;
  if (w32.bytes()) {
    in.mode = Exl3Input::rms_norm32;
    in.norm32 = w32.get<float>();
  } else {
    in.mode = Exl3Input::rms_norm16;
    in.norm16 = w16.get<__half>();
  }
  return in;
}

bool CudaBackend::exl3_group_targets(const DeviceLinear* const* ls, float* const* ys, int count, const Exl3Input& in,
                                     bool overwrite, Exl3Target* t) const {
  if (!group_exl3_ || count < 1 || count > k_exl3_group_max || !exl3_work_.z || !exl3_input_ok(in)) return false;
  const bool fold = exl3_work_.tickets != nullptr;
  std::size_t z = 0, tickets = 0;
  for (int i = 0; i < count; ++i) {
    const DeviceLinear& l = *ls[i];
    if (!l.exl3 || l.k != in.in_features) return false;
    const int splits = exl3_gemv_splits(l.view3, sm_count_);
    t[i] = Exl3Target{&l.view3, exl3_work_.z + z, splits, nullptr, l.n, ys[i], l.n, overwrite};
    z += std::size_t(splits) * std::size_t(l.view3.n);
    if (fold) t[i].tickets = exl3_work_.tickets + tickets;
    tickets += std::size_t(l.view3.n / 128);
  }
  return z <= exl3_work_.z_elems && (!fold || tickets <= exl3_work_.tickets_elems) && exl3_gemv_groupable(t, count);
}

void CudaBackend::exl3_group_run(const Exl3Target* t, int count, const Exl3Input& in) {
  exl3_gemv_group(t, count, in, stream_->get());
  if (!t[0].tickets) exl3_output_group(t, count, stream_->get());
}

// Enqueues the transformer layers for t tokens (ids already in ids_, length in step_): the
// general form (any t, dense or EXL2 layers; prefill chunks).
void CudaBackend::enqueue_layers(int t, int splits, int split_len) {
  const cudaStream_t s = stream_->get();
  const int qd = nh_ * hd_, kd = nkv_ * hd_;
  float* x = x_.get<float>();
  __half* a = a_.get<__half>();
  // The linears that go through reconstruct + cuBLAS, in the order the loop below multiplies them.
  std::vector<const DeviceLinear*> order;
  for (const DeviceLayer& l : layers_)
    for (const DeviceLinear* p : l.linears())
      if (dq_.takes(*p, t, opt_.gemv_max_rows)) order.push_back(p);
  dq_.begin(std::move(order), s);
  auto fwd = [&](const DeviceLinear& l, const __half* in, float* y, int ldy, bool overwrite = false) {
    if (dq_.takes(l, t, opt_.gemv_max_rows))
      dq_.forward(l, in, t, y, ldy, overwrite, cublas_->get(), s);
    else
      linear_forward(l, in, t, y, ldy, opt_.gemv_max_rows, sm_count_, gemv_view_, l.exl3 ? dq_.buffer() : nullptr,
                     l.exl3 ? dq_.elems() : 0, cublas_->get(), s, overwrite, exl3_work_);
  };
  // Whether cuBLAS computes l's output whole (dense, or reconstructed EXL2; no bias): then the
  // outputs need no clearing (beta = 0) instead of a pass over them.
  auto whole = [&](const DeviceLinear& l) { return !l.bias.get() && (!l.exl2 || dq_.takes(l, t, opt_.gemv_max_rows)); };
  auto lin = [&](const DeviceLinear& l, const __half* in, float* y, bool accumulate) {
    prepare_output(y, t, l.n, l.n, l.bias.get<float>(), accumulate, s);
    fwd(l, in, y, l.n);
  };
  // Outputs that accumulate (atomics / cuBLAS beta = 1) start from zero or the bias.
  auto zeroed = [&](const DeviceLinear& l, float* y) {
    if (l.bias.get()) prepare_output(y, t, l.n, l.n, l.bias.get<float>(), false, s);
  };
  float* q32 = qkv32_.get<float>();
  float* k32 = q32 + std::size_t(t) * qd;
  float* v32 = k32 + std::size_t(t) * kd;
  float* g32 = gu32_.get<float>();
  float* u32 = g32 + std::size_t(t) * inter_;
  const RopeParams rp = rope_params(rope(), cs_.get<float2>());
  if (enqueue_hidden_in(t)) exact_to_float(xq_.get<long long>(), std::int64_t(t) * hidden_, x, s);
  embedding_step(embedding_.get<__half>(), hidden_, ids_.get<std::int32_t>(), t, x, rp, nullptr, 0, s);
  if (has_embedding_ && emb_scale_ != 1.0f) scale_inplace(x, std::int64_t(t) * hidden_, emb_scale_, s);
  if (cs_local_.bytes()) rope_table(rope_params(rope_local_, cs_local_.get<float2>()), t, s);
  AttentionShape as{t, nh_, nkv_, hd_, attention_scale(), split_len, splits, page_table()};
  as.softcap = attn_softcap_;
  float* out32 = out32_.get<float>();
  // A block's output into the residual: directly, or (sandwich norms) through its output norm.
  // fused: decode's EXL3 GEMV forms its input itself (`in` unused).
  auto block_out = [&](const DeviceLinear& l, const __half* in, const DeviceBuffer& out_norm,
                       const Exl3Target* fused = nullptr, const Exl3Input* fused_in = nullptr) {
    float* y = out_norm.bytes() ? out32 : x;
    if (fused) {
      prepare_output(y, t, l.n, l.n, l.bias.get<float>(), !out_norm.bytes(), s);
      exl3_group_run(fused, 1, *fused_in);
    } else {
      lin(l, in, y, !out_norm.bytes());
    }
    if (out_norm.bytes()) rms_norm_w32(out32, t, hidden_, out_norm.get<float>(), eps_, nullptr, nullptr, x, s);
  };
  Exl3Target grp[k_exl3_group_max];
  // Linears ls[0 .. count) of RMSNorm(x) with w16 / w32 into ys: for one token of EXL3 layers one
  // grouped launch with the norm inside, else the norm into a_ and a launch per linear.
  auto normed = [&](const DeviceLinear* const* ls, float* const* ys, int count, const DeviceBuffer& w16,
                    const DeviceBuffer& w32, bool overwrite) {
    const Exl3Input in = exl3_norm_input(x, w16, w32);
    if (t == 1 && exl3_group_targets(ls, ys, count, in, overwrite, grp)) return exl3_group_run(grp, count, in);
    norm_rows(x, t, w16, w32, a, s);
    for (int i = 0; i < count; ++i) fwd(*ls[i], a, ys[i], ls[i]->n, overwrite);
  };
  for (DeviceLayer& l : layers_) {
    as.window = l.window;
    const bool qkv_whole = whole(l.q) && whole(l.k) && whole(l.v);
    if (!qkv_whole) {
      EXL_CUDA_CHECK(cudaMemsetAsync(q32, 0, std::size_t(t) * (qd + 2 * kd) * 4, s));
      zeroed(l.q, q32); zeroed(l.k, k32); zeroed(l.v, v32);
    }
    const DeviceLinear* qkv[3] = {&l.q, &l.k, &l.v};
    float* qkv_y[3] = {q32, k32, v32};
    normed(qkv, qkv_y, 3, l.input_norm, l.input_norm32, qkv_whole);
    head_norms(l, t, q32, k32);
    attend(l, as, AccIn{q32}, AccIn{k32}, AccIn{v32});
    block_out(l.o, att_.get<__half>(), l.attn_out_norm32);
    const bool gu_whole = whole(l.gate) && whole(l.up);
    if (!gu_whole) {
      EXL_CUDA_CHECK(cudaMemsetAsync(g32, 0, std::size_t(t) * inter_ * 2 * 4, s));
      zeroed(l.gate, g32); zeroed(l.up, u32);
    }
    const DeviceLinear* gu[2] = {&l.gate, &l.up};
    float* gu_y[2] = {g32, u32};
    normed(gu, gu_y, 2, l.post_norm, l.post_norm32, gu_whole);
    Exl3Input act;  // down's input, silu / gelu of gate and up
    act.mode = gelu_ ? Exl3Input::gelu : Exl3Input::silu;
    act.xf = g32;
    act.up = u32;
    act.in_features = inter_;
    const DeviceLinear* down[1] = {&l.down};
    float* down_y[1] = {l.mlp_out_norm32.bytes() ? out32 : x};
    if (t == 1 && exl3_group_targets(down, down_y, 1, act, false, grp)) {
      block_out(l.down, nullptr, l.mlp_out_norm32, grp, &act);  // the activation inside
    } else {
      if (gelu_) gelu_tanh_mul(g32, u32, std::int64_t(t) * inter_, a, s);
      else silu_mul(g32, u32, std::int64_t(t) * inter_, a, s);
      block_out(l.down, a, l.mlp_out_norm32);
    }
  }
  enqueue_hidden_out(t, false);
}

void CudaBackend::enqueue_head(int row0, int rows) {
  const cudaStream_t s = stream_->get();
  __half* a = a_.get<__half>();
  norm_rows(x_.get<float>() + std::size_t(row0) * hidden_, rows, final_norm_, final_norm32_, a, s);
  float* y = logits_.get<float>();
  prepare_output(y, rows, vocab_, vocab_, head_.bias.get<float>(), false, s);
  linear_forward(head_, a, rows, y, vocab_, opt_.gemv_max_rows, sm_count_, gemv_view_, dq_.buffer(), dq_.elems(),
                 cublas_->get(), s, false, exl3_work_);
  if (final_softcap_ > 0.0f) softcap_inplace(y, std::int64_t(rows) * vocab_, final_softcap_, s);
  if (copy_logits_)
    EXL_CUDA_CHECK(cudaMemcpyAsync(h_logits_.get(), y, std::size_t(rows) * vocab_ * 4, cudaMemcpyDeviceToHost, s));
}

// The one-token decode step as captured in the decode graph: step and id from pinned memory,
// the layers and the head (logits row 0; copied to h_logits_ when copy_logits_).
void CudaBackend::enqueue_decode_step() {
  const cudaStream_t s = stream_->get();
  EXL_CUDA_CHECK(cudaMemcpyAsync(step_.get(), h_step_.get(), 4, cudaMemcpyHostToDevice, s));
  EXL_CUDA_CHECK(cudaMemcpyAsync(ids_.get(), h_ids_.get(), 4, cudaMemcpyHostToDevice, s));
  if (fused_ok_) {
    enqueue_fused(1, decode_splits_, k_split_len, 0, has_head_ ? 1 : 0);
  } else {
    enqueue_layers(1, decode_splits_, k_split_len);
    if (has_head_) enqueue_head(0, 1);
  }
}

void CudaBackend::forward(const std::int32_t* ids, int n, int logits_mode, float* logits) {
  EXL_CUDA_REQUIRE(loaded_ && capacity_ > 0, "forward before load/allocate_cache");
  EXL_CUDA_REQUIRE(n > 0 && n <= chunk_, "forward: chunk of " + std::to_string(n) + " tokens (max " + std::to_string(chunk_) + ")");
  EXL_CUDA_REQUIRE(cache_len_ + n <= capacity_, "forward: the KV cache holds " + std::to_string(capacity_) + " tokens");
  EXL_CUDA_REQUIRE(has_head_ || logits_mode == 0, "forward: this layer segment has no head (logits from the last segment)");
  EXL_CUDA_REQUIRE(has_embedding_ || prev_, "forward: a layer segment after the first needs link_segments first");
  for (int i = 0; i < n; ++i)
    EXL_CUDA_REQUIRE(ids[i] >= 0 && ids[i] < vocab_, "forward: token id " + std::to_string(ids[i]) + " outside the vocabulary");
  use_device(opt_.device);
  const cudaStream_t s = stream_->get();
  std::memcpy(h_ids_.get(), ids, std::size_t(n) * 4);
  h_step_.get<int>()[0] = cache_len_;
  const bool graph = opt_.cuda_graphs && n == 1 && (logits_mode != 0 || !has_head_);
  if (graph) {
    if (!decode_graph_.ready()) {
      decode_graph_.capture(s, [&] { enqueue_decode_step(); });
      mem_trace("decode graph captured", alloc_);
    }
    decode_graph_.launch(s);
    stream_->sync();
    if (has_head_) std::memcpy(logits, h_logits_.get(), std::size_t(vocab_) * 4);
    cache_len_ += 1;
    return;
  }
  run_eager(n, logits_mode, logits);
}

void CudaBackend::run_eager(int n, int logits_mode, float* logits) {
  const cudaStream_t s = stream_->get();
  const int kv_total = cache_len_ + n;
  int splits = std::min(chunk_splits_, (kv_total + k_split_len - 1) / k_split_len);
  if (n < k_short_chunk)  // the decode attention kernels, one query token each: as many splits as the partials hold
    splits = int(std::min<std::size_t>(decode_splits_, part_.bytes() / 4 / (std::size_t(n) * nh_ * (hd_ + 2))));
  splits = std::max(1, splits);
  int split_len = (kv_total + splits - 1) / splits;
  split_len = (split_len + 63) / 64 * 64;
  const int rows = logits_mode == 0 ? 0 : logits_mode == 2 ? n : 1;
  if (fused_ok_ && n <= opt_.gemv_max_rows && rows <= logit_rows_) {
    // Launch shapes depend only on n and the logits form (the length is read on the device), so
    // with graphs on, each (n, form) is captured once.
    auto enqueue = [&] {
      EXL_CUDA_CHECK(cudaMemcpyAsync(step_.get(), h_step_.get(), 4, cudaMemcpyHostToDevice, s));
      EXL_CUDA_CHECK(cudaMemcpyAsync(ids_.get(), h_ids_.get(), std::size_t(n) * 4, cudaMemcpyHostToDevice, s));
      enqueue_fused(n, splits, split_len, n - rows, rows);
    };
    if (opt_.cuda_graphs && n > 1 && n < k_short_chunk) {
      GraphExec& g = chunk_graphs_[n * 4 + logits_mode];
      if (!g.ready()) {
        g.capture(s, enqueue);
        mem_trace("chunk graph captured", alloc_);
      }
      g.launch(s);
    } else {
      enqueue();
    }
    stream_->sync();
    if (rows > 0) std::memcpy(logits, h_logits_.get(), std::size_t(rows) * vocab_ * 4);
    cache_len_ += n;
    trace_step(n);
    return;
  }
  EXL_CUDA_CHECK(cudaMemcpyAsync(step_.get(), h_step_.get(), 4, cudaMemcpyHostToDevice, s));
  EXL_CUDA_CHECK(cudaMemcpyAsync(ids_.get(), h_ids_.get(), std::size_t(n) * 4, cudaMemcpyHostToDevice, s));
  enqueue_layers(n, splits, split_len);
  if (logits_mode == 0) {
    stream_->sync();
    cache_len_ += n;
    trace_step(n);
    return;
  }
  const int first = n - rows;
  for (int r = 0; r < rows; r += logit_rows_) {
    const int cnt = std::min(logit_rows_, rows - r);
    enqueue_head(first + r, cnt);
    stream_->sync();
    std::memcpy(logits + std::size_t(r) * vocab_, h_logits_.get(), std::size_t(cnt) * vocab_ * 4);
  }
  cache_len_ += n;
  trace_step(n);
}

// EXL_CUDA_MEMTRACE=1: the device's memory after the first few eager steps (cuBLAS and the
// driver allocate on first use).
void CudaBackend::trace_step(int n) {
  if (!mem_trace_on() || traced_steps_ >= 6) return;
  ++traced_steps_;
  mem_trace(n > 1 ? "eager step (n > 1)" : "eager step (n = 1)", alloc_);
}

void CudaBackend::set_pages(const std::int32_t* table, int count, int length) {
  EXL_CUDA_REQUIRE(capacity_ > 0, "set_cache_pages before allocate_cache");
  EXL_CUDA_REQUIRE(length >= 0 && length <= capacity_,
                   "set_cache_pages: length " + std::to_string(length) + " outside 0.." + std::to_string(capacity_));
  if (!table) {  // (the caller's page bookkeeping says which positions hold valid K/V)
    cache_len_ = length;
    return;
  }
  EXL_CUDA_REQUIRE(store_pages_ > 0, "set_cache_pages: the cache is not paged");
  EXL_CUDA_REQUIRE(count >= 0 && std::size_t(count) <= h_pages_.size(),
                   "set_cache_pages: " + std::to_string(count) + " pages (the table holds " +
                       std::to_string(h_pages_.size()) + ")");
  for (int i = 0; i < count; ++i)
    EXL_CUDA_REQUIRE(table[i] >= 0 && table[i] < store_pages_, "set_cache_pages: page " + std::to_string(table[i]) +
                                                                   " outside 0.." + std::to_string(store_pages_ - 1));
  use_device(opt_.device);
  if (count > 0 && !std::equal(table, table + count, h_pages_.begin())) {
    std::copy(table, table + count, h_pages_.begin());
    // Pageable source: the copy has read it when this returns; stream order puts it before the next step.
    EXL_CUDA_CHECK(cudaMemcpyAsync(pages_.get(), h_pages_.data(), std::size_t(count) * 4, cudaMemcpyHostToDevice,
                                   stream_->get()));
  }
  cache_len_ = length;
}

void CudaBackend::copy_page(int dst, int src) {
  EXL_CUDA_REQUIRE(store_pages_ > 0, "copy_cache_page: the cache is not paged");
  EXL_CUDA_REQUIRE(dst >= 0 && dst < store_pages_ && src >= 0 && src < store_pages_,
                   "copy_cache_page: pages " + std::to_string(dst) + ", " + std::to_string(src) + " outside 0.." +
                       std::to_string(store_pages_ - 1));
  if (dst == src) return;
  use_device(opt_.device);
  const cudaStream_t s = stream_->get();
  const std::size_t row = std::size_t(nkv_) * hd_, elems = row * k_kv_page_tokens;
  // Bytes of one page in a store of format fmt, and of its scales (elements / 32 fp16).
  auto copy = [&](DeviceBuffer& b, std::size_t page_bytes) {
    if (!b.bytes()) return;
    char* p = static_cast<char*>(b.get());
    EXL_CUDA_CHECK(cudaMemcpyAsync(p + std::size_t(dst) * page_bytes, p + std::size_t(src) * page_bytes, page_bytes,
                                   cudaMemcpyDeviceToDevice, s));
  };
  for (DeviceLayer& l : layers_) {
    copy(l.k_cache, kv_store_data_bytes(kfmt_, elems));
    copy(l.v_cache, kv_store_data_bytes(vfmt_, elems));
    copy(l.k_scales, elems / 32 * 2);
    copy(l.v_scales, elems / 32 * 2);
  }
}

void CudaBackend::truncate(int length) {
  EXL_CUDA_REQUIRE(length >= 0 && length <= cache_len_, "truncate_cache: length " + std::to_string(length) +
                                                            " outside 0.." + std::to_string(cache_len_));
  cache_len_ = length;
}

void CudaBackend::reset_graphs() {
  decode_graph_.reset();
  chunk_graphs_.clear();
  sample_graph_.reset();
}

bool CudaBackend::enqueue_hidden_in(int t) {
  if (has_embedding_) return false;
  EXL_CUDA_REQUIRE(prev_ && t <= prev_->chunk_ && t <= chunk_, "layer segment: no input from the previous segment");
  // The previous segment's output as it leaves it: its exact accumulator (the fused path) or fp32.
  // A function of t, not of what prev_ enqueued last: a captured graph replays without its host code.
  const bool exact = prev_->hands_exact(t);
  const void* src = prev_->out_host_ ? prev_->h_hidden_.get() : exact ? prev_->xq_.get() : prev_->x_.get();
  void* dst = exact ? xq_.get() : x_.get();
  EXL_CUDA_REQUIRE(src && dst, "layer segment: the previous segment has no output buffer (allocate its cache)");
  EXL_CUDA_REQUIRE(!exact || std::size_t(t) * hidden_ * 8 <= xq_.bytes(), "layer segment: exact input too large");
  // Same device: a plain copy; another GPU: peer to peer (or staged by the driver); pinned host:
  // an upload. cudaMemcpyDefault tells them apart by address (unified addressing).
  EXL_CUDA_CHECK(cudaMemcpyAsync(dst, src, std::size_t(t) * hidden_ * (exact ? 8 : 4), cudaMemcpyDefault,
                                 stream_->get()));
  return exact;
}

bool CudaBackend::hands_exact(int t) const { return exact_acc_ && fused_ok_ && t <= opt_.gemv_max_rows; }

void CudaBackend::enqueue_hidden_out(int t, bool exact) {
  if (has_head_) return;  // the last segment hands nothing on
  EXL_CUDA_REQUIRE(exact == hands_exact(t), "layer segment: output form differs from what the next segment expects");
  if (!out_host_) return;
  EXL_CUDA_REQUIRE(h_hidden_.get(), "layer segment: no host buffer for the next segment");
  EXL_CUDA_CHECK(cudaMemcpyAsync(h_hidden_.get(), exact ? xq_.get() : x_.get(), std::size_t(t) * hidden_ * (exact ? 8 : 4),
                                 cudaMemcpyDeviceToHost, stream_->get()));
}

void CudaBackend::size_hidden_out() {
  // Pinned for every device: the next segment's GPU reads it. fp32 rows of a chunk, or int64 rows
  // of the fused path's chunks (exact accumulators).
  const std::size_t bytes = std::max(std::size_t(chunk_) * hidden_ * 4, xq_.bytes());
  h_hidden_ = PinnedBuffer(out_host_ && chunk_ > 0 ? bytes : 0, true);
}

void CudaBackend::link_after(CudaBackend& prev, bool via_host) {
  EXL_CUDA_REQUIRE(loaded_ && prev.loaded_, "link_segments before load");
  EXL_CUDA_REQUIRE(&prev != this, "link_segments: a segment cannot follow itself");
  EXL_CUDA_REQUIRE(!has_embedding_ && !prev.has_head_ && prev.first_layer_ + prev.nl_ == first_layer_ &&
                       prev.hidden_ == hidden_,
                   "link_segments: segment at layers " + std::to_string(first_layer_) + ".. does not follow the one at " +
                       std::to_string(prev.first_layer_) + " .. " + std::to_string(prev.first_layer_ + prev.nl_ - 1));
  if (!via_host && prev.opt_.device != opt_.device) {
    int can = 0;
    EXL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, opt_.device, prev.opt_.device));
    if (can) {
      use_device(opt_.device);
      const cudaError_t e = cudaDeviceEnablePeerAccess(prev.opt_.device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
      else EXL_CUDA_CHECK(e);
    } else {
      via_host = true;
      log_message(1, "exl_cuda: no peer access from device " + std::to_string(opt_.device) + " to " +
                         std::to_string(prev.opt_.device) + ": the hidden state goes through pinned host memory");
    }
  }
  prev_ = &prev;
  prev.out_host_ = via_host;
  prev.size_hidden_out();
  reset_graphs();
  prev.reset_graphs();
}

exl_cuda_memory CudaBackend::memory() const {
  exl_cuda_memory m{};
  m.weights_bytes = weight_bytes_;
  for (const DeviceLayer& l : layers_)
    m.cache_bytes += l.k_cache.bytes() + l.v_cache.bytes() + l.k_scales.bytes() + l.v_scales.bytes();
  m.scratch_bytes = alloc_.in_use > m.cache_bytes + weight_bytes_ ? alloc_.in_use - m.cache_bytes - weight_bytes_ : 0;
  m.allocations = alloc_.allocations;
  std::size_t free_b = 0, total_b = 0;
  if (cudaSetDevice(opt_.device) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) { m.device_free = free_b; m.device_total = total_b; }
  else (void)cudaGetLastError();
  return m;
}

}  // namespace exl::cuda

// The model-level CUDA backend behind the C table: owns the weights in device memory, the
// fp16 KV cache, all scratch (allocated at load / allocate_cache, never while generating),
// one stream (and a side stream for prefill's reconstructs: DequantPipe), the cuBLAS handle, and the
// CUDA graph of the decode step.
#pragma once
#include <array>
#include <map>
#include <memory>
#include <vector>

#include "device_memory.h"
#include "kernels.h"
#include "module_api.h"
#include "sampler.h"

namespace exl::cuda {

struct DeviceLinear {
  bool exl2 = false;
  bool exl3 = false;
  int k = 0, n = 0;
  DeviceBuffer q_weight, q_scale, q_scale_max, perm, units;  // exl2
  Exl2Device view;
  DeviceBuffer trellis, suh, svh;  // exl3
  Exl3Device view3;
  DeviceBuffer weight;  // dense fp16 [n, k]
  DeviceBuffer bias;    // fp32 [n] (empty: none)
};

struct DeviceLayer {
  DeviceBuffer input_norm, post_norm;  // fp16 [hidden] (models without family norms)
  // Model families (CudaBackend::family_norms_): every norm in fp32 ((1 + w) added in fp32 at load),
  // the q/k head norms [head_dim] and the sandwich norms of the blocks' outputs (empty: none).
  DeviceBuffer input_norm32, post_norm32, q_norm32, k_norm32, attn_out_norm32, mlp_out_norm32;
  int window = 0;           // sliding window (0: full attention)
  bool local_rope = false;  // the local RoPE table (Gemma 3)
  DeviceLinear q, k, v, o, gate, up, down;
  // The seven linears in the order the layer multiplies them.
  std::array<DeviceLinear*, 7> linears() { return {&q, &k, &v, &o, &gate, &up, &down}; }
  std::array<const DeviceLinear*, 7> linears() const { return {&q, &k, &v, &o, &gate, &up, &down}; }
  DeviceBuffer k_cache, v_cache;       // stores [capacity, nkv, d] in the cache's formats
  DeviceBuffer k_scales, v_scales;     // Q8/Q4 stores: fp16 [capacity * nkv * d / 32]
  // Input permutations (CudaBackend::load): q/k/v share one, gate/up share one (as ExLlamaV2's
  // act-order conversions write them), so the decode step's RMSNorm writes the input once in
  // that order; down's was folded into gate/up's columns, its own is the identity.
  bool qkv_one_perm = false, gu_one_perm = false, down_in_order = false;
  // int32 [nh * d]: where feature f of the attention output sits in o's stored row order (the
  // inverse of o's permutation; empty: o gathers its input). Short chunks write it so.
  DeviceBuffer o_pos;
};

// How upload_linear rewrites an EXL2 layer's permutations (the input-permutation fold, load()).
struct LinearFold {
  const std::int32_t* col_perm = nullptr;  // host [n]: output column c is the stored column col_perm[c]
  bool rows_in_order = false;              // the input arrives permuted: the layer's own perm is the identity
  std::uint64_t perm_seed = 0;             // synthetic weights: seed of the random permutation (0: the layer's)
};
// The random input permutation of a synthetic EXL2 layer.
std::vector<std::int32_t> synthetic_perm(int k, std::uint64_t seed);

// The EXL2 GEMV's split-K workspace (kernels.h: GemvWorkspace), counters zeroed.
class GemvScratch {
 public:
  void allocate(Allocator* alloc, cudaStream_t s) {
    partials_.allocate(alloc, k_gemv_partial_floats * 4, "GEMV split-K partials");
    counters_.allocate(alloc, std::size_t(k_gemv_counters) * 4, "GEMV split-K counters");
    EXL_CUDA_CHECK(cudaMemsetAsync(counters_.get(), 0, counters_.bytes(), s));
  }
  GemvScratch() = default;
  GemvScratch(const GemvScratch&) = delete;
  GemvScratch& operator=(const GemvScratch&) = delete;
  GemvWorkspace view() const { return {partials_.get<float>(), counters_.get<unsigned>()}; }

 private:
  DeviceBuffer partials_, counters_;
};

// Uploads one linear layer (exl2 or dense) into `out`, through `staging` for dense conversion.
void upload_linear(const exl_cuda_linear& src, Allocator* alloc, std::uint64_t synthetic_seed, cudaStream_t s,
                   DeviceLinear& out, std::uint64_t* bytes, const LinearFold& fold = {});
// Builds the per-unit table of an EXL2 layer (host side).
std::vector<int2> exl2_units(const std::int16_t* q_groups, int groups, int q_rows, int k);

// The EXL3 path's scratch (CudaBackend::allocate_scratch): the transformed input (fp16) and the
// products before the output transform (fp32: the GEMV's K splits, or cuBLAS's output). A
// linear runs in passes of as many rows as both hold.
struct Exl3Work {
  __half* xr = nullptr;
  std::size_t xr_elems = 0;
  float* z = nullptr;
  std::size_t z_elems = 0;
  unsigned* tickets = nullptr;  // zeroed counters of the decode GEMV's folded output transform
  std::size_t tickets_elems = 0;
};
// The scratch an EXL3 linear of w needs to run `rows` rows a pass (rows >= 1): the GEMV's
// up to k_exl3_gemv_rows rows times its K splits, or cuBLAS's rows.
struct Exl3Need {
  std::size_t xr = 0, z = 0;
  std::size_t tickets = 0;  // w.n / 128 (exl3_gemv_fused's counters)
};
Exl3Need exl3_need(const Exl3Device& w, std::size_t rows, int sm_count);

// y[m, n] (fp32, pre-initialised) += x[m, k] (fp16) . W. Uses the fused kernel for m <=
// gemv_max_rows, else reconstruct into `dq` (fp16 [k, n_pad]) and cuBLAS. `overwrite`: y = x . W
// (cuBLAS only: dense layers, or EXL2 ones that are reconstructed; an error for the GEMV).
// EXL3 linears (exl3_work needed): the GEMV for m <= gemv_max_rows or when dq cannot hold W-hat,
// else W-hat reconstructed into dq and cuBLAS; either may overwrite.
void linear_forward(const DeviceLinear& l, const __half* x, int m, float* y, int ldy, int gemv_max_rows, int sm_count,
                    const GemvWorkspace& ws, __half* dq, std::size_t dq_elems, cublasHandle_t cublas, cudaStream_t s,
                    bool overwrite = false, const Exl3Work& exl3_work = {});

// Prefill's EXL2 linears (more than gemv_max_rows rows): each is reconstructed to fp16 and
// multiplied with cuBLAS. With two reconstruct buffers and a side stream, the next linear's
// reconstruct (bound by memory) runs beside the current GEMM (bound by the tensor cores): a chunk
// names the linears it will multiply in call order (begin), and each forward() waits for its
// buffer, starts the next linear's reconstruct and multiplies. Without overlap (set_mode) each linear
// is reconstructed on the main stream just before its GEMM (the buffers stay allocated).
class DequantPipe {
 public:
  // `elems`: the largest k * n_pad of the linears it will take (0: none, nothing allocated).
  void allocate(Allocator* alloc, std::size_t elems);
  // overlap false: each reconstruct on the main stream before its GEMM; skip: none (measurements).
  void set_mode(bool overlap, bool skip) { overlap_ = overlap; skip_ = skip; }
  std::size_t elems() const { return elems_; }
  __half* buffer() const { return buf_[0].get<__half>(); }  // for a reconstruct outside the pipe (the head)
  // Whether linear_forward would reconstruct `l` for m rows (and the buffers hold it).
  bool takes(const DeviceLinear& l, int m, int gemv_max_rows) const;
  // Starts a chunk on stream s: `order` the linears its forward() calls will name, in that order.
  void begin(std::vector<const DeviceLinear*> order, cudaStream_t s);
  // y[m, n] (fp32, pre-initialised) += x[m, k] . W for the chunk's next linear, which must be `l`
  // (y = x . W with `overwrite`).
  void forward(const DeviceLinear& l, const __half* x, int m, float* y, int ldy, bool overwrite, cublasHandle_t cublas,
               cudaStream_t s);

 private:
  void reconstruct(std::size_t i);  // order_[i] into buf_[i % 2] on the side stream
  std::size_t elems_ = 0;
  bool overlap_ = true, skip_ = false;
  DeviceBuffer buf_[2];
  std::unique_ptr<Stream> side_;
  std::unique_ptr<Event> start_, ready_[2], free_[2];
  std::vector<const DeviceLinear*> order_;
  std::size_t next_ = 0;
};

class CudaBackend {
 public:
  explicit CudaBackend(const exl_cuda_options& o);
  void load(const exl_cuda_model& m, exl_cuda_progress_fn progress, void* user);
  // kfmt, vfmt: KvFmt (kernels.h) of the K and V stores. pages > 0: a paged cache of that many
  // pages of k_kv_page_tokens (at least one sequence of max_seq_len), read through the page table
  // set_pages() writes; 0: one contiguous sequence of max_seq_len.
  void allocate_cache(int max_seq_len, int kfmt = kv_f16, int vfmt = kv_f16, int pages = 0);
  // The active sequence: its page table's first `count` entries (table null: unchanged) and its
  // length (the next step's position). Only a paged cache takes a table or a longer length.
  void set_pages(const std::int32_t* table, int count, int length);
  // Copies every layer's K/V (and scales) of store page src to page dst (copy on write).
  void copy_page(int dst, int src);
  void forward(const std::int32_t* ids, int n, int logits_mode, float* logits);
  // forward of n ids and sampling of the last position on the device (cuda_backend_sample.cpp).
  void forward_sample(const std::int32_t* ids, int n, const exl_cuda_sampler& s, exl_cuda_sample_result* out);
  void truncate(int length);
  int length() const { return cache_len_; }
  exl_cuda_memory memory() const;
  // Benchmarks: pretend the cache holds `past` tokens.
  void set_length_unchecked(int past) { cache_len_ = past; }
  int vocab() const { return vocab_; }
  cudaStream_t stream() const { return stream_->get(); }
  // Layer segments (module_api.h, link_segments): this segment's input is prev's residual after
  // each of prev's steps, copied device to device or through prev's pinned host buffer.
  void link_after(CudaBackend& prev, bool via_host);

 private:
  void allocate_scratch();
  void reset_graphs();
  // A later segment's input (prev_'s residual into x_, or into xq_ when prev_ left it exact:
  // returns whether it did) and, when the next segment reads it through the host, this segment's
  // output (x_, or xq_ when `exact`, into h_hidden_): t rows each. Handing the exact accumulator
  // over keeps a split model's logits bit for bit those of one device.
  bool enqueue_hidden_in(int t);
  bool hands_exact(int t) const;  // a step of t tokens leaves its output in xq_ (the fused path)
  void size_hidden_out();  // h_hidden_: a chunk of rows when out_host_ (once the scratch is sized), else none
  void enqueue_hidden_out(int t, bool exact);
  void enqueue_layers(int t, int splits, int split_len);
  void enqueue_fused(int t, int splits, int split_len, int head_row0, int head_rows);
  // One token: the one-launch attention step (EXL_CUDA_FUSED_DECODE).
  bool fused_attention_step(int t) const;
  bool exact_qkv(int t, const DeviceLayer& l) const;
  int accumulator_inits(int layer, int t, int head_rows, GemvInit* out) const;
  void enqueue_head(int row0, int rows);
  void run_eager(int n, int logits_mode, float* logits);
  void trace_step(int n);
  void head_norms(const DeviceLayer& l, int t, float* q32, float* k32);
  void enqueue_decode_step();

  exl_cuda_options opt_{};
  int sm_count_ = 0;
  Allocator alloc_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<CublasHandle> cublas_;
  DeviceBuffer cublas_ws_;
  GemvScratch gemv_ws_;
  GemvWorkspace gemv_view_;    // what the GEMV launches get: gemv_ws_, or none with options.fast_reduce
  bool fused_decode_ = false;  // EXL_CUDA_FUSED_DECODE=1: attention_decode_step for t = 1
  // Chunks of 2 .. gemv_max_rows tokens: RMSNorm and SiLU * up as their own launches (fp16 rows,
  // gathered by the GEMV as plain activations) instead of folded into every GEMV block: a pass
  // verifying 1-8 drafts on the H200's 8B costs 28-38 % less (bench/RESULTS.md, session 6).
  // EXL_CUDA_UNFOLD=0 folds them as for one token.
  bool unfold_rows_ = true;
  bool exact_acc_ = true;  // the fused path's q/k/v, gate/up and residual in exact accumulators (EXL_CUDA_EXACT)
  // Input permutations folded away (DeviceLayer): down's into gate/up's columns at load, and
  // the decode step's RMSNorm writes q/k/v's and gate/up's inputs in their stored order, so
  // every GEMV block reads its rows contiguously instead of gathering them (EXL_CUDA_PERM_FOLD=0:
  // gather as before, for comparison).
  bool fold_perms_ = true;
  // The EXL3 decode GEMV applies the output transform itself (EXL_CUDA_EXL3_FOLD=1). Off: on an H100
  // the separate launch was faster (llama3-8b EXL3 4.0 decode 237.2 against 219.3 tok/s, session 37).
  bool fold_exl3_out_ = false;
  int traced_steps_ = 0;  // EXL_CUDA_MEMTRACE: eager steps traced so far
  // Decode of EXL3 layers (enqueue_layers, one row): the input's RMSNorm or activation formed inside
  // the GEMV and the layers that share an input (q, k, v; gate, up) in one launch, their output
  // transforms in one more. EXL_CUDA_EXL3_GROUP=0: a launch per step and layer, for comparison.
  bool group_exl3_ = true;
  // The targets of such a launch over ls[0 .. count) into ys (one row each) in the EXL3 scratch;
  // false where the layers, the input or the scratch do not allow it.
  bool exl3_group_targets(const DeviceLinear* const* ls, float* const* ys, int count, const Exl3Input& in, bool overwrite,
                          Exl3Target* t) const;
  void exl3_group_run(const Exl3Target* t, int count, const Exl3Input& in);
  // The RMSNorm of the residual row x with w16 / w32 (norm_rows' choice) as an EXL3 GEMV input.
  Exl3Input exl3_norm_input(const float* x, const DeviceBuffer& w16, const DeviceBuffer& w32) const;
  // Quantized caches: RoPE does kv_prepare's rotations and (whole blocks) the stores' writes, the
  // decode merge rotates the output back (EXL_CUDA_KV_FOLD=0: the separate passes).
  bool fold_kv_ = true;
  // One token over FP16 stores: RoPE and the new K/V row done by the decode attention kernel
  // (AttentionShape::rope) instead of a rope_qkv_cache launch before it (EXL_CUDA_ROPE_FOLD=0).
  bool fold_rope_ = true;

  // Layer segment (options layer_first / layer_count): layers_[i] is the model's layer
  // first_layer_ + i; only the first segment holds the embedding, only the last the head.
  int first_layer_ = 0;
  bool has_embedding_ = true, has_head_ = true;
  CudaBackend* prev_ = nullptr;  // the segment before this one (input), or none
  bool out_host_ = false;        // the next segment reads h_hidden_: copy x_ there after each step
  PinnedBuffer h_hidden_;        // fp32 [chunk, hidden]

  // model
  int vocab_ = 0, hidden_ = 0, nl_ = 0, nh_ = 0, nkv_ = 0, hd_ = 0, inter_ = 0, rope_style_ = 0;
  float eps_ = 1e-5f;
  bool loaded_ = false;
  std::uint64_t weight_bytes_ = 0;
  DeviceBuffer embedding_, final_norm_, final_norm32_;
  // RoPE tables (inv_freq padded with zeros to head_dim / 2): the model's, its LongRoPE long form
  // (caches longer than rope_long_after_) and the local layers' (Gemma 3).
  struct Rope {
    DeviceBuffer inv_freq;
    float mscale = 1.0f, pos_div = 1.0f;
    int rotary_half = 0;  // 0: head_dim / 2
  };
  Rope rope_, rope_long_, rope_local_;
  int rope_long_after_ = 0;
  bool use_long_ = false;  // allocate_cache: the long table for this context
  const Rope& rope() const { return use_long_ ? rope_long_ : rope_; }
  RopeParams rope_params(const Rope& r, float2* cs) const;
  // Model families (exl_cuda_family). family_norms_: fp32 norms and the general layer form (no fused
  // path, no RoPE folded into attention); the attention's scale, soft-cap and windows work in both, and
  // so do q/k head norms alone (Qwen3's: fp32 weights, applied to the fp32 q and k before RoPE).
  bool family_norms_ = false, attn_features_ = false, gelu_ = false;
  float emb_scale_ = 1.0f, attn_scale_ = 0.0f, attn_softcap_ = 0.0f, final_softcap_ = 0.0f;
  float attention_scale() const;
  void norm_rows(const float* x, int rows, const DeviceBuffer& w16, const DeviceBuffer& w32, __half* y, cudaStream_t s);
  DeviceLinear head_;
  std::vector<DeviceLayer> layers_;

  // cache and scratch
  int capacity_ = 0, cache_len_ = 0, chunk_ = 0, logit_rows_ = 0;
  int decode_splits_ = 0, chunk_splits_ = 0;
  DequantPipe dq_;  // prefill's reconstruct buffers
  DeviceBuffer exl3_xr_, exl3_z_;  // the EXL3 linears' scratch (Exl3Work; none without EXL3 layers)
  Exl3Work exl3_work_;
  DeviceBuffer x_, a_, qkv32_, qh_, att_, gu32_, logits_, part_, step_, ids_;
  DeviceBuffer att_counters_;      // the fused decode step's split tickets [nkv]
  DeviceBuffer cs_;                // RoPE table of the step's positions, fp32x2 [chunk, d/2]
  DeviceBuffer cs_local_;          // the local layers' (Gemma 3), or none
  DeviceBuffer out32_;             // sandwich norms: a block's output before its norm, fp32 [chunk, hidden]
  DeviceBuffer fqkv_[2], fgu_[2];  // the fused path's alternating accumulator sets
  DeviceBuffer xq_;                // the fused path's residual as an exact accumulator
  int kfmt_ = kv_f16, vfmt_ = kv_f16;  // KV store formats
  DeviceBuffer pages_;                 // paged cache: the active sequence's page table, int32
  std::vector<std::int32_t> h_pages_;  // its host copy
  int store_pages_ = 0;                // pages in each store (0: contiguous)
  const int* page_table() const { return store_pages_ > 0 ? pages_.get<int>() : nullptr; }
  DeviceBuffer k_stage_, v_stage_;     // a quantized store's chunk rows, fp16 [chunk, nkv, d]
  // RoPE, the cache write and attention of one layer for t tokens (q/k/v fp32 or exact accumulators
  // in, att_ out).
  // Returns the output (att_, or a_ when `o_order` asks for o's stored row order and V is rotated).
  const __half* attend(DeviceLayer& l, const AttentionShape& as, AccIn q32, AccIn k32, AccIn v32, bool o_order = false);
  void norm_input(GemvCall& c, AccIn x, int rows, const DeviceBuffer& w, const std::int32_t* perm, bool unfold);
  void add_residual_bias(float* x, long long* xq, int t, const DeviceBuffer& bias);
  bool fused_ok_ = false;          // every layer EXL2 with k <= 65536: the fused small-t path
  PinnedBuffer h_step_, h_ids_, h_logits_;
  GraphExec decode_graph_;
  // The fused path for 2 .. gemv_max_rows tokens (speculative verification, draft catch-up), one
  // graph per token count and logits form: key n * 4 + logits_mode.
  std::map<int, GraphExec> chunk_graphs_;

  // Device sampling (cuda_backend_sample.cpp).
  void allocate_sampler();
  std::unique_ptr<DeviceSampler> sampler_;
  GraphExec sample_graph_;     // the decode step with the sampler instead of the logits copy
  bool copy_logits_ = true;    // false while enqueuing a step whose logits stay on the device
};

}  // namespace exl::cuda

// The opaque handle of module_api.h.
struct exl_cuda_backend {
  std::unique_ptr<exl::cuda::CudaBackend> impl;
};

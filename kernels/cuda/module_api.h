/* The exl_cuda module's C interface: a versioned table of plain C function pointers.
 * The engine dlopens libexl_cuda.so and calls exl_cuda_get_api(EXL_CUDA_ABI_VERSION). No C++
 * types, exceptions or STL cross this boundary: every call returns an exl_cuda_status and, on
 * failure, last_error() (thread-local, valid until the next call on that thread) says what
 * failed (the CUDA/cuBLAS call, file and line, and the tensor or request involved).
 *
 * Layouts: fp16 values are raw uint16 bit patterns. Dense weights are [out, in] row-major (HF).
 * EXL2 tensors are the on-disk layout of spec §2 with q_perm = argsort(q_invperm).
 * Bump EXL_CUDA_ABI_VERSION on any change to a struct or function signature here. */
#ifndef EXL_CUDA_MODULE_API_H
#define EXL_CUDA_MODULE_API_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXL_CUDA_ABI_VERSION 11u  /* 2: device sampling (forward_sample, test_sample); 3: quantized KV cache;
                                    4: paged KV cache; 5: the converter's block math; 6: the converter's
                                    measurement on the device (candidates, rows, evaluate); 7: layer
                                    segments (options.layer_first/layer_count, link_segments),
                                    bench_fp16_gemm; 8: test_exact_acc; 9: EXL3 linears (kind 2),
                                    test_exl3_matmul, test_exl3_reconstruct, test_exl3_input; 10: model
                                    families (exl_cuda_family, per-layer q/k and sandwich norms, windows
                                    and RoPE tables, the LongRoPE long table), test_attention_options,
                                    test_family_op; 11: test_exl3_group */

typedef enum exl_cuda_status {
  EXL_CUDA_OK = 0,
  EXL_CUDA_ERR_NO_DRIVER = 1,     /* no NVIDIA driver / driver too old for this runtime */
  EXL_CUDA_ERR_NO_DEVICE = 2,     /* no device, or the ordinal is out of range */
  EXL_CUDA_ERR_OUT_OF_MEMORY = 3, /* device (or pinned host) allocation failed, or past the VRAM budget */
  EXL_CUDA_ERR_INVALID = 4,       /* bad argument (shapes, ids, state) */
  EXL_CUDA_ERR_UNSUPPORTED = 5,   /* valid request this module does not implement */
  EXL_CUDA_ERR_CUDA = 6,          /* other CUDA runtime failure */
  EXL_CUDA_ERR_CUBLAS = 7,        /* cuBLAS failure (or cuBLAS missing) */
  EXL_CUDA_ERR_INTERNAL = 8
} exl_cuda_status;

/* Same numbering as exl::DType. */
typedef enum exl_cuda_dtype {
  EXL_CUDA_F32 = 0, EXL_CUDA_F16 = 1, EXL_CUDA_BF16 = 2, EXL_CUDA_I32 = 3, EXL_CUDA_I16 = 4
} exl_cuda_dtype;

/* level: 0 debug, 1 info, 2 warning, 3 error (same as exl::LogLevel). */
typedef void (*exl_cuda_log_fn)(void* user, int level, const char* message);
/* Upload progress: done and total bytes. */
typedef void (*exl_cuda_progress_fn)(void* user, uint64_t done, uint64_t total);

typedef struct exl_cuda_device_info {
  char name[256];
  int cc_major, cc_minor;
  int sm_count;
  int mem_bus_width_bits;
  int mem_clock_khz;
  uint64_t total_bytes, free_bytes;
  uint64_t smem_per_block_optin;
  double peak_bandwidth_gbs; /* from bus width x memory clock (datasheet-like, not measured) */
} exl_cuda_device_info;

/* One EXL2 layer (host pointers; read during load only). */
typedef struct exl_cuda_exl2 {
  const uint32_t* q_weight;   /* [q_rows, n_pad] */
  const uint32_t* q_scale;    /* [groups, n_pad / 8] */
  const uint16_t* q_scale_max;/* [groups] fp16 */
  const int16_t* q_groups;    /* [2 * groups] */
  const int32_t* q_perm;      /* [k] */
  int k, n, n_pad, groups, q_rows;
} exl_cuda_exl2;

/* One EXL3 layer (host pointers; read during load only). k, n: the features padded to 128. */
typedef struct exl_cuda_exl3 {
  const uint16_t* trellis;    /* [k / 16, n / 16, 8 * bits2] */
  const uint16_t* suh;        /* [k] fp16 */
  const uint16_t* svh;        /* [n] fp16 */
  int k, n, bits2;            /* bits2: twice the bit rate */
  int codebook;               /* 0 3INST, 1 MCG, 2 MUL1 */
} exl_cuda_exl3;

typedef struct exl_cuda_linear {
  int kind;                   /* 0 dense, 1 exl2, 2 exl3 */
  int in_features, out_features;
  exl_cuda_exl2 exl2;         /* kind 1 */
  exl_cuda_exl3 exl3;         /* kind 2 */
  const void* weight;         /* kind 0: [out, in] */
  int weight_dtype;           /* exl_cuda_dtype: f16, bf16 or f32 */
  const void* bias;           /* optional, [>= out] */
  int bias_dtype;
} exl_cuda_linear;

typedef struct exl_cuda_layer {
  const void* input_norm; int input_norm_dtype;  /* [hidden] */
  exl_cuda_linear q, k, v, o;
  const void* post_norm; int post_norm_dtype;   /* the norm in front of the MLP */
  exl_cuda_linear gate, up, down;
  /* ABI 10 (all optional, null / 0: absent): */
  const void* q_norm; int q_norm_dtype;          /* [head_dim]: per-head RMSNorm of q before RoPE */
  const void* k_norm; int k_norm_dtype;          /* [head_dim]: of k */
  const void* attn_out_norm; int attn_out_norm_dtype; /* [hidden]: the attention output's norm (sandwich) */
  const void* mlp_out_norm; int mlp_out_norm_dtype;   /* [hidden]: the MLP output's norm (sandwich) */
  int window;                                    /* sliding window in positions (0: full attention) */
  int local_rope;                                /* nonzero: the model's rope_local table */
} exl_cuda_layer;

/* ABI 10: one RoPE table (exl::rope_table): inv_freq [rotary_half] (rotary_half <= head_dim / 2; less:
 * partial rotary, the first 2 * rotary_half elements of a head rotate, pairs (i, i + rotary_half) in
 * the NeoX style, the rest pass unchanged). */
typedef struct exl_cuda_rope {
  const float* inv_freq;
  int rotary_half;
  float mscale, position_divisor;
} exl_cuda_rope;

/* ABI 10: the family description (exl::FamilyDescription) as the module runs it. */
typedef struct exl_cuda_family {
  int norm_one_plus;         /* nonzero: every norm multiplies by (1 + w), w + 1 computed in fp32 */
  int gelu_tanh;             /* nonzero: GeGLU with tanh GELU instead of SiLU */
  float embedding_scale;     /* 0 or 1: none */
  float attention_scale;     /* 0: 1 / sqrt(head_dim) */
  float attn_logit_softcap;  /* 0: none; scores = cap * tanh(scores / cap) */
  float final_logit_softcap; /* 0: none */
  exl_cuda_rope rope_local;  /* inv_freq null: none (layers' local_rope must be 0) */
  exl_cuda_rope rope_long;   /* inv_freq null: none; the table of caches longer than rope_long_after */
  int rope_long_after;
  int rotary_half;           /* the model table's (rope_inv_freq) length; 0: head_dim / 2 */
} exl_cuda_family;

typedef struct exl_cuda_model {
  int vocab, hidden, num_layers, num_heads, num_kv_heads, head_dim, intermediate;
  float rms_eps;
  const float* rope_inv_freq;  /* [head_dim / 2] from exl::rope_table */
  float rope_mscale, rope_position_divisor;
  int rope_style;              /* 0 neox, 1 gptj */
  const void* embedding; int embedding_dtype;    /* [vocab, hidden] */
  const void* final_norm; int final_norm_dtype;  /* [hidden] */
  exl_cuda_linear head;
  const exl_cuda_layer* layers;                  /* [num_layers] */
  /* Benchmarks: nonzero = EXL2 q_weight / q_scale pointers may be null and are filled with
   * random valid data on the device from this seed (no host copy of the weights needed). */
  uint64_t synthetic_seed;
  exl_cuda_family family;                        /* ABI 10; zero: Llama */
} exl_cuda_model;

typedef struct exl_cuda_options {
  int device;
  int max_chunk;          /* longest forward chunk */
  int cuda_graphs;        /* capture the decode step */
  int gemv_max_rows;      /* EXL2 rows up to this use the fused kernel, above: reconstruct + cuBLAS (0: default) */
  uint64_t vram_limit;    /* bytes this backend may allocate (0: no limit) */
  int fast_reduce;        /* 1: the EXL2 GEMV's split-K partials meet in fp32 atomics (about 10 % faster
                             decode, last bits vary from run to run); 0: a fixed order, so a seed
                             repeats a generation exactly */
  /* ABI 7, layer split over devices: this backend holds the model's layers layer_first ..
   * layer_first + layer_count - 1 (layer_count 0: to the last). The embedding is loaded only by the
   * segment that starts at layer 0, the final norm and head only by the one that ends at the last
   * layer; a segment that does not start at 0 takes its input from the segment linked before it
   * (link_segments), one that does not end at the last layer produces no logits (forward with
   * logits_mode 0, CUDA graphs still used for one token). */
  int layer_first;
  int layer_count;
} exl_cuda_options;

typedef struct exl_cuda_memory {
  uint64_t weights_bytes, cache_bytes, scratch_bytes;
  uint64_t device_total, device_free;
  uint64_t allocations;   /* device allocations made so far (must not grow while generating) */
} exl_cuda_memory;

/* Device sampling (issue 5): the host sampler's settings (exl::SamplerSettings, order of stages in
 * exl/generator.h) plus the step's inputs, packed by the engine. Lists are host pointers read
 * during the call. The device applies, on the last position's fp32 logits: penalties (for each
 * entry: l = l > 0 ? l / rep : l * rep; l -= presence; then `count` times l -= frequency),
 * banned ids -> -inf, bias (entries sorted by id, stable, so duplicates apply in list order),
 * ids >= vocab_limit -> -inf, then greedy arg-max or softmax / top-k / top-p / min-p / typical
 * and the draw with `uniform`. */
typedef struct exl_cuda_sampler {
  int greedy;               /* nonzero: arg-max, lowest id on ties (uniform unused) */
  float temperature;
  int top_k;                /* 0 = off */
  float top_p;              /* 1 = off */
  float min_p;              /* 0 = off */
  float typical;            /* 0 or 1 = off */
  float repetition_penalty, frequency_penalty, presence_penalty;
  int vocab_limit;          /* 0 = no mask */
  double uniform;           /* the draw's u in [0, 1), from the host's seeded stream */
  const int32_t* penalty_ids;    /* distinct ids of the penalty window */
  const int32_t* penalty_counts; /* their occurrences in the window */
  int num_penalty;
  const int32_t* banned; int num_banned;
  const int32_t* bias_ids; const float* bias_values; int num_bias;
} exl_cuda_sampler;

/* Most entries of banned + bias a step may carry (penalty entries: up to the cache length). */
#define EXL_CUDA_SAMPLER_MAX_EDITS 65536

typedef struct exl_cuda_sample_result {
  int32_t id;          /* the chosen token */
  int32_t candidates;  /* tokens kept after all filters (1 for greedy) */
  float p;             /* the chosen token's probability in the kept distribution */
} exl_cuda_sample_result;

typedef struct exl_cuda_backend exl_cuda_backend;

/* ---- the converter's per-block math (ABI 5) ---- */
typedef struct exl_cuda_convert exl_cuda_convert;
/* Tensor slots of the block being converted (fp32, HF layout [out, in]; biases [out]). */
enum {
  EXL_CUDA_CONV_NORM = 0, EXL_CUDA_CONV_Q = 1, EXL_CUDA_CONV_K = 2, EXL_CUDA_CONV_V = 3, EXL_CUDA_CONV_O = 4,
  EXL_CUDA_CONV_Q_BIAS = 5, EXL_CUDA_CONV_K_BIAS = 6, EXL_CUDA_CONV_V_BIAS = 7, EXL_CUDA_CONV_O_BIAS = 8,
  EXL_CUDA_CONV_GATE = 9, EXL_CUDA_CONV_UP = 10, EXL_CUDA_CONV_DOWN = 11, EXL_CUDA_CONV_SLOTS = 12
};
typedef struct exl_cuda_block_shape {
  int hidden, heads, kv_heads, head_dim, intermediate;
  float norm_eps;
  const float* rope_inv_freq;  /* [head_dim / 2] host */
  float rope_mscale, rope_position_divisor;
  int rope_style;              /* 0 neox, 1 gptj */
} exl_cuda_block_shape;

/* The norm weights and eps of test_exl2_matmul's mode 4 (RMSNorm folded into the input gather). */
static inline float exl_cuda_test_norm_weight(int i) { return 0.5f + 0.125f * (float)(i % 7); }
#define EXL_CUDA_TEST_NORM_EPS 1e-5f

typedef struct exl_cuda_api {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* build_id;   /* must equal the engine's EXL_CUDA_BUILD_ID */

  const char* (*last_error)(void);
  void (*set_log)(exl_cuda_log_fn fn, void* user);

  int (*device_count)(int* count);
  int (*device_info)(int device, exl_cuda_device_info* out);

  int (*create)(const exl_cuda_options* options, exl_cuda_backend** out);
  void (*destroy)(exl_cuda_backend* b);
  int (*load)(exl_cuda_backend* b, const exl_cuda_model* model, exl_cuda_progress_fn progress, void* user);
  /* cache_type: K format | V format << 8 (1 fp16, 2 fp8, 3 q8, 4 q4; V 0: as K). */
  int (*allocate_cache)(exl_cuda_backend* b, int max_seq_len, int cache_type);
  /* logits_mode 0 none, 1 last, 2 all; logits: [rows, vocab] fp32 host buffer (may be pinned). */
  int (*forward)(exl_cuda_backend* b, const int32_t* ids, int n, int logits_mode, float* logits);
  int (*truncate_cache)(exl_cuda_backend* b, int length);
  int (*cache_length)(exl_cuda_backend* b, int* length);
  int (*memory)(exl_cuda_backend* b, exl_cuda_memory* out);

  /* ---- single-kernel entry points on host arrays (GPU tests and benches) ---- */
  /* y[m, n] (fp32) = x[m, k] (fp16) . W; mode 0: fused kernel, 1: reconstruct + cuBLAS, 2: three
     fused layers (mean), 3: x = fp16(silu(x)), 4: x = fp16(rmsnorm(x) * exl_cuda_test_norm_weight),
     5: as 4 pre-permuted (rms_norm in stored row order), 6: as 0 with the output columns folded
     through a permutation (un-permuted on return), 7: as 3 with the input in stored row order. */
  int (*test_exl2_matmul)(int device, const exl_cuda_exl2* w, const uint16_t* x, int m, float* y, int mode);
  /* out [k, n_pad] fp16 in original row order, bit-exact with spec §2.7. */
  int (*test_exl2_reconstruct)(int device, const exl_cuda_exl2* w, uint16_t* out);
  /* y[rows, dim] fp16 = rms_norm(x fp32) * w fp16 */
  int (*test_rms_norm)(int device, const float* x, int rows, int dim, const uint16_t* w, float eps, uint16_t* y);
  /* x [tokens, heads, head_dim] fp32 rotated in place at positions past..past+tokens-1 */
  int (*test_rope)(int device, float* x, int tokens, int heads, int head_dim, int past, const float* inv_freq,
                   float mscale, float position_divisor, int style);
  /* q [t, nh, d] fp16; k/v cache [ctx, nkv, d] fp16 with ctx = past + t; out [t, nh, d] fp32 */
  int (*test_attention)(int device, const uint16_t* q, const uint16_t* k_cache, const uint16_t* v_cache, int t,
                        int past, int nh, int nkv, int d, float scale, float* out);
  /* out fp16 = silu(gate fp32) * up fp32 */
  int (*test_silu_mul)(int device, const float* gate, const float* up, int64_t n, uint16_t* out);
  /* out [n, dim] fp32 = table fp16 [vocab, dim] rows ids */
  int (*test_embedding)(int device, const uint16_t* table, int vocab, int dim, const int32_t* ids, int n,
                        float* out);
  /* y[m, n] fp32 = x[m, k] fp16 . w[n, k]^T fp16 (cuBLAS) */
  int (*test_dense_linear)(int device, const uint16_t* x, int m, int k, const uint16_t* w, int n, float* y);
  /* Device-to-device copy bandwidth in GB/s (bytes read + written), median of repeats. */
  int (*bench_copy_bandwidth)(int device, uint64_t bytes, double* gbs);
  /* Times one EXL2 matmul (fused kernel) with median of repeats: microseconds. */
  int (*bench_exl2_matmul)(int device, const exl_cuda_exl2* w, int m, int mode, int repeats, double* us);
  /* Times forward of n tokens (decode when n = 1) on a loaded backend with cache length `past`;
   * median microseconds per call (the cache is truncated back between repeats). */
  int (*bench_forward)(exl_cuda_backend* b, int n, int past, int repeats, double* us);

  /* ---- ABI 2: device sampling ---- */
  /* forward of n ids (n = 1: the decode step, inside the decode graph) and sampling of the last
   * position on the device; only `out` comes back. */
  int (*forward_sample)(exl_cuda_backend* b, const int32_t* ids, int n, const exl_cuda_sampler* s,
                        exl_cuda_sample_result* out);
  /* The device sampler on one host row of logits [vocab]; `dist` (optional, [vocab]) receives the
   * kept, normalised distribution (0 for dropped ids; one-hot for greedy). */
  int (*test_sample)(int device, const float* logits, int vocab, const exl_cuda_sampler* s,
                     exl_cuda_sample_result* out, float* dist);

  /* ---- ABI 3: quantized KV cache ---- */
  /* K and V stores of formats kfmt / vfmt (allocate_cache's codes) for ctx = past + t positions:
   * rows [0, past) of k, v (fp16 [ctx, nkv, d]) written in chunks of the given sizes (summing to
   * past), then one layer's attention step for q [t, nh, d] over them (the chunk's own K/V
   * staged), which also writes rows [past, ctx). out [t, nh, d] fp32 (from the fp16 output); the
   * stores' bytes after the step: k_data/v_data (ctx * nkv * d elements in the format's bytes; a
   * Q8/Q4 store's capacity rounded up to whole 512-element blocks, ceil(ctx / q_block) * q_block),
   * k_scales/v_scales fp16 (elements / 32; Q8/Q4 only; may be null).
   * page_table (ABI 4; may be null: contiguous stores): the stores are paged (pages of 256
   * positions, store_pages of them), position p in store page page_table[p / 256]; the bytes
   * returned are still in position order (the entry reads the pages back through the table). */
  int (*test_kv_cache)(int device, int kfmt, int vfmt, const uint16_t* q, const uint16_t* k, const uint16_t* v, int t,
                       int past, int nh, int nkv, int d, float scale, const int* chunks, int n_chunks, float* out,
                       uint8_t* k_data, uint16_t* k_scales, uint8_t* v_data, uint16_t* v_scales,
                       const int32_t* page_table, int store_pages);

  /* ---- ABI 4: paged KV cache ---- */
  /* A cache of `pages` pages of 256 positions per layer (pages * 256 >= max_seq_len), one active
   * sequence of up to max_seq_len positions read through its page table; the table starts as the
   * identity. cache_type as allocate_cache. */
  int (*allocate_paged_cache)(exl_cuda_backend* b, int max_seq_len, int pages, int cache_type);
  /* The active sequence's page table, entries 0 .. count-1 (table NULL: unchanged), and its length
   * (the next forward's first position; a paged cache may grow it, e.g. after attaching a cached
   * prefix). The engine keeps the table (exl::PageCache) and calls this before each forward. */
  int (*set_cache_pages)(exl_cuda_backend* b, const int32_t* table, int count, int length);
  /* Copy on write: every layer's K and V (and scales) of page src into page dst. */
  int (*copy_cache_page)(exl_cuda_backend* b, int dst, int src);

  /* ---- ABI 5: the converter's per-block math (engine/src/convert/block_math.h) ---- */
  int (*convert_create)(int device, uint64_t vram_limit, exl_cuda_convert** out);
  void (*convert_destroy)(exl_cuda_convert* c);
  /* Uploads one tensor of the current block (count 0: absent, e.g. no bias). */
  int (*convert_set_tensor)(exl_cuda_convert* c, int slot, const float* data, int64_t count);
  /* Runs the attention (attention != 0) or MLP block on x [tokens, hidden] fp32 (host, updated in
   * place, residual included; positions 0 .. tokens-1). collect: adds x^T x of the block's
   * post-norm input to Hessian 0 and of o_proj's / down_proj's input to Hessian 1. */
  int (*convert_run_block)(exl_cuda_convert* c, const exl_cuda_block_shape* s, int attention, float* x, int tokens,
                           int collect);
  /* Hessian slot 0..2: zeros [k, k]; += x^T x for host x [tokens, k]. */
  int (*convert_hessian_reset)(exl_cuda_convert* c, int slot, int k);
  int (*convert_hessian_add)(exl_cuda_convert* c, int slot, const float* x, int tokens);
  /* H *= scale, then as exl::prepare_hessian: act-order permutation (perm [k] out), damping 0.12 x
   * mean diagonal (added up to 10 times), upper factor U of the inverse (H^-1 = U^T U).
   * EXL_CUDA_ERR_INVALID when it stays not positive definite. */
  int (*convert_hessian_prepare)(exl_cuda_convert* c, int slot, double scale, int32_t* perm);
  /* The prepared U [k, k] fp32 row-major (tests). */
  int (*convert_hessian_factor)(exl_cuda_convert* c, int slot, float* u);
  /* GPTQ of w [n, k] fp32 (HF layout) with a prepared Hessian, as exl::gptq_quantize: groups in
   * stored order (bits[g], rows[g] <= 128); rtn: no error feedback. Out: q [k, n_pad] (stored
   * rows), codes [groups, n_pad] (0..15), scale_max [groups] fp16, dequant [n, k] fp32. */
  int (*convert_gptq)(exl_cuda_convert* c, int slot, const float* w, int n, int k, int groups, const int* bits,
                      const int* rows, int rtn, uint8_t* q, uint8_t* codes, uint16_t* scale_max, float* dequant);

  /* ---- ABI 6: the measurement pass on the device ---- */
  /* Candidate `id` (any int; replaced if present): GPTQ as convert_gptq of the weight now in
   * `weight_slot` ([n, k]) with the prepared Hessian `hessian_slot`; only its dequantized weight is
   * kept, as fp16 in device memory (the values are fp16-exact). EXL_CUDA_ERR_OUT_OF_MEMORY when the
   * store would pass the VRAM budget: nothing is kept then and the caller may hold it elsewhere. */
  int (*convert_candidate)(exl_cuda_convert* c, int id, int hessian_slot, int weight_slot, int n, int k, int groups,
                           const int* bits, const int* rows);
  /* Puts candidate `id` into `weight_slot` in place of the weight there. */
  int (*convert_candidate_use)(exl_cuda_convert* c, int weight_slot, int id);
  /* Frees every candidate. */
  int (*convert_candidates_clear)(exl_cuda_convert* c);
  /* Calibration row `row` of the measurement: which 0 = the block's input, 1 = its reference output,
   * each [tokens, hidden] fp32 (host); rows are kept in device memory until rows is called with
   * another count. */
  int (*convert_rows)(exl_cuda_convert* c, int which, int row, int rows, const float* x, int tokens, int hidden);
  /* Runs the loaded block on every input row and returns the mean over rows of the relative Frobenius
   * error against the reference rows (outputs clamped to +-65504), as the CPU path computes it. */
  int (*convert_evaluate)(exl_cuda_convert* c, const exl_cuda_block_shape* s, int attention, double* mean_rfn);

  /* ---- ABI 7: layer segments on several devices ---- */
  /* `next` (whose layers follow `prev`'s) reads its input, the residual stream after prev's last
   * layer, from `prev` at the start of each step: a device-to-device copy (peer to peer between two
   * GPUs, peer access enabled where the devices allow it), or, with via_host != 0 or without peer
   * access, through a pinned host buffer prev writes at the end of its step. The caller runs prev's
   * forward before next's (each returns with its stream finished). Both must be loaded; both stay
   * alive while linked; it discards both backends' captured graphs. */
  int (*link_segments)(exl_cuda_backend* prev, exl_cuda_backend* next, int via_host);
  /* The FP16 tensor-core rate: an m x n x k cuBLAS GEMM (fp16 in, fp32 accumulation), median of
   * repeats, in TFLOP/s (exl bench's prefill bound). */
  int (*bench_fp16_gemm)(int device, int m, int n, int k, double* tflops);

  /* ---- ABI 8: exact accumulators (int64 fixed point, 32 fraction bits) ---- */
  /* x [rows, n] fp32 converted into exact accumulators (as the decode step's first kernel does),
   * bias [n] added (as an o/down bias is; null: none), read back as fp32 into out [rows, n]. */
  int (*test_exact_acc)(int device, const float* x, int rows, int n, const float* bias, float* out);

  /* ---- ABI 9: EXL3 ---- */
  /* y [m, out] fp32 = the EXL3 linear of x [m, in] fp16 (in, out: w's k and n unless given > 0:
   * fewer features than padded). mode 0: the GEMV path (rows in launches of up to 8); 1: W-hat
   * reconstructed and cuBLAS; 2: as 0, added to y's incoming values. */
  int (*test_exl3_matmul)(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features,
                          int out_features, float* y, int mode);
  /* W-hat [k, n] fp16 row-major. */
  int (*test_exl3_reconstruct)(int device, const exl_cuda_exl3* w, uint16_t* out);
  /* The input transform alone: xr [m, k] fp16 = had128(fp16(x * suh)), x [m, in_features]. */
  int (*test_exl3_input)(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features, uint16_t* xr);

  /* ---- ABI 10: model families ---- */
  /* Attention-logit soft-capping and a sliding window for the following test_attention and
   * test_kv_cache calls on this thread (0, 0: none). head_dim may then also be 16 or 32. */
  int (*test_attention_options)(float softcap, int window);
  /* One family kernel on host arrays (fp32 unless said): op 0: y fp16 [rows, dim] = rms_norm(x) * w with
   * w fp32 [dim]; 1: x [rows, dim] normed in place (y unused); 2: y fp32 [rows, dim] += rms_norm(x) * w;
   * 3: y fp16 [rows * dim] = gelu_tanh(x) * x2; 4: x *= param in place (rows * dim elements);
   * 5: x = param * tanh(x / param) in place; 6: RoPE of x [rows = tokens, dim = heads * head_dim] in
   * place at positions 0.. with inv_freq x2 [rotary_half] (param: mscale), head_dim = aux, rotary_half =
   * aux2, NeoX style (the rotated values rounded to fp16 as the cache write does). */
  int (*test_family_op)(int device, int op, float* x, const float* x2, const float* w, int rows, int dim, float eps,
                        float param, int aux, int aux2, void* y);

  /* ---- ABI 11: the EXL3 decode GEMV over a group of layers ---- */
  /* One row through count (1 .. 3) EXL3 layers w[e] (in_features inputs, w[e].n outputs each, one
   * after another in y) from the input of `mode`: 0 fp16(x); 1 RMSNorm of x with fp16 weights norm_w
   * (uint16 bits); 2 the same with fp32 weights; 3 fp16(silu(x) * x2); 4 fp16(gelu_tanh(x) * x2).
   * flags bit 0: the grouped launch that forms its input itself (exl3_gemv_group), else the separate
   * launches (the norm or activation kernel, then a fused GEMV per layer); bit 1: the output
   * transforms folded into the GEMV (tickets). */
  int (*test_exl3_group)(int device, const exl_cuda_exl3* w, int count, int mode, const float* x, const float* x2,
                         const void* norm_w, int in_features, float eps, int flags, float* y);
} exl_cuda_api;

typedef const exl_cuda_api* (*exl_cuda_get_api_fn)(uint32_t abi_version);

/* Returns NULL when abi_version differs from the module's. */
#if defined(_WIN32)
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
const exl_cuda_api* exl_cuda_get_api(uint32_t abi_version);

#ifdef __cplusplus
}
#endif
#endif

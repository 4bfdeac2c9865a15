// Launchers of the exl_cuda kernels (one family per .cu file). All take a stream, enqueue work
// and check the launch; none allocates or synchronises. fp16 tensors are __half.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "exl/kernels/exl3_splits.h"

namespace exl::cuda {

// One EXL2 layer on the device, in the backend's repacked layout (exl2_gemv.cu explains it).
// units[u] describes stored rows 32u .. 32u+31 (one group, one bit width): x = first packed
// row of the unit (sum of the widths before it), y = group << 4 | bits.
struct Exl2Device {
  const std::uint32_t* q_weight = nullptr;  // repacked [tiles][q_rows * 64]: exl2_unit_words
  const std::uint32_t* q_scale = nullptr;   // repacked [tiles][groups][8] (4-bit codes): exl2_scale_words
  const __half* q_scale_max = nullptr;      // [groups]
  const std::int32_t* perm = nullptr;       // [k]
  const int2* units = nullptr;              // [k / 32]
  int k = 0, n = 0, n_pad = 0, groups = 0;
  int tiles = 0;                            // 64-column tiles: exl2_tiles(n_pad)
  int max_bits = 8;                         // widest unit (<= 4: the GEMV's narrow ring)
  int q_rows = 0;                           // packed rows: the widths of all units summed
};
// Tile-contiguous layout: the units of one 64-column tile lie back to back (unit u of width B
// at packed row x = units[u].x is 64 * B words at exl2_unit_words(w, x, tile)), and so do the
// tile's group scales, so a tile's run of units or groups is one contiguous range.
__host__ __device__ inline std::size_t exl2_unit_words(const Exl2Device& w, int x, int tile) {
  return (std::size_t(tile) * std::size_t(w.q_rows) + std::size_t(x)) * 64u;
}
__host__ __device__ inline std::size_t exl2_scale_words(const Exl2Device& w, int group, int tile) {
  return (std::size_t(tile) * std::size_t(w.groups) + std::size_t(group)) * 8u;
}

// ---- exl2_gemv.cu: y[m, n] += x[m, k] . W for small m (tensor cores, split K) ----
int exl2_tiles(int n_pad);
// On-disk q_weight [q_rows, n_pad] (device memory) -> repacked layout (w.units/tiles set).
// col_map (device, [n_pad], or null): repacked column c takes on-disk column col_map[c] (a
// permutation of the output features, used to fold the next layer's input permutation).
void exl2_repack(const Exl2Device& w, const std::uint32_t* src, std::uint32_t* dst, cudaStream_t s,
                 const std::int32_t* col_map = nullptr);
// The general form: up to 3 layers with the same input in one launch; the input is gathered
// through each layer's permutation from one of three sources (mode):
//   k_x_half: x fp16 [m, ldx];
//   k_x_norm: RMSNorm folded in: fp16(xf[r, i] * w[i] / rms(xf[r, :])), xf the fp32 residual;
//   k_x_silu: fp16(silu(xf[r, i]) * up[r, i]) (the MLP's down projection).
// Before the outputs are touched the launch also writes the init regions (zero or a repeated
// bias): the decode step uses this to clear the next layer's accumulators instead of memsets.
// With PDL the launch may start before the previous kernel ends (launch.cuh).
enum GemvMode : int { k_x_half = 0, k_x_norm = 1, k_x_silu = 2 };
constexpr int k_gemv_max_layers = 3;
constexpr int k_gemv_max_inits = 6;
// Exact accumulators: an output may be kept as int64 fixed point with 32 fraction bits
// (exact_acc.cuh). The blocks of a split add their sums into it with integer atomics, which are
// exact, so the result does not depend on the order in which blocks finish (it repeats bit for bit)
// without the ordered split-K pass (a ticket and a second read of the partials per tile). Values
// are clamped to +-2^25 first (beyond fp16's range, which every reader converts to anyway).
// An fp32 input that may come as an exact accumulator instead (q set: int64 fixed point).
struct AccIn {
  const float* f = nullptr;
  const long long* q = nullptr;
};
struct GemvInput {
  const __half* x = nullptr;       // k_x_half
  const float* xf = nullptr;       // k_x_norm: residual; k_x_silu: gate
  const float* up = nullptr;       // k_x_silu
  const long long* xq = nullptr;   // instead of xf: k_x_norm's residual, k_x_silu's gate as exact accumulators
  const long long* upq = nullptr;  // instead of up
  const __half* norm_w = nullptr;  // k_x_norm
  float eps = 0.0f;
  int ldx = 0;
  // The input already comes in the layers' stored row order (all layers of the call share one
  // permutation): rms_norm with the permutation wrote it, or the permutation was folded into
  // the producing layer's columns (exl2_repack's column map) and the layer's own is the identity.
  // Each block then reads its rows as one contiguous range instead of gathering through perm.
  bool permuted = false;
};
struct GemvInit {
  float* dst = nullptr;
  const float* bias = nullptr;  // dst[i] = bias[i % n], or 0 without bias
  int count = 0;
  int n = 1;
  long long* dstq = nullptr;    // instead of dst: an exact accumulator (the bias in fixed point)
};
// Split-K partials for a deterministic reduction: each block of a split writes its sums to
// `partials`, and the last block of a tile to finish (a ticket per tile in `counters`, which
// that block sets back to zero) adds them to y in split order. Every owner (one per backend,
// one per test) allocates its own at load: k_gemv_partial_floats floats and k_gemv_counters
// counters, the counters zeroed (GemvScratch, cuda_backend.h). Without one (null partials) the
// blocks add into y with fp32 atomics (order-dependent last bits): the backend does that only
// with exl_cuda_options.fast_reduce.
constexpr std::size_t k_gemv_partial_floats = std::size_t(4) << 20;  // 16 MiB
constexpr int k_gemv_counters = 1 << 16;                             // 256 KiB
struct GemvWorkspace {
  float* partials = nullptr;
  unsigned* counters = nullptr;
};
struct GemvCall {
  const Exl2Device* w[k_gemv_max_layers] = {};
  float* y[k_gemv_max_layers] = {};
  long long* yq[k_gemv_max_layers] = {};  // an exact accumulator instead of y (add_exact)
  int ldy[k_gemv_max_layers] = {};
  int count = 0;
  GemvMode mode = k_x_half;
  GemvInput in;
  GemvInit init[k_gemv_max_inits];
  int inits = 0;
  int m = 0;
  int sm_count = 0;
  GemvWorkspace ws;
  // Appends a layer: out[m, ld] += input . layer (a fourth one makes the launch refuse the call).
  GemvCall& add(const Exl2Device& layer, float* out, int ld) {
    if (count < k_gemv_max_layers) { w[count] = &layer; y[count] = out; ldy[count] = ld; }
    ++count;
    return *this;
  }
  // The same into an exact accumulator (int64 fixed point, initialised by the caller).
  GemvCall& add_exact(const Exl2Device& layer, long long* out, int ld) {
    if (count < k_gemv_max_layers) { w[count] = &layer; yq[count] = out; ldy[count] = ld; }
    ++count;
    return *this;
  }
};
void exl2_gemv_run(const GemvCall& c, cudaStream_t s, int units_per_block = 0);
// x fp16 [m, ldx] in original feature order; y fp32 [m, ldy], added to (the caller initialises it:
// zero, bias or the residual); with a workspace in a fixed order, so results repeat bit for bit. `units_per_block` 0 = automatic.
void exl2_gemv(const Exl2Device& w, const __half* x, int m, int ldx, float* y, int ldy, int sm_count,
               const GemvWorkspace& ws, int units_per_block, cudaStream_t s);
// Up to 3 layers with the same input (and k) in one launch: y[i] += x . W[i].
void exl2_gemv_multi(const Exl2Device* const* w, float* const* y, const int* ldy, int count, const __half* x, int m,
                     int ldx, int sm_count, const GemvWorkspace& ws, cudaStream_t s);
// y += fp16(silu(gate) * up) . W, gate/up fp32 [m, ld_in] (the MLP's down projection).
void exl2_gemv_silu(const Exl2Device& w, const float* gate, const float* up, int m, int ld_in, float* y, int ldy,
                    int sm_count, const GemvWorkspace& ws, cudaStream_t s);
// out [k, n_pad] fp16 in original row order, bit-exact (spec §2.7).
void exl2_reconstruct(const Exl2Device& w, __half* out, cudaStream_t s);

// ---- exl3.cu: EXL3 linears, y = had128(had128(x * suh) . W-hat) * svh (docs/EXL3.md) ----
// One EXL3 layer on the device: the trellis as stored ([k/16][n/16][8 * bits2] uint16, 4-byte
// aligned), suh/svh fp16. k, n: in/out features padded to multiples of 128.
struct Exl3Device {
  const std::uint16_t* trellis = nullptr;
  const __half* suh = nullptr;
  const __half* svh = nullptr;
  int k = 0, n = 0;
  int bits2 = 0;     // twice the bit rate (2..16; 3, 5, 7 with mul1)
  int codebook = 0;  // 0 3INST, 1 MCG, 2 MUL1
};
constexpr int k_exl3_gemv_rows = 8;    // rows per GEMV launch
constexpr int k_exl3_max_splits = 8;   // K splits of the GEMV
// K splits for a GEMV of w on sm_count multiprocessors (1 .. k_exl3_max_splits).
int exl3_gemv_splits(const Exl3Device& w, int sm_count);
// xr [rows, w.k] fp16 = had128(fp16(x * suh)) (bit-exact with exl3_had128_fp16_ref); x fp16
// [rows, ldx] with in_features columns (the padding reads as zero).
void exl3_input_transform(const Exl3Device& w, const __half* x, int rows, int ldx, int in_features, __half* xr,
                          cudaStream_t s);
// z [splits][rows][w.n] fp32: the K-split partial products xr . W-hat (tiles decoded on the fly),
// rows <= k_exl3_gemv_rows.
void exl3_gemv_partials(const Exl3Device& w, const __half* xr, int rows, float* z, int splits, cudaStream_t s);
// One row with the input transform inside (x: fp16, in_features wide, not yet transformed): the
// same partials in z as exl3_input_transform + exl3_gemv_partials. Only where exl3_gemv_fusable.
bool exl3_gemv_fusable(const Exl3Device& w, int splits);
// With tickets (w.n / 128 zeroed counters, left zeroed), the output transform too, into y as
// exl3_output_transform would (the block that completes a 128-column group applies it).
void exl3_gemv_fused(const Exl3Device& w, const __half* x, int in_features, float* z, int splits, cudaStream_t s,
                     unsigned* tickets = nullptr, int out_features = 0, float* y = nullptr, int ldy = 0,
                     bool overwrite = true);
// The input of a one-row GEMV that forms it itself (exl3_gemv_group), bit for bit what the separate
// launch would have written in fp16: x as it is; RMSNorm of the fp32 row xf with fp16 weights
// (rms_norm's four-wide arithmetic: in_features a multiple of 4, xf 16-byte aligned) or fp32 ones
// (rms_norm_w32's); silu(g) * u or gelu_tanh(g) * u of the fp32 rows xf (g) and up (silu_mul's,
// gelu_tanh_mul's).
struct Exl3Input {
  enum Mode { half_x = 0, rms_norm16 = 1, rms_norm32 = 2, silu = 3, gelu = 4 };
  int mode = half_x;
  const __half* x = nullptr;
  const float* xf = nullptr;
  const float* up = nullptr;
  const __half* norm16 = nullptr;
  const float* norm32 = nullptr;
  float eps = 0.0f;
  int in_features = 0;
};
bool exl3_input_ok(const Exl3Input& in);
// One layer of a group: its partials z ([splits][w.n]) and, with tickets, its output (as
// exl3_gemv_fused's).
struct Exl3Target {
  const Exl3Device* w = nullptr;
  float* z = nullptr;
  int splits = 1;
  unsigned* tickets = nullptr;
  int out_features = 0;
  float* y = nullptr;
  int ldy = 0;
  bool overwrite = true;
};
constexpr int k_exl3_group_max = 3;
// Whether these one-row GEMVs can share a launch: each fusable, the same rate and codebook.
bool exl3_gemv_groupable(const Exl3Target* t, int count);
// Up to k_exl3_group_max one-row GEMVs over one input in one launch (decode's q, k, v or gate, up,
// the input's norm or activation formed inside): each as exl3_gemv_fused would compute it.
void exl3_gemv_group(const Exl3Target* t, int count, const Exl3Input& in, cudaStream_t s);
// The output transforms of one row of each layer of a group run without tickets (z, splits,
// out_features, y, ldy, overwrite of each target), one launch.
void exl3_output_group(const Exl3Target* t, int count, cudaStream_t s);
// y[r, c] = (or +=, !overwrite) had128(sum over splits of z[., r, :])[c] * svh[c], c < out_features.
void exl3_output_transform(const Exl3Device& w, const float* z, int splits, int rows, int out_features, float* y, int ldy,
                           bool overwrite, cudaStream_t s);
// W-hat^T [w.n, w.k] fp16 row-major (k contiguous), bit-exact with exl3_reconstruct_ref's W-hat.
void exl3_reconstruct_t(const Exl3Device& w, __half* out, cudaStream_t s);

// ---- rms_norm.cu: y[r, :] fp16 = x[r, :] fp32 * w / sqrt(mean(x^2) + eps) ----
// With perm (device, [dim]) the output comes in that order: y[r, i] = norm(x)[r, perm[i]] (the
// stored row order of the EXL2 layers that read it, GemvInput::permuted).
void rms_norm(const float* x, int rows, int dim, const __half* w, float eps, __half* y, cudaStream_t s,
              const std::int32_t* perm = nullptr);
// The same from a residual that may be kept as exact accumulators (AccIn).
void rms_norm(AccIn x, int rows, int dim, const __half* w, float eps, __half* y, cudaStream_t s,
              const std::int32_t* perm = nullptr);

// ---- paged KV cache ----
// A layer's K/V stores hold pages of k_kv_page_tokens positions; a sequence's page table (device
// int32 [pages of the context]) gives the physical page of each logical one, so position p lives
// in store row table[p / 256] * 256 + p % 256. Every launcher below that reads or writes a
// store takes the table (`pages`; null: one contiguous sequence, row = position). A Q8/Q4 block
// (kv_q_block_tokens, at most 8 positions for rows of 64-element multiples) never crosses a page.
constexpr int k_kv_page_shift = 8;
constexpr int k_kv_page_tokens = 1 << k_kv_page_shift;

// ---- rope.cu ----
// RoPE of the step's positions *past + i (i < t): cs fp32x2 [t, d/2] holds (cos, sin) * mscale.
struct RopeParams {
  const float* inv_freq = nullptr;  // [d/2]
  float mscale = 1.0f, divisor = 1.0f;
  int d = 0;
  const int* past = nullptr;        // device memory (a captured graph reads the current length)
  float2* cs = nullptr;             // the table, [t, d/2]
};
void rope_table(const RopeParams& r, int t, cudaStream_t s);
// Rotates q (fp32 [t, nh, d]) and k (fp32 [t, nkv, d]) with the table, writes q as fp16
// [t, nh, d], and k, v (v fp32 [t, nkv, d]) as fp16 into the caches [cap, nkv, d] at rows
// *past + i (through the page table `pages` when set), or, for a cache marked staged (a quantized
// store: kv_cache.cu), into its staging [t, nkv, d] at rows i.
void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float2* cs, int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s,
                    bool k_staged = false, bool v_staged = false, const int* pages = nullptr);
// Test form: rotates x fp32 [t, heads, d] in place with the table (made by rope_table).
void rope_inplace(float* x, int t, int heads, int d, const float2* cs, int style, cudaStream_t s);

// ---- kv_cache.cu: quantized KV cache (FP8; Q8/Q4 blocks of 512, Hadamard-rotated) ----
// Formats of a layer's K or V store (exl_cuda allocate_cache's codes).
enum KvFmt : int { kv_f16 = 1, kv_fp8 = 2, kv_q8 = 3, kv_q4 = 4 };
inline bool kv_rotated(int fmt) { return fmt == kv_q8 || fmt == kv_q4; }
// Smallest token count whose rows fill whole 512-element blocks (ExLlamaV2's q_block).
int kv_q_block_tokens(int row);
// Bytes of a store's elements (scales: elements / 32 fp16 more for Q8/Q4).
std::size_t kv_store_data_bytes(int fmt, std::size_t elements);
// What attention reads of one store: positions < *past from data (+ scales), positions past ..
// past + t - 1 (the chunk being processed) from stage, fp16 [t, nkv * d] (rotated for Q8/Q4).
struct KvSource {
  int fmt = kv_f16;
  const void* data = nullptr;
  const __half* scales = nullptr;
  const __half* stage = nullptr;
  const int* pages = nullptr;  // page table (null: contiguous); attention() sets it from the shape's
};
// A store to write the staged rows into (kv_finish).
struct KvStoreWrite {
  int fmt = kv_f16;
  void* data = nullptr;
  __half* scales = nullptr;
  const __half* stage = nullptr;
  const int* pages = nullptr;  // page table (null: contiguous)
};
// kv_prepare's rotations and the stores' writes of kv_finish folded into rope_qkv_cache (the same
// arithmetic, bit for bit): q rotated (a rotated K), the staged rows of a rotated store rotated,
// and the staged rows written into a store (data set) — FP8 always, Q8/Q4 only where
// kv_fold_store allows (a write that covers whole blocks: nothing older to re-quantize).
struct RopeKvFold {
  bool rotate_q = false, rotate_k = false, rotate_v = false;
  KvStoreWrite k, v;  // data null: not written here (pages: the same table as rope_qkv_cache's)
};
void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float2* cs, int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s,
                    bool k_staged, bool v_staged, const int* pages, const RopeKvFold& fold);
// The same reading q, k and v as exact accumulators where their AccIn says so.
// rotary_half (0: d / 2): partial rotary, only pairs i < rotary_half rotate (elements (i, i + rotary_half)
// NeoX, (2 i, 2 i + 1) GPT-J), the rest are converted unchanged; the table keeps its stride d / 2.
void rope_qkv_cache(AccIn q, AccIn k, AccIn v, int t, int nh, int nkv, int d, const int* past, const float2* cs,
                    int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s, bool k_staged,
                    bool v_staged, const int* pages, const RopeKvFold& f, int rotary_half = 0);
// Whether rope_qkv_cache may write a chunk's rows into a store of format fmt with `row` elements
// per position (nkv * d): FP8, or Q8/Q4 when every 512-element block holds one position's elements.
bool kv_fold_store(int fmt, int row);
// Before attention, for Q8/Q4 stores: rotates q fp16 [t, nh, d] in place when K is rotated, and
// the staged rows (k_stage, v_stage fp16 [t, nkv, d]) of each rotated store. d % 64 == 0.
void kv_prepare(__half* q, int t, int nh, int nkv, int d, int kfmt, __half* k_stage, int vfmt, __half* v_stage,
                cudaStream_t s);
// After attention: rotates the output out fp16 [t, nh, d] back when V is rotated (null: none),
// then writes the staged rows into the fp8/Q8/Q4 stores at positions *past .. *past + t - 1
// (f16 stores, or null data, are skipped: the caller wrote those directly).
// With out_pos (device [nh * d]) the rotated-back output goes to dst instead, feature f of a row
// at dst[row, out_pos[f]] (the o projection's stored row order; see attention's out_pos).
void kv_finish(__half* out, int t, int nh, int nkv, int d, const KvStoreWrite& k, const KvStoreWrite& v, const int* past,
               cudaStream_t s, __half* dst = nullptr, const std::int32_t* out_pos = nullptr);

// ---- attention.cu: causal GQA attention over an fp16 cache, split over the keys ----
struct AttentionShape {
  int t = 0, nh = 0, nkv = 0, d = 0;
  float scale = 0.0f;
  int split_len = 256;  // keys per split (multiple of 64); t < 32: unused (chosen on the device)
  int splits = 1;       // grid size over keys; t >= 32: splits * split_len >= past + t
  const int* pages = nullptr;  // the sequence's page table (null: contiguous stores)
  // A rotated V in the decode form (t < 32, fp16 out): the merge rotates each head's output back
  // (kv_finish's rotation, the same arithmetic) before writing it, so no kv_finish pass is needed.
  bool rotate_out = false;
  // One token over FP16 stores (attention_folds_rope): RoPE and the new position's cache row done
  // by the attention kernel itself from the projections' outputs, so no rope_qkv_cache launch
  // precedes it (q is then unused).
  const struct DecodeRope* rope = nullptr;
  // The model families (ABI 10): attention-logit soft-capping (scores = softcap * tanh(scores /
  // softcap) after the scale; 0: none) and a sliding window (query position p sees keys
  // p - window + 1 .. p; 0: all). Either, or head_dim 16 or 32, takes the general form
  // (attention_general).
  float softcap = 0.0f;
  int window = 0;
};
// Whether attention() takes the general form for this shape: attn_decode_q_kernel for every
// query token (any t, fp16 or quantized stores, paged or not, head_dim 16, 32, 64, 128 or 256) and
// the decode merge; no RoPE folded in, no attention_decode_step.
bool attention_general(const AttentionShape& a);
// What the decode attention needs to rotate q and write the new key and value itself: the
// projections' outputs (q [nh, d], k and v [nkv, d], fp32 or exact), the step's cos/sin table
// [d / 2] and the RoPE style (rope_qkv_cache's). The block whose split holds the new position
// writes its KV head's rotated K row and V row into the stores at row *past (through the page
// table) before it loads its first tile; every block rotates its query heads' rows as it loads
// them. rope_rotate's arithmetic: the same fp16 values as rope_qkv_cache.
struct DecodeRope {
  AccIn q, k, v;
  const float2* cs = nullptr;
  int style = 0;
};
// Whether attention() folds RoPE in for this shape (one token, head_dim 64 or 128, the tensor-core
// decode kernel, no output rotation); the stores must be FP16 without staging.
bool attention_folds_rope(const AttentionShape& a);
// Whether attention() takes the decode form (per-token splits and a merge) for this shape.
bool attention_decode_form(const AttentionShape& a);
// t < 32 (decode, speculative verification, short chunks): for each query token, `splits` CTAs
// per KV head share that token's keys evenly. t >= 32: tensor-core flash attention (head_dim 64,
// 128) or the general split kernel.
// q fp16 [t, nh, d]; out fp16 [t, nh, d] (or fp32 when out32 != null). part: scratch of
// attention_partial_floats(shape) floats. out_pos (device [nh * d], t < 32 only): the fp16 output
// is scattered, feature f of a row to out[row, out_pos[f]], i.e. in the stored row order of the
// o projection that reads it (GemvInput::permuted).
std::size_t attention_partial_floats(const AttentionShape& a);
// Chunks below 32 tokens with head_dim 64 or 128: the tensor-core decode kernel (default) or the
// CUDA-core one (false: EXL_CUDA_ATTN_MMA=0, for comparison). Returns the previous choice.
bool set_decode_mma(bool on);
bool decode_mma();
// Q4 values (the Q4 and Q6 cache types) on tensor cores: dequantized straight into the mma
// fragments (default) or into an fp16 tile in shared memory first (false: EXL_CUDA_ATTN_REG=0, and
// always for Q8, where the tile form measured faster).
bool set_decode_reg(bool on);
bool decode_reg();
// Decode attention CTAs that fit one multiprocessor at once for head_dim d and the cache formats
// (the tensor-core kernels' shared memory and registers; 4 for the CUDA-core kernels).
int decode_ctas_per_sm(int d, int kfmt, int vfmt);
void attention(const AttentionShape& a, const __half* q, const __half* k_cache, const __half* v_cache,
               const int* past, float* part, __half* out, float* out32, cudaStream_t s,
               const std::int32_t* out_pos = nullptr);
// The same over stores of any format (KvSource): an fp16 store without staging takes the form
// above; otherwise positions < *past come from the stores, dequantized on load (Q8/Q4: in the
// rotated domain, so q must be rotated and the output rotated back: kv_prepare, kv_finish, and
// `scale` must include the rotation's 1/32), and the chunk's own positions from the staging.
void attention(const AttentionShape& a, const __half* q, const KvSource& k, const KvSource& v, const int* past,
               float* part, __half* out, float* out32, cudaStream_t s, const std::int32_t* out_pos = nullptr);
// The decode step (t = 1) in one launch: RoPE of q and of the new key (rope_qkv_cache's
// arithmetic), the K/V cache write at row *past by the split that holds that key, attention
// over the splits, and the merge done by the last split of each KV head to finish (a ticket in
// `counters`, which that split sets back to zero; the splits merge in split order, so the result
// does not depend on which finishes last).
struct DecodeStepInputs {
  const float* q = nullptr;       // fp32 [nh, d], before RoPE
  const float* k = nullptr;       // fp32 [nkv, d], before RoPE
  const float* v = nullptr;       // fp32 [nkv, d]
  const float2* cs = nullptr;     // (cos, sin) of the position [d/2] (rope_table)
  int style = 0;                  // as rope_qkv_cache
  unsigned* counters = nullptr;   // [nkv], zero
};
void attention_decode_step(const AttentionShape& a, const DecodeStepInputs& in, __half* k_cache, __half* v_cache,
                           const int* past, float* part, __half* out, float* out32, cudaStream_t s);

// ---- family.cu: the model families' row and element-wise kernels (fp32 in, as the CPU backend) ----
// RMSNorm of x fp32 [rows, dim] with fp32 weights w [dim]: y = x * w / sqrt(mean(x^2) + eps) into
// any of y16 (fp16 [rows, dim]), y32 (fp32, may be x: in place) and add (add += y: a sandwich norm's
// residual add).
void rms_norm_w32(const float* x, int rows, int dim, const float* w, float eps, __half* y16, float* y32, float* add,
                  cudaStream_t s);
// out fp16 = gelu_tanh(gate) * up (PyTorch's gelu(approximate="tanh")), gate/up fp32 [n].
void gelu_tanh_mul(const float* gate, const float* up, std::int64_t n, __half* out, cudaStream_t s);
// x *= c (embeddings times sqrt(hidden)).
void scale_inplace(float* x, std::int64_t n, float c, cudaStream_t s);
// x = cap * tanh(x / cap), cap > 0 (final-logit soft-capping).
void softcap_inplace(float* x, std::int64_t n, float cap, cudaStream_t s);

// ---- elementwise.cu ----
void silu_mul(const float* gate, const float* up, std::int64_t n, __half* out, cudaStream_t s);
void silu_mul(AccIn gate, AccIn up, std::int64_t n, __half* out, cudaStream_t s);
void embedding(const __half* table, int dim, const std::int32_t* ids, int n, float* out, cudaStream_t s);
// The decode step's first kernel: the embedding rows, the RoPE table of the step's positions
// (rope.cs, when set) and up to 6 init regions (the first layer's accumulators). table null: no
// gather (a layer segment after the first, whose input is already in `out`).
// outq: the rows go into that exact accumulator instead (without a table: `out`'s rows converted).
void embedding_step(const __half* table, int dim, const std::int32_t* ids, int n, float* out, const RopeParams& rope,
                    const GemvInit* inits, int ninits, cudaStream_t s, long long* outq = nullptr);
// y[r, :n] = bias (or 0) when !accumulate; y[r, :n] += bias when accumulate (no-op without bias).
void prepare_output(float* y, int rows, int n, int ldy, const float* bias, bool accumulate, cudaStream_t s);
// y[r, :n] += bias for an exact accumulator (no-op without bias).
void add_bias_exact(long long* y, int rows, int n, int ldy, const float* bias, cudaStream_t s);
// out[i] = q[i] read back as fp32 (an exact accumulator handed to fp32 readers).
void exact_to_float(const long long* q, std::int64_t n, float* out, cudaStream_t s);
void fill_random_u32(std::uint32_t* p, std::size_t n, std::uint64_t seed, cudaStream_t s);
// Uniform fp16 in [lo, hi).
void fill_random_half(__half* p, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t s);

}  // namespace exl::cuda

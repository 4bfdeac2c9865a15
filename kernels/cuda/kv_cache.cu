// Quantized KV cache on the device (spec §6.2, §6.3): FP8 (E5M2, round to nearest even) and the
// Q8/Q4 blocks of ExLlamaV2 — 512 consecutive elements of a layer's token-major K (or V) array,
// a 32-point Walsh-Hadamard rotation of the even and of the odd elements of each 64-element
// chunk, one fp16 scale per 32 rotated elements. The stores are byte for byte those of the CPU
// backend's KvStore (kernels/reference/kv_quant_ref.cpp): the same fp16 roundings, in the same
// order.
//
// A layer with a quantized cache runs attention in the rotated domain. The rotation H (entries
// +-1) is symmetric with H H = 32 I, so for a stored key k' = H k, q . k = (H q) . k' / 32, and an
// output o = sum p v = H (sum p v') / 32. kv_prepare therefore rotates q (fp32 arithmetic, one
// rounding) and the chunk's new K/V rows (fp16 staging, the reference's staged rounding, so the
// store's quantization input is the reference's); attention dequantizes elementwise, (v - zero) *
// scale, never rotating back; kv_finish rotates the output back and writes the staged rows into
// the stores, re-quantizing any block the write only partly covers from its current contents as
// the reference does.
// The per-lane arithmetic (rotation stages, quantization of a pair) is in kv_quant.cuh.
#include <algorithm>
#include <string>

#include "cuda_check.h"
#include "kernels.h"
#include "kv_pages.cuh"
#include "kv_quant.cuh"
#include "launch.cuh"

namespace exl::cuda {
namespace {

// Rotates rows of fp16 data in place, 64-element chunks (one warp each). ROUND: the staged fp16
// rounding of the reference (K/V rows for a quantized store); else fp32 then one rounding,
// times `mul` (q: 1; the attention output: 1/32).
// With dst and pos (rows of `row` elements): element e of x goes to dst[e / row * row + pos[e % row]].
template <bool ROUND>
__device__ void rotate_chunks(__half* x, std::size_t chunks, float mul, std::size_t first_warp, std::size_t warps,
                              __half* dst = nullptr, const std::int32_t* pos = nullptr, int row = 0) {
  const int lane = threadIdx.x & 31;
  for (std::size_t c = first_warp; c < chunks; c += warps) {
    __half2* p = reinterpret_cast<__half2*>(x + c * 64) + lane;
    const float2 v = __half22float2(*p);
    float x0 = v.x, x1 = v.y;
    wht_pair<ROUND>(x0, x1, lane);
    if (dst) {
      const std::size_t e = c * 64 + 2 * std::size_t(lane);
      const std::size_t r = e / std::size_t(row) * std::size_t(row);
      const int f = int(e - r);
      dst[r + std::size_t(__ldg(pos + f))] = __float2half_rn(x0 * mul);
      dst[r + std::size_t(__ldg(pos + f + 1))] = __float2half_rn(x1 * mul);
    } else {
      *p = __floats2half2_rn(x0 * mul, x1 * mul);
    }
  }
}

__global__ void kv_prepare_kernel(__half* q, std::size_t q_chunks, __half* ks, std::size_t k_chunks, __half* vs,
                                  std::size_t v_chunks) {
  pdl_trigger();
  pdl_wait();
  const std::size_t warp = (std::size_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::size_t warps = (std::size_t(gridDim.x) * blockDim.x) >> 5;
  if (q) rotate_chunks<false>(q, q_chunks, 1.0f, warp, warps);
  if (ks) rotate_chunks<true>(ks, k_chunks, 1.0f, warp, warps);
  if (vs) rotate_chunks<true>(vs, v_chunks, 1.0f, warp, warps);
}

// One store's write of the staged rows [past, past + t): fp8 elementwise; q8/q4 whole 512-element
// blocks (one 256-thread CUDA block each) over the q_block-aligned token range. Blocks are
// counted in logical positions; a block lies within one page, so its store elements are
// contiguous too (pe).
__device__ void store_write(const KvStoreWrite& w, int past, int t, int row, int qb) {
  if (w.fmt == kv_fp8) {
    const std::size_t n = std::size_t(t) * row;
    std::uint8_t* d = static_cast<std::uint8_t*>(w.data);
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
      const std::size_t r = i / std::size_t(row);
      d[std::size_t(kv_row(w.pages, past + int(r))) * row + (i - r * row)] = fp8_from_half_dev(__half_as_ushort(w.stage[i]));
    }
    return;
  }
  const int bits = w.fmt == kv_q4 ? 4 : 8;
  const int zero = bits == 4 ? 8 : 128;
  const std::size_t t0 = std::size_t(past / qb) * qb, t1 = std::size_t((past + t + qb - 1) / qb) * qb;
  const std::size_t b0 = t0 * row / 512, b1 = t1 * row / 512;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  std::uint8_t* data = static_cast<std::uint8_t*>(w.data);
  for (std::size_t b = b0 + blockIdx.x; b < b1; b += gridDim.x) {
    const std::size_t e = b * 512 + std::size_t(warp) * 64 + 2 * lane;  // this lane's even element (logical)
    const std::size_t tok = e / std::size_t(row);
    const std::size_t pe = std::size_t(kv_row(w.pages, int(tok))) * row + (e - tok * row);  // its store index
    float x0, x1;
    if (tok >= std::size_t(past) && tok < std::size_t(past + t)) {  // new: staged, already rotated
      const float2 v = __half22float2(reinterpret_cast<const __half2*>(w.stage)[(e - std::size_t(past) * row) / 2]);
      x0 = v.x; x1 = v.y;
    } else {  // old contents, as the reference re-reads them: dequantize, rotate back, rotate again
      const float s = __half2float(w.scales[pe / 32]);
      int v0, v1;
      if (bits == 4) { const std::uint8_t by = data[pe / 2]; v0 = by & 15; v1 = by >> 4; }
      else { v0 = data[pe]; v1 = data[pe + 1]; }
      x0 = round_h(float(v0 - zero) * s);
      x1 = round_h(float(v1 - zero) * s);
      wht_pair<true>(x0, x1, lane);
      x0 = round_h(x0 * (1.0f / 32.0f));
      x1 = round_h(x1 * (1.0f / 32.0f));
      wht_pair<true>(x0, x1, lane);
    }
    const KvQuantPair qp = kv_quant_pair(x0, x1, bits);
    __syncwarp();  // every lane has read its old values before any lane overwrites the block
    kv_put_pair(data, w.scales, pe, qp, bits, lane);
  }
}

__global__ void kv_finish_kernel(__half* out, std::size_t out_chunks, KvStoreWrite k, KvStoreWrite v, const int* past_p,
                                 int t, int row, int qb, __half* dst, const std::int32_t* out_pos, int out_row) {
  pdl_trigger();
  pdl_wait();
  if (out) {
    const std::size_t warp = (std::size_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    rotate_chunks<false>(out, out_chunks, 1.0f / 32.0f, warp, (std::size_t(gridDim.x) * blockDim.x) >> 5, dst, out_pos,
                         out_row);
  }
  const int past = *past_p;
  if (k.data) store_write(k, past, t, row, qb);
  if (v.data) store_write(v, past, t, row, qb);
}

}  // namespace

int kv_q_block_tokens(int row) {
  int q = 1;
  while ((std::int64_t(q) * row) % 512 != 0) ++q;
  return q;
}

bool kv_fold_store(int fmt, int row) { return fmt == kv_fp8 || (kv_rotated(fmt) && kv_q_block_tokens(row) == 1); }

std::size_t kv_store_data_bytes(int fmt, std::size_t elements) {
  switch (fmt) {
    case kv_f16: return elements * 2;
    case kv_fp8:
    case kv_q8: return elements;
    case kv_q4: return elements / 2;
    default: throw_status(EXL_CUDA_ERR_INVALID, "KV cache: unknown format " + std::to_string(fmt));
  }
}

void kv_prepare(__half* q, int t, int nh, int nkv, int d, int kfmt, __half* k_stage, int vfmt, __half* v_stage,
                cudaStream_t s) {
  if (t <= 0 || (!kv_rotated(kfmt) && !kv_rotated(vfmt))) return;
  if (d % 64 != 0) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "KV cache: Q4/Q8 need head_dim a multiple of 64");
  const std::size_t qc = kv_rotated(kfmt) && q ? std::size_t(t) * nh * d / 64 : 0;
  const std::size_t kc = kv_rotated(kfmt) ? std::size_t(t) * nkv * d / 64 : 0;
  const std::size_t vc = kv_rotated(vfmt) ? std::size_t(t) * nkv * d / 64 : 0;
  const std::size_t most = std::max({qc, kc, vc});
  const int blocks = int(std::min<std::size_t>(1024, (most + 7) / 8));
  launch(kv_prepare_kernel, dim3(blocks), dim3(256), 0, s, qc ? q : nullptr, qc, kc ? k_stage : nullptr, kc,
         vc ? v_stage : nullptr, vc);
  EXL_CUDA_CHECK_LAUNCH();
}

void kv_finish(__half* out, int t, int nh, int nkv, int d, const KvStoreWrite& k, const KvStoreWrite& v, const int* past,
               cudaStream_t s, __half* dst, const std::int32_t* out_pos) {
  if (t <= 0) return;
  if (!dst != !out_pos || (out_pos && (!out || !kv_rotated(v.fmt))))
    throw_status(EXL_CUDA_ERR_INVALID, "kv_finish: a scattered output needs dst, out_pos and a rotated V");
  const int row = nkv * d;
  const int qb = kv_q_block_tokens(row);
  const bool rot_out = kv_rotated(v.fmt) && out;
  const std::size_t oc = rot_out ? std::size_t(t) * nh * d / 64 : 0;
  // Blocks: the most 512-element blocks a q_block-aligned range around t tokens can span, or the
  // fp8 elements / 256, or the output's chunks / 8.
  const std::size_t qblocks = (std::size_t(t) + 2 * std::size_t(qb)) * row / 512 + 1;
  const std::size_t f8 = (std::size_t(t) * row + 255) / 256;
  std::size_t blocks = std::max<std::size_t>((oc + 7) / 8, 1);
  for (const KvStoreWrite* w : {&k, &v}) {
    if (!w->data || w->fmt == kv_f16) continue;
    if (!w->stage) throw_status(EXL_CUDA_ERR_INVALID, "KV cache: a store write without staged rows");
    if (kv_rotated(w->fmt) && !w->scales) throw_status(EXL_CUDA_ERR_INVALID, "KV cache: a Q4/Q8 store without scales");
    blocks = std::max(blocks, w->fmt == kv_fp8 ? f8 : qblocks);
  }
  const KvStoreWrite none{};
  launch(kv_finish_kernel, dim3(unsigned(std::min<std::size_t>(blocks, 65535))), dim3(256), 0, s,
         rot_out ? out : nullptr, oc, k.fmt == kv_f16 ? none : k, v.fmt == kv_f16 ? none : v, past, t, row, qb, dst,
         out_pos, nh * d);
  EXL_CUDA_CHECK_LAUNCH();
}

}  // namespace exl::cuda

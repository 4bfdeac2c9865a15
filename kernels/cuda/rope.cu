// Rotary position embedding (spec §4.4) fused with the KV-cache write.
// The cos/sin pairs of the step's positions are computed once per forward (rope_table, or by
// the embedding kernel in the backend) into a table fp32x2 [t, d/2]; every layer reads it.
// Memory layout: q fp32 [t, nh, d], k/v fp32 [t, nkv, d] (the projections' outputs); q_out fp16
// [t, nh, d]; caches fp16 [capacity, nkv, d], token-major (rows through the page table when
// paged), keys stored after RoPE.
// Launch shape: grid = (t, heads / H), block = (d/2, H) threads: H heads of a token a block (the
// plain form; the folded one H = 1), one rotation pair per thread; the KV-head threads also
// convert that head's v row.
// Precision: cos/sin as rope_common.cuh, rotation in fp32. The current
// length `past` is read from device memory so a captured decode graph stays valid.
#include <algorithm>

#include "cuda_check.h"
#include "exact_acc.cuh"
#include "kernels.h"
#include "kv_pages.cuh"
#include "kv_quant.cuh"
#include "launch.cuh"
#include "rope_common.cuh"

namespace exl::cuda {

namespace {

// rope_qkv's start: the PDL trigger and wait, then its thread (grid = (t, heads / H), block =
// (d / 2, H) threads): token t at position pos (after the current length *past), head h (the q
// heads, then the KV heads; past the last one in a block of the last group), rotation pair i of
// elements (a, b) and its cos/sin c.
struct RopeThread {
  int t, h, i, pos, a, b;
  float2 c;
};
// Partial rotary (rot_half > 0, less than d / 2): pairs i < rot_half rotate as in a head of
// 2 rot_half elements; thread i >= rot_half passes elements 2 i and 2 i + 1 through (a rotation by
// cos 1, sin 0, which rope_rotate leaves exact).
__device__ __forceinline__ RopeThread rope_thread(const int* past, int d, const float2* __restrict__ cs, int style,
                                                  int rot_half) {
  pdl_trigger();
  pdl_wait();
  RopeThread r;
  r.t = blockIdx.x; r.h = blockIdx.y * blockDim.y + threadIdx.y; r.i = threadIdx.x;
  r.pos = *past + r.t;
  const int half = d / 2;
  if (rot_half > 0 && rot_half < half && r.i >= rot_half) {
    r.c = make_float2(1.0f, 0.0f);
    r.a = 2 * r.i;
    r.b = 2 * r.i + 1;
    return r;
  }
  r.c = cs[r.t * half + r.i];
  rope_pair(rot_half > 0 && rot_half < half ? 2 * rot_half : d, r.i, style, r.a, r.b);
  return r;
}

// A KV head's rows for rope_qkv's thread r (head h - nh): o in the projections' k and v, co in the
// caches (through the page table), ko and vo where the K and V rows go (the staged rows at o).
struct RopeKvRows {
  std::size_t o, co, ko, vo;
};
__device__ __forceinline__ RopeKvRows rope_kv_rows(const RopeThread& r, int nh, int nkv, int d, const int* pages,
                                                   bool k_staged, bool v_staged) {
  const int kh = r.h - nh;
  const std::size_t o = (std::size_t(r.t) * nkv + kh) * d;
  const std::size_t co = (std::size_t(kv_row(pages, r.pos)) * nkv + kh) * d;
  return {o, co, k_staged ? o : co, v_staged ? o : co};
}

__global__ void rope_table_kernel(RopeParams r, int t) {
  pdl_trigger();
  pdl_wait();
  const int half = r.d / 2;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < t * half; j += gridDim.x * blockDim.x)
    r.cs[j] = rope_cos_sin(*r.past + j / half, r, j % half);
}

__global__ void rope_qkv_kernel(AccIn q, AccIn k, AccIn v,
                                int nh, int nkv, int d, const int* past, const float2* __restrict__ cs, int style,
                                __half* __restrict__ q_out, __half* __restrict__ k_cache, __half* __restrict__ v_cache,
                                bool k_staged, bool v_staged, const int* __restrict__ pages, int rot_half) {
  const RopeThread r = rope_thread(past, d, cs, style, rot_half);  // after the PDL wait
  if (r.h >= nh + nkv) return;  // past the last head of the block's group
  if (r.h < nh) {
    const std::size_t o = (std::size_t(r.t) * nh + r.h) * d;
    rope_rotate(acc_at(q, o + r.a), acc_at(q, o + r.b), r.c, q_out[o + r.a], q_out[o + r.b]);
    return;
  }
  const RopeKvRows kv = rope_kv_rows(r, nh, nkv, d, pages, k_staged, v_staged);
  rope_kv_pair(k, v, kv.o, r.i, r.a, r.b, r.c, k_cache + kv.ko, v_cache + kv.vo);
}

// The same with the quantized stores' work folded in (RopeKvFold): a kernel of its own, so the
// plain form stays exactly as it was. Launched without PDL: when this kernel served the plain form
// too and started early after the q/k/v GEMV, `exl selftest --filter 'cuda_model.paged*'` run
// alone gave differing paged and contiguous logits (without PDL for it: equal); the cause is not
// found yet (bench/RESULTS.md, session 9).
__global__ void rope_qkv_fold_kernel(AccIn q, AccIn k, AccIn v,
                                int nh, int nkv, int d, const int* past, const float2* __restrict__ cs, int style,
                                __half* __restrict__ q_out, __half* __restrict__ k_cache, __half* __restrict__ v_cache,
                                bool k_staged, bool v_staged, const int* __restrict__ pages, RopeKvFold f,
                                int rot_half) {
  EXL_SHARED_ARRAY(float, xs, [256]);  // a rotated head row (RoPE's pairs are not the rotation's)
  const RopeThread r = rope_thread(past, d, cs, style, rot_half);  // after the PDL wait
  const int lane = r.i & 31;
  if (r.h < nh) {
    const std::size_t o = (std::size_t(r.t) * nh + r.h) * d;
    __half ya, yb;
    rope_rotate(acc_at(q, o + r.a), acc_at(q, o + r.b), r.c, ya, yb);
    if (!f.rotate_q) {
      q_out[o + r.a] = ya;
      q_out[o + r.b] = yb;
      return;
    }
    // kv_prepare's rotation of q: from its fp16 values, fp32 butterflies, one rounding. Lane l of
    // warp w holds elements 64 w + 2 l and + 1, i.e. 2 i and 2 i + 1.
    xs[r.a] = __half2float(ya);
    xs[r.b] = __half2float(yb);
    __syncthreads();
    float x0 = xs[2 * r.i], x1 = xs[2 * r.i + 1];
    wht_pair<false>(x0, x1, lane);
    *reinterpret_cast<__half2*>(q_out + o + 2 * r.i) = __floats2half2_rn(x0, x1);
    return;
  }
  const RopeKvRows kv = rope_kv_rows(r, nh, nkv, d, pages, k_staged, v_staged);
  __half ka, kb;
  rope_rotate(acc_at(k, kv.o + r.a), acc_at(k, kv.o + r.b), r.c, ka, kb);
  float v0 = __half2float(__float2half_rn(acc_at(v, kv.o + 2 * r.i)));
  float v1 = __half2float(__float2half_rn(acc_at(v, kv.o + 2 * r.i + 1)));
  // The staged rows of a rotated store: rotated with the reference's staged rounding (kv_prepare).
  if (f.rotate_v) wht_pair<true>(v0, v1, lane);
  v_cache[kv.vo + 2 * r.i] = __float2half_rn(v0);
  v_cache[kv.vo + 2 * r.i + 1] = __float2half_rn(v1);
  float k0 = 0.0f, k1 = 0.0f;  // the staged K row's elements 2 i, 2 i + 1 (rotated or written to a store)
  if (f.rotate_k || f.k.data) {
    xs[r.a] = __half2float(ka);
    xs[r.b] = __half2float(kb);
    __syncthreads();
    k0 = xs[2 * r.i];
    k1 = xs[2 * r.i + 1];
    if (f.rotate_k) wht_pair<true>(k0, k1, lane);
    k_cache[kv.ko + 2 * r.i] = __float2half_rn(k0);
    k_cache[kv.ko + 2 * r.i + 1] = __float2half_rn(k1);
  } else {
    k_cache[kv.ko + r.a] = ka;
    k_cache[kv.ko + r.b] = kb;
  }
  // The stores' writes (kv_finish's, where the caller folded them here): FP8 elementwise, Q8/Q4
  // per 32 elements of the rotated row.
  auto put = [&](const KvStoreWrite& w, float x0, float x1) {
    if (w.fmt == kv_fp8) {
      std::uint8_t* d8 = static_cast<std::uint8_t*>(w.data);
      d8[kv.co + 2 * r.i] = fp8_from_half_dev(__half_as_ushort(__float2half_rn(x0)));
      d8[kv.co + 2 * r.i + 1] = fp8_from_half_dev(__half_as_ushort(__float2half_rn(x1)));
      return;
    }
    const int bits = w.fmt == kv_q4 ? 4 : 8;
    kv_put_pair(static_cast<std::uint8_t*>(w.data), w.scales, kv.co + 2 * r.i, kv_quant_pair(x0, x1, bits), bits,
                lane);
  };
  if (f.k.data) put(f.k, k0, k1);
  if (f.v.data) put(f.v, v0, v1);
}

__global__ void rope_inplace_kernel(float* x, int heads, int d, const float2* __restrict__ cs, int style) {
  pdl_trigger();
  pdl_wait();
  const int t = blockIdx.x;
  const int half = d / 2;
  for (int j = threadIdx.x; j < heads * half; j += blockDim.x) {
    const int h = j / half, i = j - h * half;
    const float2 c = cs[t * half + i];
    int a, b;
    rope_pair(d, i, style, a, b);
    float* v = x + (std::size_t(t) * heads + h) * d;
    const float xa = v[a], xb = v[b];
    v[a] = xa * c.x - xb * c.y;
    v[b] = xb * c.x + xa * c.y;
  }
}

}  // namespace

void rope_table(const RopeParams& r, int t, cudaStream_t s) {
  if (t <= 0) return;
  const int n = t * (r.d / 2);
  launch(rope_table_kernel, dim3(std::min(1024, (n + 127) / 128)), dim3(128), 0, s, r, t);
}

void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float2* cs, int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s,
                    bool k_staged, bool v_staged, const int* pages) {
  rope_qkv_cache(q, k, v, t, nh, nkv, d, past, cs, style, q_out, k_cache, v_cache, s, k_staged, v_staged, pages,
                 RopeKvFold{});
}

void rope_qkv_cache(const float* q, const float* k, const float* v, int t, int nh, int nkv, int d, const int* past,
                    const float2* cs, int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s,
                    bool k_staged, bool v_staged, const int* pages, const RopeKvFold& f) {
  rope_qkv_cache(AccIn{q}, AccIn{k}, AccIn{v}, t, nh, nkv, d, past, cs, style, q_out, k_cache, v_cache, s, k_staged,
                 v_staged, pages, f);
}

void rope_qkv_cache(AccIn q, AccIn k, AccIn v, int t, int nh, int nkv, int d, const int* past, const float2* cs,
                    int style, __half* q_out, __half* k_cache, __half* v_cache, cudaStream_t s, bool k_staged,
                    bool v_staged, const int* pages, const RopeKvFold& f, int rotary_half) {
  if (t <= 0) return;
  if (rotary_half < 0 || rotary_half > d / 2) throw_status(EXL_CUDA_ERR_INVALID, "rope: rotary_half outside 0..d/2");
  if (d % 2 != 0 || d > 512) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "rope: head_dim " + std::to_string(d));
  const bool rot = f.rotate_q || f.rotate_k || f.rotate_v;
  if ((rot && d % 64 != 0) || ((rot || f.k.data) && d > 256))
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "rope: rotated KV stores need head_dim a multiple of 64, at most 256");
  if ((f.rotate_k && !k_staged) || (f.rotate_v && !v_staged) || (f.k.data && !k_staged) || (f.v.data && !v_staged))
    throw_status(EXL_CUDA_ERR_INVALID, "rope: rotated rows and store writes need staged rows");
  for (const KvStoreWrite* w : {&f.k, &f.v}) {
    if (!w->data) continue;
    if (w->fmt != kv_fp8 && !(kv_rotated(w->fmt) && w->scales && d % 64 == 0))
      throw_status(EXL_CUDA_ERR_INVALID, "rope: a store write needs FP8, or Q8/Q4 with scales and head_dim % 64 == 0");
    if (kv_rotated(w->fmt) != (w == &f.k ? f.rotate_k : f.rotate_v))
      throw_status(EXL_CUDA_ERR_INVALID, "rope: a Q8/Q4 store write needs its rows rotated");
    if (w->pages != pages) throw_status(EXL_CUDA_ERR_INVALID, "rope: a store write through another page table");
  }
  if (!rot && !f.k.data && !f.v.data) {
    // Several heads a block (blockDim.y), so a block has about 256 threads.
    const int hpb = std::max(1, std::min(nh + nkv, 512 / d));
    launch(rope_qkv_kernel, dim3(t, (nh + nkv + hpb - 1) / hpb), dim3(d / 2, hpb), 0, s, q, k, v, nh, nkv, d, past, cs,
           style, q_out, k_cache, v_cache, k_staged, v_staged, pages, rotary_half);
    return;
  }
  launch_ex(false, rope_qkv_fold_kernel, dim3(t, nh + nkv), dim3(d / 2), 0, s, q, k, v, nh, nkv, d, past, cs, style,
            q_out, k_cache, v_cache, k_staged, v_staged, pages, f, rotary_half);
}

void rope_inplace(float* x, int t, int heads, int d, const float2* cs, int style, cudaStream_t s) {
  if (t <= 0) return;
  launch(rope_inplace_kernel, dim3(t), dim3(128), 0, s, x, heads, d, cs, style);
}

}  // namespace exl::cuda

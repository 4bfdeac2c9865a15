// Causal grouped-query attention over the fp16 KV cache (spec §4.5), split over the keys
// ("flash decoding"): one kernel computes, for each (token, KV head, key split), the partial
// softmax state of all query heads sharing that KV head (so each K/V row is read once for
// the whole group), a second kernel merges the splits.
// Memory layout: q fp16 [t, nh, d]; caches fp16 [capacity, nkv, d]; partials fp32
// [t, nh, splits, d + 2] (unnormalised output, running max, running sum); out fp16 [t, nh, d].
// Launch shape: split kernel grid = (splits, nkv, t), 128 threads = 4 warps; keys in tiles of
// 64: warps compute q.k (lanes split d), then online softmax per head, then threads own output
// dimensions and accumulate p.V. Merge kernel grid = (nh, t), d threads.
// Precision: fp32 scores, softmax and accumulation; fp16 only in the inputs and the output.
// Decode (t = 1) and short chunks (t < 32: speculative verification, a prompt's last few tokens)
// have their own pair of kernels: grid = (S, nkv, t) with S fixed at capture time and
// the split length chosen on the device from the current length (ceil(len / S) rounded up to
// 16, at least 64 keys), so splits share the keys evenly and a captured graph stays valid. 4 warps per
// split; a key is read by D/16 lanes (16 dims each, two 16-byte loads of K and of V), each lane
// keeps the online-softmax state of its key slot for the G query heads of the KV head; slots
// are merged with shuffles, warps through shared memory. The decode merge recomputes the
// split length the same way.
// The backend's decode step uses the fused form (attention_decode_step): the split kernel also
// applies RoPE to q (fp32 in) and, in the split that holds the new key, rotates that key and
// writes the K/V row (then a barrier, so the block's loads see it); each split takes a ticket
// after writing its partials, and the last of a KV head merges that head group's splits in
// split order. That removes the separate RoPE and merge launches from every layer.
// Chunks of 32 tokens or more with head_dim 64 or 128 take the tensor-core prefill kernel
// (flash attention, attn_prefill_kernel below: no partials, no merge).
// Masking is causal bottom-right: query i (position past + i) sees keys 0 .. past + i. `past`
// is device memory; splits beyond the current length exit early (graph-friendly).
#include <algorithm>
#include <cfloat>
#include <type_traits>

#include "async_copy.cuh"
#include "attn_common.cuh"
#include "cuda_check.h"
#include "kernels.h"
#include "kv_pages.cuh"
#include "kv_quant.cuh"
#include "launch.cuh"
#include "rope_common.cuh"

namespace exl::cuda {
namespace {

constexpr int k_tile = 64;
constexpr int k_max_group = 8;

template <int D>
__global__ void __launch_bounds__(128) attn_split_kernel(const __half* __restrict__ q, const __half* __restrict__ kc,
                                                         const __half* __restrict__ vc, const int* past, int nh,
                                                         int nkv, float scale, int split_len, int splits,
                                                         float* __restrict__ part, const int* __restrict__ pages) {
  pdl_trigger();
  pdl_wait();
  constexpr int EPL = D / 32;       // elements per lane in q.k
  constexpr int DPT = (D + 127) / 128;  // output dims per thread
  EXL_SHARED_ARRAY(float, qs, [k_max_group][D]);
  EXL_SHARED_ARRAY(float, sc, [k_max_group][k_tile]);
  EXL_SHARED_ARRAY(float, m_s, [k_max_group]);
  EXL_SHARED_ARRAY(float, l_s, [k_max_group]);
  EXL_SHARED_ARRAY(float, a_s, [k_max_group]);
  const int split = blockIdx.x, kh = blockIdx.y, t = blockIdx.z;
  const int g = nh / nkv;
  const int kv_len = *past + t + 1;
  const int k0 = split * split_len;
  const int k1 = min(k0 + split_len, kv_len);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  auto part_at = [&](int hh) { return part + ((std::size_t(t) * nh + kh * g + hh) * splits + split) * (D + 2); };
  if (k0 >= k1) {
    if (threadIdx.x < g) { part_at(threadIdx.x)[D] = -FLT_MAX; part_at(threadIdx.x)[D + 1] = 0.0f; }
    return;
  }
  for (int i = threadIdx.x; i < g * D; i += 128) {
    const int hh = i / D, e = i - hh * D;
    qs[hh][e] = __half2float(q[(std::size_t(t) * nh + kh * g + hh) * D + e]) * scale;
  }
  if (threadIdx.x < k_max_group) { m_s[threadIdx.x] = -FLT_MAX; l_s[threadIdx.x] = 0.0f; }
  float acc[k_max_group][DPT];
#pragma unroll
  for (int hh = 0; hh < k_max_group; ++hh)
#pragma unroll
    for (int j = 0; j < DPT; ++j) acc[hh][j] = 0.0f;
  __syncthreads();

  for (int tile0 = k0; tile0 < k1; tile0 += k_tile) {
    const int nkeys = min(k_tile, k1 - tile0);
    for (int j = warp; j < k_tile; j += 4) {
      const int key = tile0 + j;
      float kv[EPL];
      if (j < nkeys) {
        const __half* kr = kc + (std::size_t(kv_row(pages, key)) * nkv + kh) * D + lane * EPL;
#pragma unroll
        for (int e = 0; e < EPL; ++e) kv[e] = __half2float(kr[e]);
      }
      for (int hh = 0; hh < g; ++hh) {
        float dot = 0.0f;
        if (j < nkeys) {
#pragma unroll
          for (int e = 0; e < EPL; ++e) dot = fmaf(qs[hh][lane * EPL + e], kv[e], dot);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
        if (lane == 0) sc[hh][j] = j < nkeys ? dot : -FLT_MAX;
      }
    }
    __syncthreads();
    for (int hh = warp; hh < g; hh += 4) {
      const float s0 = sc[hh][lane], s1 = sc[hh][lane + 32];
      float mx = fmaxf(s0, s1);
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
      const float m_old = m_s[hh];
      const float m_new = fmaxf(m_old, mx);
      const float p0 = lane < nkeys ? __expf(s0 - m_new) : 0.0f;
      const float p1 = lane + 32 < nkeys ? __expf(s1 - m_new) : 0.0f;
      sc[hh][lane] = p0;
      sc[hh][lane + 32] = p1;
      float sum = p0 + p1;
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
      __syncwarp();  // every lane has read m_s[hh] before lane 0 replaces it
      if (lane == 0) {
        const float alpha = __expf(m_old - m_new);
        a_s[hh] = alpha;
        l_s[hh] = l_s[hh] * alpha + sum;
        m_s[hh] = m_new;
      }
    }
    __syncthreads();
#pragma unroll
    for (int dd = 0; dd < DPT; ++dd) {
      const int dim = threadIdx.x + dd * 128;
      if (dim >= D) break;
      for (int hh = 0; hh < g; ++hh) acc[hh][dd] *= a_s[hh];
      for (int j = 0; j < nkeys; ++j) {
        const float v = __half2float(vc[(std::size_t(kv_row(pages, tile0 + j)) * nkv + kh) * D + dim]);
#pragma unroll
        for (int hh = 0; hh < k_max_group; ++hh)
          if (hh < g) acc[hh][dd] = fmaf(sc[hh][j], v, acc[hh][dd]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int dd = 0; dd < DPT; ++dd) {
    const int dim = threadIdx.x + dd * 128;
    if (dim >= D) break;
    for (int hh = 0; hh < g; ++hh) part_at(hh)[dim] = acc[hh][dd];
  }
  if (threadIdx.x < g) { part_at(threadIdx.x)[D] = m_s[threadIdx.x]; part_at(threadIdx.x)[D + 1] = l_s[threadIdx.x]; }
}

__global__ void attn_merge_kernel(const float* __restrict__ part, const int* past, int nh, int d, int split_len,
                                  int splits, __half* __restrict__ out, float* __restrict__ out32) {
  pdl_trigger();
  pdl_wait();
  const int h = blockIdx.x, t = blockIdx.y;
  const int kv_len = *past + t + 1;
  const int ns = min(splits, (kv_len + split_len - 1) / split_len);
  const float* p = part + (std::size_t(t) * nh + h) * splits * (d + 2);
  float mx = -FLT_MAX;
  for (int s = 0; s < ns; ++s) mx = fmaxf(mx, p[s * (d + 2) + d]);
  float l = 0.0f;
  for (int s = 0; s < ns; ++s) l += p[s * (d + 2) + d + 1] * __expf(p[s * (d + 2) + d] - mx);
  const float inv = 1.0f / l;
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float o = 0.0f;
    for (int s = 0; s < ns; ++s) o += p[s * (d + 2) + e] * __expf(p[s * (d + 2) + d] - mx);
    o *= inv;
    const std::size_t idx = (std::size_t(t) * nh + h) * d + e;
    if (out) out[idx] = __float2half_rn(o);
    if (out32) out32[idx] = o;
  }
}

// ---- prefill on tensor cores (flash attention) ----
// For chunks of k_prefill_min_t tokens or more, head_dim 64 or 128: grid (ceil(t / 128), nh), 4
// warps; warp w owns query rows q0 + 32w .. q0 + 32w + 31 of head h (two m-tiles of 16, so every
// K and V fragment read from shared memory feeds two mma), the block's rows in shared memory (A
// fragments by ldmatrix). Keys in tiles of 64, K and V tiles double-buffered in shared memory
// (cp.async; rows padded by 16 bytes so fragment loads are free of bank conflicts). S = Q K^T with
// mma.m16n8k16 (fp16 in, fp32 out; K fragments by ldmatrix), online softmax in fp32 (base 2, the
// scale in the exponent's FFMA), P rounded to fp16 as the A operand of P V (the S accumulator
// layout is the A fragment layout), V fragments by ldmatrix.trans. The row sums use
// the rounded P, so the output is an exact convex combination of the V rows with weights
// within 2^-11 (relative) of the softmax. Tiles no row of a warp can see are skipped; the mask is
// applied only on tiles that cross a row's limit (key <= past + row).
constexpr int k_prefill_min_t = 32;
constexpr int k_pf_warp_tiles = 2;                            // m-tiles of 16 query rows a warp
constexpr int k_pf_rows = 4 * 16 * k_pf_warp_tiles, k_pf_keys = 64;  // a block's query rows, keys a tile

template <int D>
constexpr std::size_t prefill_smem_bytes() {
  return (std::size_t(2) * 2 * k_pf_keys + k_pf_rows) * (D + 8) * sizeof(__half);
}

// Eight stored elements (their bytes at p: 8 for fp8/q8, 4 for q4; scale sc for q8/q4) as fp16
// (the rotated domain for Q8/Q4: (v - zero) * scale, no rotation). Q8/Q4 without int-to-float
// conversions: a value v under 2^11 ORed into 0x6400 is the fp16 1024 + v, minus 1024 + zero is
// v - zero exactly, and one fp16 multiply rounds (v - zero) * scale once, as fp32 arithmetic and
// one rounding to fp16 would.
template <int F>
__device__ __forceinline__ uint4 kv_dq8(const std::uint8_t* p, float sc) {
  uint4 r;
  std::uint32_t* h = reinterpret_cast<std::uint32_t*>(&r);
  if constexpr (F == kv_fp8) {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    // fp8 E5M2 is the high byte of an fp16.
    h[0] = __byte_perm(w.x, 0u, 0x1404);
    h[1] = __byte_perm(w.x, 0u, 0x3424);
    h[2] = __byte_perm(w.y, 0u, 0x1404);
    h[3] = __byte_perm(w.y, 0u, 0x3424);
    return r;
  } else {
    const __half2 s2 = __half2half2(__float2half_rn(sc));  // sc is an fp16 scale: exact
    std::uint32_t raw[4];
    if constexpr (F == kv_q4) {
      // Nibbles n0 .. n7 (n0 lowest): pairs (n_i, n_{i+4}) by shift and mask, then reordered.
      const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(p);
      std::uint32_t a[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = and_or<0x000f000fu, 0x64006400u>(w >> (4 * i));
      raw[0] = __byte_perm(a[0], a[1], 0x5410);  // (n0, n1)
      raw[1] = __byte_perm(a[2], a[3], 0x5410);  // (n2, n3)
      raw[2] = __byte_perm(a[0], a[1], 0x7632);  // (n4, n5)
      raw[3] = __byte_perm(a[2], a[3], 0x7632);  // (n6, n7)
    } else {
      const uint2 w = *reinterpret_cast<const uint2*>(p);
      raw[0] = __byte_perm(w.x, 0x64u, 0x4140);
      raw[1] = __byte_perm(w.x, 0x64u, 0x4342);
      raw[2] = __byte_perm(w.y, 0x64u, 0x4140);
      raw[3] = __byte_perm(w.y, 0x64u, 0x4342);
    }
    const __half2 base = __half2half2(__ushort_as_half(F == kv_q4 ? 0x6408 : 0x6480));  // 1024 + zero
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&raw[i]), base);
      const __half2 x = __hmul2(v, s2);
      h[i] = *reinterpret_cast<const std::uint32_t*>(&x);
    }
    return r;
  }
}

// Eight elements of a K or V row from a quantized store (Q: positions < past) or the chunk's
// staged fp16 rows, as fp16 (kv_dq8). col: the elements' first column within the position's row.
__device__ __forceinline__ uint4 kv_load8(const KvSource& src, int key, int past, std::size_t row, std::size_t col) {
  if (key >= past && src.stage) return *reinterpret_cast<const uint4*>(src.stage + std::size_t(key - past) * row + col);
  const std::size_t e = std::size_t(kv_row(src.pages, key)) * row + col;
  const std::uint8_t* d = static_cast<const std::uint8_t*>(src.data);
  switch (src.fmt) {
    case kv_fp8: return kv_dq8<kv_fp8>(d + e, 0.0f);
    case kv_q8: return kv_dq8<kv_q8>(d + e, __half2float(src.scales[e / 32]));
    case kv_q4: return kv_dq8<kv_q4>(d + e / 2, __half2float(src.scales[e / 32]));
    default: return *reinterpret_cast<const uint4*>(static_cast<const __half*>(src.data) + e);
  }
}

// Sixteen elements of a key or value row for the quantized decode kernel in one load (they lie in
// one 32-element scale group): the raw words first (so several keys' loads are in flight), then
// the conversion to fp32 (rotated domain for Q8/Q4).
struct KvRaw16 {
  uint4 a, b;
  float s;
  bool staged;
};
// F: the format when known at compile time (0: src.fmt); ST: whether the key may be a staged row.
template <int F = 0, bool ST = true>
__device__ __forceinline__ void kv_raw16(const KvSource& src, int key, int past, std::size_t row, std::size_t col,
                                         KvRaw16& r) {
  r.staged = ST && key >= past && src.stage;
  if (ST && r.staged) {
    const uint4* p = reinterpret_cast<const uint4*>(src.stage + std::size_t(key - past) * row + col);
    r.a = p[0]; r.b = p[1];
    return;
  }
  const std::size_t e = std::size_t(kv_row(src.pages, key)) * row + col;
  switch (F ? F : src.fmt) {
    case kv_fp8: r.a = *reinterpret_cast<const uint4*>(static_cast<const std::uint8_t*>(src.data) + e); return;
    case kv_q8:
      r.a = *reinterpret_cast<const uint4*>(static_cast<const std::uint8_t*>(src.data) + e);
      r.s = __half2float(src.scales[e / 32]);
      return;
    case kv_q4: {
      const uint2 w = *reinterpret_cast<const uint2*>(static_cast<const std::uint8_t*>(src.data) + e / 2);
      r.a.x = w.x; r.a.y = w.y;
      r.s = __half2float(src.scales[e / 32]);
      return;
    }
    default: {
      const uint4* p = reinterpret_cast<const uint4*>(static_cast<const __half*>(src.data) + e);
      r.a = p[0]; r.b = p[1];
    }
  }
}

__device__ __forceinline__ void h8_to_f(const uint4& v, float* f) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

template <int F = 0, bool ST = true>
__device__ __forceinline__ void kv_cvt16(int fmt_rt, const KvRaw16& r, float (&f)[16]) {
  const int fmt = F ? F : fmt_rt;
  if ((ST && r.staged) || fmt == kv_f16) {
    h8_to_f(r.a, f);
    h8_to_f(r.b, f + 8);
    return;
  }
  const std::uint32_t w[4] = {r.a.x, r.a.y, r.a.z, r.a.w};
  if (fmt == kv_fp8) {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      f[i] = __half2float(__ushort_as_half(std::uint16_t(((w[i >> 2] >> (8 * (i & 3))) & 0xff) << 8)));
  } else if (fmt == kv_q8) {
#pragma unroll
    for (int i = 0; i < 16; ++i) f[i] = float(int((w[i >> 2] >> (8 * (i & 3))) & 0xff) - 128) * r.s;
  } else {
#pragma unroll
    for (int i = 0; i < 16; ++i) f[i] = float(int((w[i >> 3] >> (4 * (i & 7))) & 15) - 8) * r.s;
  }
}

// S (N n-tiles of 8 keys) = Q K^T on tensor cores: a[ks] the A fragments of Q's 16 rows, K the
// keys' rows in shared memory (row stride LD halves). One ldmatrix gives an n-tile's B fragments
// of two k-steps (lanes 8i .. 8i+7: the tile's 8 key rows at column 8i of the pair of k-steps).
template <int KS, int N, int LD>
__device__ __forceinline__ void qk_mma(float (&sc)[N][4], const std::uint32_t (&a)[KS][4], const __half* K, int lane) {
  static_assert(KS % 2 == 0, "k-steps in pairs");
#pragma unroll
  for (int n = 0; n < N; ++n) sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0f;
#pragma unroll
  for (int ks = 0; ks < KS; ks += 2)
#pragma unroll
    for (int n = 0; n < N; ++n) {
      std::uint32_t b[4];
      ldmatrix_x4(b, K + (n * 8 + (lane & 7)) * LD + ks * 16 + (lane >> 3) * 8);
      mma16816(sc[n], a[ks][0], a[ks][1], a[ks][2], a[ks][3], b[0], b[1]);
      mma16816(sc[n], a[ks + 1][0], a[ks + 1][1], a[ks + 1][2], a[ks + 1][3], b[2], b[3]);
    }
}
// o (D / 8 n-tiles of output dims) += P V for 16 keys: p0, p1 the A fragments of P (keys 2t.., rows
// g and g + 8) and p2, p3 (keys 8 + 2t..), V the 16 keys' rows in shared memory.
template <int D, int LD>
__device__ __forceinline__ void pv_mma(float (&o)[D / 8][4], std::uint32_t p0, std::uint32_t p1, std::uint32_t p2,
                                       std::uint32_t p3, const __half* V, int lane) {
#pragma unroll
  for (int dn = 0; dn < D / 16; ++dn) {
    std::uint32_t b[4];
    ldmatrix_x4_trans(b, V + (lane & 15) * LD + dn * 16 + (lane >> 4) * 8);
    mma16816(o[2 * dn], p0, p1, p2, p3, b[0], b[1]);
    mma16816(o[2 * dn + 1], p0, p1, p2, p3, b[2], b[3]);
  }
}

// Two blocks a multiprocessor (registers; shared memory: two 64-key K/V stages and the Q tile).
template <int D, bool Q = false>
__global__ void __launch_bounds__(128, 2) attn_prefill_kernel(const __half* __restrict__ q, const __half* __restrict__ kc,
                                                           const __half* __restrict__ vc, const int* past_p, int t,
                                                           int nh, int nkv, float scale_log2,
                                                           __half* __restrict__ out, float* __restrict__ out32,
                                                           KvSource kq, KvSource vq) {
  constexpr int LD = D + 8;                // shared row stride in halves
  constexpr int KS = D / 16;               // k-steps of Q K^T
  constexpr int NT = D / 8;                // n-tiles of the output
  constexpr int WT = k_pf_warp_tiles;      // m-tiles (16 rows) of a warp
  EXL_DYNAMIC_SMEM(uint4, smem_pf);
  __half* sk = reinterpret_cast<__half*>(smem_pf);  // [2][keys][LD]
  __half* sv = sk + 2 * k_pf_keys * LD;             // [2][keys][LD]
  __half* sq = sv + 2 * k_pf_keys * LD;             // [rows][LD]: the block's query rows
  pdl_trigger();
  pdl_wait();
  const int h = blockIdx.y, kh = h / (nh / nkv);
  // The blocks of the last rows (which see the most keys) start first, so the grid ends on short ones.
  const int q0 = int(gridDim.x - 1 - blockIdx.x) * k_pf_rows;
  const int past = *past_p;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
  const int rows_end = min(t, q0 + k_pf_rows);
  const int kv_end = past + rows_end;  // keys 0 .. kv_end - 1 are seen by some row of the block
  const int tiles = (kv_end + k_pf_keys - 1) / k_pf_keys;
  const int wr0 = q0 + warp * 16 * WT;  // the warp's first row
  const bool warp_rows = wr0 < t;
  const int warp_limit = past + min(wr0 + 16 * WT - 1, t - 1);  // the last key any row of the warp sees

  auto load_tile = [&](int tile, int buf) {
    const int kb = tile * k_pf_keys;
    __half* dk = sk + buf * k_pf_keys * LD;
    __half* dv = sv + buf * k_pf_keys * LD;
    for (int i = threadIdx.x; i < k_pf_keys * (D / 8); i += 128) {
      const int row = i / (D / 8), c = (i - row * (D / 8)) * 8;
      const int key = kb + row;
      if (Q && key < kv_end) {  // a quantized store: dequantized here (plain loads)
        const std::size_t rw = std::size_t(nkv) * D, col = std::size_t(kh) * D + c;
        *reinterpret_cast<uint4*>(dk + row * LD + c) = kv_load8(kq, key, past, rw, col);
        *reinterpret_cast<uint4*>(dv + row * LD + c) = kv_load8(vq, key, past, rw, col);
      } else if (key < kv_end) {
        const std::size_t src = (std::size_t(kv_row(kq.pages, key)) * nkv + kh) * D + c;
        cp_async16(dk + row * LD + c, kc + src);
        cp_async16(dv + row * LD + c, vc + src);
      } else {
        *reinterpret_cast<uint4*>(dk + row * LD + c) = make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(dv + row * LD + c) = make_uint4(0, 0, 0, 0);
      }
    }
  };

  // The block's query rows (rows at and past t zero), in the first tile's copy group.
  for (int i = threadIdx.x; i < k_pf_rows * (D / 8); i += 128) {
    const int row = i / (D / 8), c = (i - row * (D / 8)) * 8;
    if (q0 + row < t) cp_async16(sq + row * LD + c, q + (std::size_t(q0 + row) * nh + h) * D + c);
    else *reinterpret_cast<uint4*>(sq + row * LD + c) = make_uint4(0, 0, 0, 0);
  }
  float o[WT][NT][4];
  float m[WT][2], l[WT][2];  // running max (scaled domain) and this lane's share of the row sums
#pragma unroll
  for (int i = 0; i < WT; ++i) {
#pragma unroll
    for (int n = 0; n < NT; ++n) o[i][n][0] = o[i][n][1] = o[i][n][2] = o[i][n][3] = 0.0f;
    m[i][0] = m[i][1] = -FLT_MAX;
    l[i][0] = l[i][1] = 0.0f;
  }
  const __half* qw = sq + warp * 16 * WT * LD;

  load_tile(0, 0);
  cp_async_commit();
  for (int j = 0; j < tiles; ++j) {
    if (j + 1 < tiles) load_tile(j + 1, (j + 1) & 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const int kb = j * k_pf_keys;
    if (warp_rows && kb <= warp_limit) {
      const __half* K = sk + (j & 1) * k_pf_keys * LD;
      const __half* V = sv + (j & 1) * k_pf_keys * LD;
      // S = Q K^T: each K fragment (one ldmatrix: an n-tile, two k-steps) serves both m-tiles.
      float sc[WT][8][4];  // raw scores; the scale goes into the exponent's FFMA
#pragma unroll
      for (int i = 0; i < WT; ++i)
#pragma unroll
        for (int n = 0; n < 8; ++n) sc[i][n][0] = sc[i][n][1] = sc[i][n][2] = sc[i][n][3] = 0.0f;
#pragma unroll
      for (int ks = 0; ks < KS; ks += 2) {
        std::uint32_t a[WT][2][4];
#pragma unroll
        for (int i = 0; i < WT; ++i)
#pragma unroll
          for (int kk = 0; kk < 2; ++kk)
            ldmatrix_x4(a[i][kk], qw + (16 * i + (lane & 15)) * LD + (ks + kk) * 16 + (lane >> 4) * 8);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          std::uint32_t b[4];
          ldmatrix_x4(b, K + (n * 8 + (lane & 7)) * LD + ks * 16 + (lane >> 3) * 8);
#pragma unroll
          for (int i = 0; i < WT; ++i) {
            mma16816(sc[i][n], a[i][0][0], a[i][0][1], a[i][0][2], a[i][0][3], b[0], b[1]);
            mma16816(sc[i][n], a[i][1][0], a[i][1][1], a[i][1][2], a[i][1][3], b[2], b[3]);
          }
        }
      }
      std::uint32_t pa[WT][8][2];  // P as fp16 pairs: [m-tile][n-tile][row g / row g+8]
#pragma unroll
      for (int i = 0; i < WT; ++i) {
        const bool masked = kb + k_pf_keys - 1 > past + min(wr0 + 16 * i, t - 1);
        // the last key rows g and g + 8 of the m-tile see
        const int lim0 = past + min(wr0 + 16 * i + g, t - 1), lim1 = past + min(wr0 + 16 * i + g + 8, t - 1);
        float mx0 = -FLT_MAX, mx1 = -FLT_MAX;
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            float v = sc[i][n][c];
            if (masked) {
              const int key = kb + n * 8 + 2 * tq + (c & 1);
              if (key > (c < 2 ? lim0 : lim1)) v = -INFINITY;
            }
            sc[i][n][c] = v;
            if (c < 2) mx0 = fmaxf(mx0, v); else mx1 = fmaxf(mx1, v);
          }
#pragma unroll
        for (int off = 1; off <= 2; off <<= 1) {
          mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
          mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
        }
        // Key 0 is seen by every row, so after the first tile m is finite for every row (a tile
        // that none of an m-tile's rows sees leaves its state as it was). m in the scaled (base 2)
        // domain: the scale is positive, so max(s) * scale = max(s * scale).
        const float mn0 = fmaxf(m[i][0], mx0 * scale_log2), mn1 = fmaxf(m[i][1], mx1 * scale_log2);
        const float a0 = exp2f(m[i][0] - mn0), a1 = exp2f(m[i][1] - mn1);
        m[i][0] = mn0; m[i][1] = mn1;
        float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
        for (int n = 0; n < 8; ++n) {
          const __half2 p0 = __floats2half2_rn(exp2f(fmaf(sc[i][n][0], scale_log2, -mn0)),
                                               exp2f(fmaf(sc[i][n][1], scale_log2, -mn0)));
          const __half2 p1 = __floats2half2_rn(exp2f(fmaf(sc[i][n][2], scale_log2, -mn1)),
                                               exp2f(fmaf(sc[i][n][3], scale_log2, -mn1)));
          const float2 f0 = __half22float2(p0), f1 = __half22float2(p1);
          s0 += f0.x + f0.y;
          s1 += f1.x + f1.y;
          pa[i][n][0] = *reinterpret_cast<const std::uint32_t*>(&p0);
          pa[i][n][1] = *reinterpret_cast<const std::uint32_t*>(&p1);
        }
        l[i][0] = l[i][0] * a0 + s0;
        l[i][1] = l[i][1] * a1 + s1;
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          o[i][n][0] *= a0; o[i][n][1] *= a0;
          o[i][n][2] *= a1; o[i][n][3] *= a1;
        }
      }
      // O += P V: each V fragment (ldmatrix.trans: 16 keys, 16 dims) serves both m-tiles.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int dn = 0; dn < D / 16; ++dn) {
          std::uint32_t b[4];
          ldmatrix_x4_trans(b, V + (kk * 16 + (lane & 15)) * LD + dn * 16 + (lane >> 4) * 8);
#pragma unroll
          for (int i = 0; i < WT; ++i) {
            mma16816(o[i][2 * dn], pa[i][2 * kk][0], pa[i][2 * kk][1], pa[i][2 * kk + 1][0], pa[i][2 * kk + 1][1], b[0],
                     b[1]);
            mma16816(o[i][2 * dn + 1], pa[i][2 * kk][0], pa[i][2 * kk][1], pa[i][2 * kk + 1][0],
                     pa[i][2 * kk + 1][1], b[2], b[3]);
          }
        }
    }
    __syncthreads();  // the buffer is refilled by the next iteration's load
  }
#pragma unroll
  for (int i = 0; i < WT; ++i) {
    float l0 = l[i][0], l1 = l[i][1];
#pragma unroll
    for (int off = 1; off <= 2; off <<= 1) {
      l0 += __shfl_xor_sync(0xffffffffu, l0, off);
      l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
    const int r0 = wr0 + 16 * i + g, r1 = r0 + 8;
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      const int dim = n * 8 + 2 * tq;
      if (r0 < t) {
        const std::size_t idx = (std::size_t(r0) * nh + h) * D + dim;
        if (out) *reinterpret_cast<__half2*>(out + idx) = __floats2half2_rn(o[i][n][0] * inv0, o[i][n][1] * inv0);
        if (out32) *reinterpret_cast<float2*>(out32 + idx) = make_float2(o[i][n][0] * inv0, o[i][n][1] * inv0);
      }
      if (r1 < t) {
        const std::size_t idx = (std::size_t(r1) * nh + h) * D + dim;
        if (out) *reinterpret_cast<__half2*>(out + idx) = __floats2half2_rn(o[i][n][2] * inv1, o[i][n][3] * inv1);
        if (out32) *reinterpret_cast<float2*>(out32 + idx) = make_float2(o[i][n][2] * inv1, o[i][n][3] * inv1);
      }
    }
  }
}

template <int D, bool Q = false>
void launch_prefill(const AttentionShape& a, const __half* q, const __half* k_cache, const __half* v_cache,
                    const int* past, __half* out, float* out32, cudaStream_t s, const KvSource& kq = {},
                    const KvSource& vq = {}) {
  constexpr std::size_t smem = prefill_smem_bytes<D>();
  opt_in_smem<attn_prefill_kernel<D, Q>>(smem);
  const float scale_log2 = a.scale * 1.4426950408889634f;
  KvSource kp = kq, vp = vq;
  kp.pages = vp.pages = a.pages;  // (the fp16 form reads kp.pages only)
  launch(attn_prefill_kernel<D, Q>, dim3((a.t + k_pf_rows - 1) / k_pf_rows, a.nh), dim3(128), smem, s, q, k_cache,
         v_cache, past, a.t, a.nh, a.nkv, scale_log2, out, out32, kp, vp);
  EXL_CUDA_CHECK_LAUNCH();
}

bool g_decode_mma = true;

// The cache types' K/V format pairs with decode kernels of their own (FP8, Q8, Q4, Q8/Q4 for Q6).
bool kv_cache_type_pair(int kfmt, int vfmt) {
  const int pair = kfmt * 8 + vfmt;
  return pair == kv_fp8 * 9 || pair == kv_q8 * 9 || pair == kv_q4 * 9 || pair == kv_q8 * 8 + kv_q4;
}

// ---- decode on tensor cores ----
// One CTA per (split, KV head, query token), as the decode kernels below, but the keys go through
// the prefill kernel's machinery: tiles of 64 keys in shared memory, S = Q K^T with mma.m16n8k16
// where the 16 rows are the KV head's query heads (rows at and past the group size are zero and
// never written), online softmax in fp32 (base 2), P (rounded to fp16) V on tensor cores. Warp w
// takes keys 16w .. 16w + 15 of every tile; the four warps' softmax states are merged through
// shared memory at the end and the split's partials written as the other decode kernels write
// them (max in natural-log units), so attn_decode_merge_kernel merges them.
// fp16 stores (KF = VF = kv_f16): the fp16 tiles double-buffered, filled by cp.async. Quantized
// stores: their raw bytes (and scales) double-buffered by cp.async, dequantized into one fp16
// tile per tile step (kv_dq8; the chunk's own positions from the staged rows). Each warp streams
// its own 16 keys of every tile, with no block barrier in the loop. Many keys' loads in
// flight per SM keep long contexts near the memory bandwidth, where the per-key online softmax of
// the CUDA-core kernels was not (bench/RESULTS.md, session 8).
// One token over fp16 stores may fold RoPE in (AttentionShape::rope): the block rotates its query
// group's rows from the projections into its second tile buffer, and the block whose split holds
// the new position writes that KV head's rotated K row and V row into the stores, both before
// its first tile copy (one barrier), so no rope_qkv_cache launch precedes the kernel.
template <int F>
constexpr int kv_raw_bytes(int elems) {
  return F == kv_q4 ? elems / 2 : elems;
}
// One store's raw stage: the tile's bytes (the wider of K and V), then its scales (D / 32 fp16 a key).
template <int D, int KF, int VF>
constexpr int decode_raw_data_bytes() {
  return k_pf_keys * (kv_raw_bytes<KF>(D) > kv_raw_bytes<VF>(D) ? kv_raw_bytes<KF>(D) : kv_raw_bytes<VF>(D));
}
template <int D, int KF, int VF>
constexpr std::size_t decode_mma_smem_bytes() {
  if constexpr (KF == kv_f16 && VF == kv_f16) return prefill_smem_bytes<D>();
  // One fp16 K and V tile, two stages of raw bytes and scales for K and V.
  return std::size_t(2) * k_pf_keys * (D + 8) * sizeof(__half) +
         std::size_t(2) * 2 * (decode_raw_data_bytes<D, KF, VF>() + k_pf_keys * D / 16);
}

// A tensor-core decode kernel's start: the PDL trigger and wait, then its block (grid = (splits,
// nkv, t)): the keys [k0, k1) of its split for query token tq (decode_split, from the current
// length *past_p) and the thread's place: warp, lane = 4 g + t4 (g: the fragments' row, t4: the
// lane in its quad). False, the rest unset, for a split past the keys (k0 >= k1).
struct DecodeBlock {
  int split, kh, tq, gsz, past, k0, k1;
  int warp, lane, g, t4;
  std::size_t rw;  // elements of a cache row (all KV heads)
};
template <int D>
__device__ __forceinline__ bool decode_block(DecodeBlock& b, const int* past_p, int nh, int nkv, int splits) {
  pdl_trigger();
  pdl_wait();
  b.split = blockIdx.x; b.kh = blockIdx.y; b.tq = blockIdx.z;
  b.gsz = nh / nkv;
  b.past = *past_p;
  const DecodeSplit sp = decode_split(b.past, b.tq, b.split, splits);
  b.k0 = sp.k0; b.k1 = sp.k1;
  if (b.k0 >= b.k1) return false;
  b.warp = threadIdx.x >> 5; b.lane = threadIdx.x & 31; b.g = b.lane >> 2; b.t4 = b.lane & 3;
  b.rw = std::size_t(nkv) * D;
  return true;
}

// The quantized decode kernels' copy of a tile's stored bytes (and, when `scaled`, the scales of its
// keys) into a raw stage: warp w copies keys kb + 16w .. kb + 16w + 15 (those below k1) with
// cp.async, a key's bytes at dst + row * bytes_per_key, its D / 32 fp16 scales at dst + DATA.
template <int D, int DATA>
__device__ __forceinline__ void decode_load_raw(std::uint8_t* dst, const KvSource& src, int kb, int k1, int warp,
                                                int lane, std::size_t rw, int kh, int bytes_per_key, bool scaled) {
  constexpr int SB = D / 16;  // bytes of a key's scales
  const int units = bytes_per_key / 16;
  for (int i = lane; i < 16 * units; i += 32) {
    const int row = warp * 16 + i / units, u = i % units;
    const int key = kb + row;
    if (key >= k1) continue;
    const std::size_t e = std::size_t(kv_row(src.pages, key)) * rw + std::size_t(kh) * D;
    cp_async16(dst + row * bytes_per_key + u * 16,
               static_cast<const std::uint8_t*>(src.data) + e * bytes_per_key / D + u * 16);
  }
  if (!scaled) return;
  std::uint8_t* ds = dst + DATA;
  for (int i = lane; i < 16 * (SB / 4); i += 32) {
    const int row = warp * 16 + i / (SB / 4), u = i % (SB / 4);
    const int key = kb + row;
    if (key >= k1) continue;
    const std::size_t e = std::size_t(kv_row(src.pages, key)) * rw + std::size_t(kh) * D;
    cp_async4(ds + row * SB + u * 4, src.scales + e / 32 + u * 2);
  }
}

// The tensor-core decode kernels' online-softmax step (base 2) over a warp's 16 keys of a tile,
// from key kw: lane (g, t4) holds the raw scores s[n][c] (c < 2) of keys kw + 8n + 2t4 + c for head
// row g, whose state is (m0, l0: the lane's share of the row sum). The scores are scaled (keys from
// k1 on masked) and the row's maximum taken over the quad. Returns the factor a of the old output,
// the new state (m, l) and P as fp16 pairs (the mma's fragments: keys 2t4, 2t4 + 1, 8 + 2t4, 9 + 2t4).
struct DecodeStep {
  float a, m, l;
  std::uint32_t p0, p1;
};
template <int C>
__device__ __forceinline__ DecodeStep decode_softmax(const float (&s)[2][C], int kw, int k1, int t4, float scale_log2,
                                                     float m0, float l0) {
  float sc[2][2];
  float mx = -FLT_MAX;
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int key = kw + n * 8 + 2 * t4 + c;
      const float v = key < k1 ? s[n][c] * scale_log2 : -INFINITY;
      sc[n][c] = v;
      mx = fmaxf(mx, v);
    }
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
  const float mn = fmaxf(m0, mx);
  const float a = exp2f(m0 - mn);
  const __half2 p0 = __floats2half2_rn(exp2f(sc[0][0] - mn), exp2f(sc[0][1] - mn));
  const __half2 p1 = __floats2half2_rn(exp2f(sc[1][0] - mn), exp2f(sc[1][1] - mn));
  const float2 f0 = __half22float2(p0), f1 = __half22float2(p1);
  return {a, mn, l0 * a + f0.x + f0.y + f1.x + f1.y, *reinterpret_cast<const std::uint32_t*>(&p0),
          *reinterpret_cast<const std::uint32_t*>(&p1)};
}

// The tensor-core decode kernels' merge buffers in the tiles' shared memory, once every warp is done
// with the tiles (the copies waited for, then a block barrier): outputs o [4][8][D] in head order,
// maxima m and sums l [4][8] (base 2). The lane's share of its row sum, l0, is summed over its quad.
struct DecodeMerge {
  float *o, *m, *l;
};
template <int D>
__device__ __forceinline__ DecodeMerge decode_merge_smem(void* smem, float& l0) {
  cp_async_wait<0>();
  __syncthreads();
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) l0 += __shfl_xor_sync(0xffffffffu, l0, off);
  float* o = reinterpret_cast<float*>(smem);
  return {o, o + 4 * 8 * D, o + 4 * 8 * D + 32};
}

// The tensor-core decode kernels' tail: the four warps' states for head h (shared memory: outputs
// s_o [4][8][D] in head order, maxima s_m and sums s_l [4][8], base 2) merged, and the split's
// partials written as the other decode kernels write them (max in natural-log units).
template <int D>
__device__ __forceinline__ void decode_mma_partials(const float* s_o, const float* s_m, const float* s_l, int gsz,
                                                    int kh, int splits, int split, float* part) {
  constexpr float ln2 = 0.6931471805599453f;
  for (int i = threadIdx.x; i < gsz * D; i += 128) {
    const int h = i / D, e = i - h * D;
    float mx = -FLT_MAX;
#pragma unroll
    for (int w = 0; w < 4; ++w) mx = fmaxf(mx, s_m[w * 8 + h]);
    float acc = 0.0f, lsum = 0.0f;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const float f = exp2f(s_m[w * 8 + h] - mx);
      acc += s_o[(w * 8 + h) * D + e] * f;
      lsum += s_l[w * 8 + h] * f;
    }
    float* pp = part + (std::size_t(kh * gsz + h) * splits + split) * (D + 2);
    pp[e] = acc;
    if (e == 0) { pp[D] = mx * ln2; pp[D + 1] = lsum; }
  }
}

template <int D, int KF, int VF>
__global__ void __launch_bounds__(128) attn_decode_mma_kernel(const __half* __restrict__ q, const __half* kc,
                                                              const __half* vc, const int* past_p, int nh,
                                                              int nkv, float scale_log2, int splits,
                                                              float* __restrict__ part, KvSource kq, KvSource vq,
                                                              DecodeRope rope) {
  constexpr bool PLAIN = KF == kv_f16 && VF == kv_f16;
  constexpr int LD = D + 8;
  constexpr int KS = D / 16;
  constexpr int NT = D / 8;
  constexpr int KB = kv_raw_bytes<KF>(D), VB = kv_raw_bytes<VF>(D);  // raw bytes of a key's head row
  constexpr int SB = D / 16;                                          // bytes of its scales (D / 32 fp16)
  constexpr int DATA = decode_raw_data_bytes<D, KF, VF>();
  constexpr int RAW = DATA + k_pf_keys * SB;                         // one store's raw stage
  EXL_DYNAMIC_SMEM(uint4, smem_dm);
  __half* sk = reinterpret_cast<__half*>(smem_dm);     // [PLAIN ? 2 : 1][keys][LD]
  __half* sv = sk + (PLAIN ? 2 : 1) * k_pf_keys * LD;  // [PLAIN ? 2 : 1][keys][LD]
  std::uint8_t* raw = reinterpret_cast<std::uint8_t*>(sv + k_pf_keys * LD);  // quantized: [2][K, V][RAW]
  DecodeBlock b;
  if (!decode_block<D>(b, past_p, nh, nkv, splits)) return;  // after the PDL wait
  const bool roped = PLAIN && rope.cs != nullptr;  // one token (attention_folds_rope): tq = 0
  if (!roped) q += std::size_t(b.tq) * nh * D;
  part += std::size_t(b.tq) * nh * splits * (D + 2);
  if (roped && b.past >= b.k0 && b.past < b.k1) {
    // The new position is this split's: its KV head's rotated K row and V row into the stores,
    // visible to the block's tile copies after the barrier that follows q's rotation below.
    const std::size_t co = std::size_t(kv_row(kq.pages, b.past)) * b.rw + std::size_t(b.kh) * D;
    for (int i = threadIdx.x; i < D / 2; i += blockDim.x) {
      int ia, ib;
      rope_pair(D, i, rope.style, ia, ib);
      rope_kv_pair(rope.k, rope.v, std::size_t(b.kh) * D, i, ia, ib, rope.cs[i], const_cast<__half*>(kc) + co,
                   const_cast<__half*>(vc) + co);
    }
  }

  // Every warp streams its own 16 keys of each tile (rows 16w .. 16w + 15 of the buffers), so the
  // loop needs no block barrier: one warp's loads and dequantization overlap another's mma.
  // fp16 stores: tile -> fp16 buffer buf.
  auto load_tile = [&](int tile, int buf) {
    const int kb = b.k0 + tile * k_pf_keys;
    __half* dk = sk + buf * k_pf_keys * LD;
    __half* dv = sv + buf * k_pf_keys * LD;
    for (int i = b.lane; i < 16 * (D / 8); i += 32) {
      const int row = b.warp * 16 + i / (D / 8), c = (i % (D / 8)) * 8;
      const int key = kb + row;
      if (key >= b.k1) {
        *reinterpret_cast<uint4*>(dk + row * LD + c) = make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(dv + row * LD + c) = make_uint4(0, 0, 0, 0);
      } else {
        const std::size_t src = std::size_t(kv_row(kq.pages, key)) * b.rw + std::size_t(b.kh) * D + c;
        cp_async16(dk + row * LD + c, kc + src);
        cp_async16(dv + row * LD + c, vc + src);
      }
    }
  };
  // Quantized stores: the raw bytes (and scales) of a tile's keys -> raw stage buf.
  auto load_raw = [&](int tile, int buf, const KvSource& src, int which, int bytes_per_key, bool scaled) {
    decode_load_raw<D, DATA>(raw + (buf * 2 + which) * RAW, src, b.k0 + tile * k_pf_keys, b.k1, b.warp, b.lane,
                             b.rw, b.kh, bytes_per_key, scaled);
  };
  // Quantized stores: raw stage buf -> the fp16 tile.
  auto dequant = [&](int tile, int buf) {
    const int kb = b.k0 + tile * k_pf_keys;
    const std::uint8_t* rk = raw + (buf * 2) * RAW;
    const std::uint8_t* rv = raw + (buf * 2 + 1) * RAW;
    // 16 elements (one scale) per lane and step.
    auto one = [&](const std::uint8_t* r, const KvSource& src, int bpk, int row, int key, int c, uint4& x0, uint4& x1,
                   auto fmt) {
      constexpr int F = decltype(fmt)::value;
      if (key >= b.past && src.stage) {
        const uint4* st =
            reinterpret_cast<const uint4*>(src.stage + std::size_t(key - b.past) * b.rw + std::size_t(b.kh) * D + c);
        x0 = st[0];
        x1 = st[1];
        return;
      }
      const float sc = F == kv_fp8 ? 0.0f : __half2float(reinterpret_cast<const __half*>(r + DATA + row * SB)[c / 32]);
      const std::uint8_t* p = r + row * bpk + c * bpk / D;
      x0 = kv_dq8<F>(p, sc);
      x1 = kv_dq8<F>(p + 8 * bpk / D, sc);
    };
    for (int i = b.lane; i < 16 * (D / 16); i += 32) {
      const int row = b.warp * 16 + i / (D / 16), c = (i % (D / 16)) * 16;
      const int key = kb + row;
      uint4 k0x = make_uint4(0, 0, 0, 0), k1x = k0x, v0x = k0x, v1x = k0x;
      if (key < b.k1) {
        one(rk, kq, KB, row, key, c, k0x, k1x, std::integral_constant<int, KF>{});
        one(rv, vq, VB, row, key, c, v0x, v1x, std::integral_constant<int, VF>{});
      }
      uint4* dk = reinterpret_cast<uint4*>(sk + row * LD + c);
      uint4* dv = reinterpret_cast<uint4*>(sv + row * LD + c);
      dk[0] = k0x; dk[1] = k1x;
      dv[0] = v0x; dv[1] = v1x;
    }
  };
  auto issue = [&](int tile, int buf) {
    if constexpr (PLAIN) {
      load_tile(tile, buf);
    } else {
      load_raw(tile, buf, kq, 0, KB, KF != kv_fp8);
      load_raw(tile, buf, vq, 1, VB, VF != kv_fp8);
    }
  };

  // Q as the A operand: row g is query head kh * gsz + g (zero past the group); rows g + 8 are zero.
  // Folded RoPE: the block rotates its group's rows into sk's second buffer (free until the loop
  // first refills it) and reads them from there.
  const __half* qr = q + std::size_t(b.kh * b.gsz + b.g) * D;
  if (roped) {
    __half* qs = sk + k_pf_keys * LD;
    for (int j = threadIdx.x; j < b.gsz * (D / 2); j += blockDim.x) {
      const int h = j / (D / 2), i = j - h * (D / 2);
      int ia, ib;
      rope_pair(D, i, rope.style, ia, ib);
      const std::size_t o = std::size_t(b.kh * b.gsz + h) * D;
      rope_rotate(acc_at(rope.q, o + ia), acc_at(rope.q, o + ib), rope.cs[i], qs[h * D + ia], qs[h * D + ib]);
    }
    __syncthreads();
    qr = qs + b.g * D;
  }
  std::uint32_t qa[KS][4];
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    qa[ks][0] = b.g < b.gsz ? *reinterpret_cast<const std::uint32_t*>(qr + ks * 16 + 2 * b.t4) : 0u;
    qa[ks][2] = b.g < b.gsz ? *reinterpret_cast<const std::uint32_t*>(qr + ks * 16 + 8 + 2 * b.t4) : 0u;
    qa[ks][1] = qa[ks][3] = 0u;
  }
  if (roped) __syncthreads();  // every warp holds its rows before the buffer is refilled
  float o[NT][4];
#pragma unroll
  for (int n = 0; n < NT; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m0 = -FLT_MAX, l0 = 0.0f;  // row g's state (l: this lane's share of the row sum)

  const int tiles = (b.k1 - b.k0 + k_pf_keys - 1) / k_pf_keys;
  issue(0, 0);
  cp_async_commit();
  for (int j = 0; j < tiles; ++j) {
    if (j + 1 < tiles) issue(j + 1, (j + 1) & 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncwarp();  // the warp's copies, by all its lanes, are visible
    if constexpr (!PLAIN) {
      dequant(j, j & 1);
      __syncwarp();
    }
    const int kw = b.k0 + j * k_pf_keys + b.warp * 16;  // the warp's first key
    if (kw < b.k1) {
      const int tb = PLAIN ? (j & 1) : 0;
      const __half* K = sk + tb * k_pf_keys * LD + b.warp * 16 * LD;
      const __half* V = sv + tb * k_pf_keys * LD + b.warp * 16 * LD;
      float sc[2][4];
      qk_mma<KS, 2, LD>(sc, qa, K, b.lane);
      const DecodeStep st = decode_softmax(sc, kw, b.k1, b.t4, scale_log2, m0, l0);
      m0 = st.m;
      l0 = st.l;
#pragma unroll
      for (int n = 0; n < NT; ++n) { o[n][0] *= st.a; o[n][1] *= st.a; }
      pv_mma<D, LD>(o, st.p0, 0u, st.p1, 0u, V, b.lane);
    }
    __syncwarp();  // the warp's buffers are refilled by its next iteration
  }
  // Merge the warps (row g of each) in the tiles' shared memory.
  const DecodeMerge mg = decode_merge_smem<D>(smem_dm, l0);
  if (b.g < b.gsz) {
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      mg.o[(b.warp * 8 + b.g) * D + n * 8 + 2 * b.t4] = o[n][0];
      mg.o[(b.warp * 8 + b.g) * D + n * 8 + 2 * b.t4 + 1] = o[n][1];
    }
    if (b.t4 == 0) { mg.m[b.warp * 8 + b.g] = m0; mg.l[b.warp * 8 + b.g] = l0; }
  }
  __syncthreads();
  decode_mma_partials<D>(mg.o, mg.m, mg.l, b.gsz, b.kh, splits, b.split, part);
}

template <int D, int KF, int VF>
void launch_decode_mma(const AttentionShape& a, const __half* q, const __half* k_cache, const __half* v_cache,
                       const int* past, float* part, cudaStream_t s, const KvSource& kq = {}, const KvSource& vq = {}) {
  const DecodeRope rope = a.rope ? *a.rope : DecodeRope{};
  constexpr std::size_t smem = decode_mma_smem_bytes<D, KF, VF>();
  static_assert(smem >= (4 * 8 * D + 64) * sizeof(float), "the warps' merge reuses the tiles' shared memory");
  opt_in_smem<attn_decode_mma_kernel<D, KF, VF>>(smem);
  KvSource kp = kq, vp = vq;
  kp.pages = vp.pages = a.pages;
  launch(attn_decode_mma_kernel<D, KF, VF>, dim3(a.splits, a.nkv, a.t), dim3(128), smem, s, q, k_cache, v_cache, past,
         a.nh, a.nkv, a.scale * 1.4426950408889634f, a.splits, part, kp, vp, rope);
  EXL_CUDA_CHECK_LAUNCH();
}

// ---- decode on tensor cores, dequantizing into the fragments (Q8/Q4 stores) ----
// The same work split, tiles, softmax and partials as attn_decode_mma_kernel, but the quantized
// bytes go from their cp.async stage straight into mma operands: no fp16 tile in shared memory,
// no store and reload of it, and a third of the shared memory (more CTAs per SM).
// Permutations make each lane's share of a key contiguous in the stored row:
// - S = Q K^T: a k index of the mma stands for any head dimension as long as Q's A fragment and
//   K's B fragment agree. Lane (g, t4) takes key g of each n-tile and the dimensions
//   [t4 D / 4, (t4 + 1) D / 4) of it — a whole scale group (D = 128) or half of one (D = 64) —
//   octet by octet (eight elements, one 32-bit word of Q4, two of Q8); Q's fragments are loaded
//   once in the same order.
// - O^T = V^T P^T: P's fragments serve as the B operand as they are (keys 2t4, 2t4 + 1, 8 + 2t4,
//   9 + 2t4 of the warp's 16, column g = head g), the output's columns are the heads (half the
//   accumulators and mma of O = P V with its eight empty rows). Rows g and g + 8 of an m-tile
//   stand for dimensions in [g D / 8, (g + 1) D / 8), so lane g dequantizes D / 8 contiguous
//   elements (one scale) of each of its four keys and pairs the keys' halves with byte permutes.
//   The output goes back to head order in the warps' merge.
constexpr int k_decode_reg_stages = 3;
bool g_decode_reg = true;

// Element index (0..7) of the half hi of pair i of an octet in the format's pair order: Q4 (e_i,
// e_{i+4}) — what shifting and masking a word of nibbles gives — Q8 and fp16 (e_{2i}, e_{2i+1}).
template <int F>
__host__ __device__ constexpr int oct_elem(int i, int hi) {
  return F == kv_q4 ? i + 4 * hi : 2 * i + hi;
}
// An octet of a Q8/Q4 row (its bytes p in shared memory) as (v - zero) * scale in pair order
// (kv_dq8's arithmetic: the same fp16 values).
template <int F>
__device__ __forceinline__ void oct_dq(const std::uint8_t* p, __half2 s2, std::uint32_t (&h)[4]) {
  std::uint32_t raw[4];
  if constexpr (F == kv_q4) {
    const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(p);
#pragma unroll
    for (int i = 0; i < 4; ++i) raw[i] = and_or<0x000f000fu, 0x64006400u>(w >> (4 * i));
  } else {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    raw[0] = __byte_perm(w.x, 0x64u, 0x4140);
    raw[1] = __byte_perm(w.x, 0x64u, 0x4342);
    raw[2] = __byte_perm(w.y, 0x64u, 0x4140);
    raw[3] = __byte_perm(w.y, 0x64u, 0x4342);
  }
  const __half2 base = __half2half2(__ushort_as_half(F == kv_q4 ? 0x6408 : 0x6480));  // 1024 + zero
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __half2 x = __hmul2(__hsub2(*reinterpret_cast<const __half2*>(&raw[i]), base), s2);
    h[i] = *reinterpret_cast<const std::uint32_t*>(&x);
  }
}
// The same octet from fp16 elements (the chunk's staged rows), in the format's pair order.
template <int F>
__device__ __forceinline__ void oct_f16(const __half* p, std::uint32_t (&h)[4]) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  if constexpr (F == kv_q4) {
    h[0] = __byte_perm(u.x, u.z, 0x5410);
    h[1] = __byte_perm(u.x, u.z, 0x7632);
    h[2] = __byte_perm(u.y, u.w, 0x5410);
    h[3] = __byte_perm(u.y, u.w, 0x7632);
  } else {
    h[0] = u.x; h[1] = u.y; h[2] = u.z; h[3] = u.w;
  }
}

template <int D, int KF, int VF>
constexpr std::size_t decode_reg_smem_bytes() {
  constexpr std::size_t stages =
      std::size_t(k_decode_reg_stages) * 2 * (decode_raw_data_bytes<D, KF, VF>() + k_pf_keys * D / 16);
  constexpr std::size_t merge = (4 * 8 * D + 64) * sizeof(float);
  return stages > merge ? stages : merge;
}

template <int D, int KF, int VF>
__global__ void __launch_bounds__(128, 4) attn_decode_reg_kernel(const __half* __restrict__ q, const int* past_p, int nh,
                                                              int nkv, float scale_log2, int splits,
                                                              float* __restrict__ part, KvSource kq, KvSource vq) {
  static_assert((KF == kv_q8 || KF == kv_q4) && (VF == kv_q8 || VF == kv_q4) && (D == 64 || D == 128), "Q8/Q4 stores");
  constexpr int ST = k_decode_reg_stages;
  constexpr int KS = D / 16;
  constexpr int KB = kv_raw_bytes<KF>(D), VB = kv_raw_bytes<VF>(D);
  constexpr int SB = D / 16;  // bytes of a key's scales
  constexpr int DATA = decode_raw_data_bytes<D, KF, VF>();
  constexpr int RAW = DATA + k_pf_keys * SB;
  EXL_DYNAMIC_SMEM(uint4, smem_dr);
  std::uint8_t* raw = reinterpret_cast<std::uint8_t*>(smem_dr);  // [ST][K, V][RAW]
  DecodeBlock b;
  if (!decode_block<D>(b, past_p, nh, nkv, splits)) return;  // after the PDL wait
  q += std::size_t(b.tq) * nh * D;
  part += std::size_t(b.tq) * nh * splits * (D + 2);
  const int kd0 = b.t4 * (D / 4), vd0 = b.g * (D / 8);  // the lane's first dimension of K and of V

  auto load_raw = [&](int tile, int buf, const KvSource& src, int which, int bytes_per_key) {
    decode_load_raw<D, DATA>(raw + (buf * 2 + which) * RAW, src, b.k0 + tile * k_pf_keys, b.k1, b.warp, b.lane,
                             b.rw, b.kh, bytes_per_key, true);
  };
  auto issue = [&](int tile) {
    const int buf = tile % ST;
    load_raw(tile, buf, kq, 0, KB);
    load_raw(tile, buf, vq, 1, VB);
  };
  // An octet of key `key` (row r of the stage) from element x of its head row: dequantized, or
  // (tail tiles only) the staged fp16 row, or zero past the split.
  auto octet = [&](const std::uint8_t* st, const KvSource& src, int bpk, int r, int key, int x, __half2 s2, bool tail,
                   std::uint32_t (&h)[4], auto fmt) {
    constexpr int F = decltype(fmt)::value;
    if (tail) {
      if (key >= b.k1) {
        h[0] = h[1] = h[2] = h[3] = 0u;
        return;
      }
      if (key >= b.past && src.stage) {
        oct_f16<F>(src.stage + std::size_t(key - b.past) * b.rw + std::size_t(b.kh) * D + x, h);
        return;
      }
    }
    oct_dq<F>(st + r * bpk + x * bpk / D, s2, h);
  };
  auto scale2 = [&](const std::uint8_t* st, int r, int x) {
    return __half2half2(reinterpret_cast<const __half*>(st + DATA + r * SB)[x / 32]);
  };

  // Q's A fragments in K's octet order: k-step 2o + j of lane t4 holds pairs 2j (a0) and 2j + 1
  // (a2) of the octet at kd0 + 8o. Rows g + 8 (and g >= gsz) are zero.
  std::uint32_t qa[KS][2];
  {
    const __half* qr = q + std::size_t(b.kh * b.gsz + (b.g < b.gsz ? b.g : 0)) * D + kd0;
#pragma unroll
    for (int o = 0; o < D / 32; ++o)
#pragma unroll
      for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int a = 0; a < 2; ++a) {
          const int i = 2 * j + a;
          const __half2 v = __halves2half2(qr[8 * o + oct_elem<KF>(i, 0)], qr[8 * o + oct_elem<KF>(i, 1)]);
          qa[2 * o + j][a] = b.g < b.gsz ? *reinterpret_cast<const std::uint32_t*>(&v) : 0u;
        }
  }
  // O^T: m-tile 4 oc + i, rows g / g + 8 = dimensions vd0 + 8 oc + oct_elem(i, 0 / 1), columns = heads.
  float o[D / 16][4];
#pragma unroll
  for (int n = 0; n < D / 16; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m0 = -FLT_MAX, l0 = 0.0f;

  const int tiles = (b.k1 - b.k0 + k_pf_keys - 1) / k_pf_keys;
#pragma unroll
  for (int s = 0; s < ST - 1; ++s) {
    if (s < tiles) issue(s);
    cp_async_commit();
  }
  for (int j = 0; j < tiles; ++j) {
    if (j + ST - 1 < tiles) issue(j + ST - 1);
    cp_async_commit();
    cp_async_wait<ST - 1>();
    __syncwarp();  // the warp's copies, by all its lanes, are visible
    const int kw = b.k0 + j * k_pf_keys + b.warp * 16;  // the warp's first key
    if (kw < b.k1) {
      const std::uint8_t* rk = raw + (j % ST) * 2 * RAW;
      const std::uint8_t* rv = rk + RAW;
      const bool tail = kw + 16 > min(b.k1, b.past);  // keys past the split or staged
      // S: two independent accumulators per n-tile (even and odd k-steps).
      float sa[2][4], sb[2][4];
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        sa[n][0] = sa[n][1] = sa[n][2] = sa[n][3] = 0.0f;
        sb[n][0] = sb[n][1] = sb[n][2] = sb[n][3] = 0.0f;
        const int r = b.warp * 16 + n * 8 + b.g;
        const __half2 s2 = scale2(rk, r, kd0);
#pragma unroll
        for (int oc = 0; oc < D / 32; ++oc) {
          std::uint32_t h[4];
          octet(rk, kq, KB, r, kw + n * 8 + b.g, kd0 + 8 * oc, s2, tail, h, std::integral_constant<int, KF>{});
          mma16816(sa[n], qa[2 * oc][0], 0u, qa[2 * oc][1], 0u, h[0], h[1]);
          mma16816(sb[n], qa[2 * oc + 1][0], 0u, qa[2 * oc + 1][1], 0u, h[2], h[3]);
        }
      }
      float sc[2][2];  // the two accumulators summed
#pragma unroll
      for (int n = 0; n < 2; ++n) { sc[n][0] = sa[n][0] + sb[n][0]; sc[n][1] = sa[n][1] + sb[n][1]; }
      const DecodeStep st = decode_softmax(sc, kw, b.k1, b.t4, scale_log2, m0, l0);
      m0 = st.m;
      l0 = st.l;
      // O^T += V^T P^T (A = V^T, B = P^T: P's fragments as they are): the lane's four keys and
      // its D / 8 dimensions, octet by octet. Each output column is a head, so the rescale takes
      // the heads' factors from their lanes.
      const float a_lo = __shfl_sync(0xffffffffu, st.a, 8 * b.t4), a_hi = __shfl_sync(0xffffffffu, st.a, 8 * b.t4 + 4);
#pragma unroll
      for (int n = 0; n < D / 16; ++n) { o[n][0] *= a_lo; o[n][1] *= a_hi; o[n][2] *= a_lo; o[n][3] *= a_hi; }
      __half2 vs2[4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) vs2[kk] = scale2(rv, b.warp * 16 + (kk >> 1) * 8 + 2 * b.t4 + (kk & 1), vd0);
#pragma unroll
      for (int oc = 0; oc < D / 64; ++oc) {
        std::uint32_t hv[4][4];
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const int r = (kk >> 1) * 8 + 2 * b.t4 + (kk & 1);
          octet(rv, vq, VB, b.warp * 16 + r, kw + r, vd0 + 8 * oc, vs2[kk], tail, hv[kk],
                std::integral_constant<int, VF>{});
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
          mma16816(o[4 * oc + i], __byte_perm(hv[0][i], hv[1][i], 0x5410), __byte_perm(hv[0][i], hv[1][i], 0x7632),
                   __byte_perm(hv[2][i], hv[3][i], 0x5410), __byte_perm(hv[2][i], hv[3][i], 0x7632), st.p0, st.p1);
      }
    }
    __syncwarp();  // the warp's stage is refilled by a later iteration
  }
  const DecodeMerge mg = decode_merge_smem<D>(smem_dr, l0);  // the stages' shared memory
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    const int h = 2 * b.t4 + c;  // the head of columns c (o[][c], o[][c + 2])
    if (h >= b.gsz) continue;
    float* so = mg.o + (b.warp * 8 + h) * D + vd0;
#pragma unroll
    for (int oc = 0; oc < D / 64; ++oc)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        so[8 * oc + oct_elem<VF>(i, 0)] = o[4 * oc + i][c];
        so[8 * oc + oct_elem<VF>(i, 1)] = o[4 * oc + i][c + 2];
      }
  }
  if (b.g < b.gsz && b.t4 == 0) { mg.m[b.warp * 8 + b.g] = m0; mg.l[b.warp * 8 + b.g] = l0; }
  __syncthreads();
  decode_mma_partials<D>(mg.o, mg.m, mg.l, b.gsz, b.kh, splits, b.split, part);
}

template <int D, int KF, int VF>
void configure_decode_reg() {
  opt_in_smem<attn_decode_reg_kernel<D, KF, VF>>(decode_reg_smem_bytes<D, KF, VF>());
}

template <int D, int KF, int VF>
void launch_decode_reg(const AttentionShape& a, const __half* q, const int* past, float* part, cudaStream_t s,
                       const KvSource& kq, const KvSource& vq) {
  configure_decode_reg<D, KF, VF>();
  KvSource kp = kq, vp = vq;
  kp.pages = vp.pages = a.pages;
  launch(attn_decode_reg_kernel<D, KF, VF>, dim3(a.splits, a.nkv, a.t), dim3(128), decode_reg_smem_bytes<D, KF, VF>(), s,
         q, past, a.nh, a.nkv, a.scale * 1.4426950408889634f, a.splits, part, kp, vp);
  EXL_CUDA_CHECK_LAUNCH();
}

// CTAs of the register-dequantizing kernel resident per SM (registers and shared memory).
template <int D, int KF, int VF>
int decode_reg_ctas_per_sm() {
  configure_decode_reg<D, KF, VF>();
  int n = 0;
  EXL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, attn_decode_reg_kernel<D, KF, VF>, 128,
                                                               decode_reg_smem_bytes<D, KF, VF>()));
  return n;
}

// The fused decode step's merge: the last split of KV head kh merges its heads' partials in
// split order (as attn_decode_merge_kernel).
template <int D>
__device__ void merge_heads(const float* part, int kh, int gsz, int splits, int ns, __half* out, float* out32) {
  EXL_SHARED_ARRAY(float, s_w, [256]);
  EXL_BLOCK_SHARED(float, s_inv);
  for (int hh = 0; hh < gsz; ++hh) {
    const int h = kh * gsz + hh;
    const float* p = part + std::size_t(h) * splits * (D + 2);
    float mx = -FLT_MAX;
    for (int s = 0; s < ns; ++s) mx = fmaxf(mx, __ldcg(p + s * (D + 2) + D));
    for (int s = threadIdx.x; s < ns && s < 256; s += blockDim.x) s_w[s] = __expf(__ldcg(p + s * (D + 2) + D) - mx);
    if (threadIdx.x == 0) {
      float l = 0.0f;
      for (int s = 0; s < ns; ++s) l += __ldcg(p + s * (D + 2) + D + 1) * __expf(__ldcg(p + s * (D + 2) + D) - mx);
      s_inv = 1.0f / l;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < D; e += blockDim.x) {
      float o = 0.0f;
      for (int s = 0; s < ns; ++s)
        o += __ldcg(p + s * (D + 2) + e) * (s < 256 ? s_w[s] : __expf(__ldcg(p + s * (D + 2) + D) - mx));
      o *= s_inv;
      const std::size_t idx = std::size_t(h) * D + e;
      if (out) out[idx] = __float2half_rn(o);
      if (out32) out32[idx] = o;
    }
    __syncthreads();
  }
}

// A decode slot's 16 query elements (fp16, scaled) and its fresh online-softmax state.
__device__ __forceinline__ void decode_q_row(const __half* qr, float scale, float (&qf)[16]) {
  float t[8];
  h8_to_f(*reinterpret_cast<const uint4*>(qr), t);
#pragma unroll
  for (int i = 0; i < 8; ++i) qf[i] = t[i] * scale;
  h8_to_f(*reinterpret_cast<const uint4*>(qr + 8), t);
#pragma unroll
  for (int i = 0; i < 8; ++i) qf[8 + i] = t[i] * scale;
}
template <int G>
__device__ __forceinline__ void decode_init(float (&m)[G], float (&l)[G], float (&acc)[G][16]) {
#pragma unroll
  for (int h = 0; h < G; ++h) {
    m[h] = -FLT_MAX;
    l[h] = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) acc[h][i] = 0.0f;
  }
}

// One key of a decode kernel's slot: the G heads' scores (the slot's LPK lanes summed) ...
template <int G, int LPK>
__device__ __forceinline__ void decode_scores(const float (&qf)[G][16], const float (&kf)[16], float (&sc)[G]) {
#pragma unroll
  for (int h = 0; h < G; ++h) {
    float d = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) d = fmaf(qf[h][i], kf[i], d);
#pragma unroll
    for (int o = LPK / 2; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
    sc[h] = d;
  }
}
// ... and the online-softmax update of the slot's state with the key's value row (decode_update,
// attn_common.cuh).

// The decode kernels' common tail: the online-softmax states of a warp's key slots merged with
// shuffles (lanes with the same sub), the four warps through shared memory, and the split's
// partials for the G heads of KV head kh written (unnormalised output, max, sum).
template <int D, int G, int LPK>
__device__ __forceinline__ void decode_write_partials(float (&m)[G], float (&l)[G], float (&acc)[G][16], int warp,
                                                      int slot, int sub, int d0, int gsz, int kh, int splits, int split,
                                                      float* part) {
  EXL_SHARED_ARRAY(float, s_m, [4][G]);
  EXL_SHARED_ARRAY(float, s_l, [4][G]);
  EXL_SHARED_ARRAY(float, s_acc, [4][G][D]);
#pragma unroll
  for (int o = LPK; o < 32; o <<= 1) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
      const float mo = __shfl_xor_sync(0xffffffffu, m[h], o);
      const float lo = __shfl_xor_sync(0xffffffffu, l[h], o);
      const float mn = fmaxf(m[h], mo);
      const float a = __expf(m[h] - mn), b = __expf(mo - mn);
      l[h] = l[h] * a + lo * b;
      m[h] = mn;
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        const float ao = __shfl_xor_sync(0xffffffffu, acc[h][i], o);
        acc[h][i] = acc[h][i] * a + ao * b;
      }
    }
  }
  if (slot == 0) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
#pragma unroll
      for (int i = 0; i < 16; ++i) s_acc[warp][h][d0 + i] = acc[h][i];
      if (sub == 0) { s_m[warp][h] = m[h]; s_l[warp][h] = l[h]; }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < gsz * D; i += 128) {
    const int h = i / D, e = i - h * D;
    float mx = -FLT_MAX;
#pragma unroll
    for (int wi = 0; wi < 4; ++wi) mx = fmaxf(mx, s_m[wi][h]);
    float o = 0.0f, lsum = 0.0f;
#pragma unroll
    for (int wi = 0; wi < 4; ++wi) {
      const float f = __expf(s_m[wi][h] - mx);
      o += s_acc[wi][h][e] * f;
      lsum += s_l[wi][h] * f;
    }
    float* pp = part + (std::size_t(kh * gsz + h) * splits + split) * (D + 2);
    pp[e] = o;
    if (e == 0) { pp[D] = mx; pp[D + 1] = lsum; }
  }
}

// K and V may be written by this kernel (the fused step's new row), so they are not __restrict__:
// the loads must see that write.
template <int D, int G, bool FUSED>
__global__ void __launch_bounds__(128) attn_decode_kernel(const __half* __restrict__ q, const __half* kc,
                                                          const __half* vc, const int* past, int nh,
                                                          int nkv, float scale, int splits, float* __restrict__ part,
                                                          DecodeStepInputs f, __half* out, float* out32,
                                                          const int* __restrict__ pages) {
  pdl_trigger();
  pdl_wait();
  // G is the power of two at or above the group size g = nh / nkv; heads g .. G-1 are idle.
  const int gsz = nh / nkv;
  constexpr int LPK = D / 16;    // lanes per key
  constexpr int KPW = 32 / LPK;  // key slots per warp
  const int split = blockIdx.x, kh = blockIdx.y, tq = blockIdx.z;  // tq: the query token (FUSED: 0)
  const DecodeSplit sp = decode_split(*past, tq, split, splits);
  const int kv_len = sp.kv_len, split_len = decode_split_len(kv_len, splits), k0 = sp.k0, k1 = sp.k1;
  if (k0 >= k1) return;
  q += std::size_t(tq) * nh * D;
  part += std::size_t(tq) * nh * splits * (D + 2);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int slot = lane / LPK, sub = lane % LPK;
  const int d0 = sub * 16;
  if constexpr (FUSED) {
    if (k1 == kv_len) {  // this split holds the new key: RoPE it and write the K and V rows
      const std::size_t row = (std::size_t(kv_row(pages, kv_len - 1)) * nkv + kh) * D;
      __half* kw = const_cast<__half*>(kc) + row;
      __half* vw = const_cast<__half*>(vc) + row;
      const float* kr = f.k + std::size_t(kh) * D;
      const float* vr = f.v + std::size_t(kh) * D;
      for (int i = threadIdx.x; i < D / 2; i += blockDim.x) {
        const int a = f.style == 0 ? i : 2 * i, b = f.style == 0 ? i + D / 2 : 2 * i + 1;
        const float2 c = f.cs[i];
        const float xa = kr[a], xb = kr[b];
        kw[a] = __float2half_rn(xa * c.x - xb * c.y);
        kw[b] = __float2half_rn(xb * c.x + xa * c.y);
      }
      for (int i = threadIdx.x; i < D; i += blockDim.x) vw[i] = __float2half_rn(vr[i]);
      __syncthreads();  // the block's loads below see the new row
    }
  }
  float qf[G][16];
#pragma unroll
  for (int h = 0; h < G; ++h) {
    if (h >= gsz) {
#pragma unroll
      for (int i = 0; i < 16; ++i) qf[h][i] = 0.0f;
      continue;
    }
    if constexpr (FUSED) {
      const float* qr = f.q + std::size_t(kh * gsz + h) * D;
#pragma unroll
      for (int i = 0; i < 16; ++i) qf[h][i] = rope_elem(qr, d0 + i, D, f.style, f.cs) * scale;
    } else {
      decode_q_row(q + std::size_t(kh * gsz + h) * D + d0, scale, qf[h]);
    }
  }
  float m[G], l[G], acc[G][16];
  decode_init<G>(m, l, acc);
  const std::size_t row_stride = std::size_t(nkv) * D;
  const __half* kbase = kc + std::size_t(kh) * D + d0;
  const __half* vbase = vc + std::size_t(kh) * D + d0;
  constexpr int U = G >= 8 ? 1 : 2;  // keys per slot per iteration (loads in flight)
  for (int base = k0 + warp * KPW * U; base < k1; base += 4 * KPW * U) {
    uint4 kr[U][2], vr[U][2];
    bool valid[U];
#pragma unroll
    for (int uu = 0; uu < U; ++uu) {
      const int key = base + uu * KPW + slot;
      valid[uu] = key < k1;
      const int kk = valid[uu] ? key : k0;
      const std::size_t kr_at = std::size_t(kv_row(pages, kk)) * row_stride;
      const uint4* kp = reinterpret_cast<const uint4*>(kbase + kr_at);
      const uint4* vp = reinterpret_cast<const uint4*>(vbase + kr_at);
      kr[uu][0] = kp[0]; kr[uu][1] = kp[1];
      vr[uu][0] = vp[0]; vr[uu][1] = vp[1];
    }
#pragma unroll
    for (int uu = 0; uu < U; ++uu) {
      float kf[16];
      h8_to_f(kr[uu][0], kf);
      h8_to_f(kr[uu][1], kf + 8);
      float sc[G];
      decode_scores<G, LPK>(qf, kf, sc);
      if (!valid[uu]) continue;
      float vf[16];
      h8_to_f(vr[uu][0], vf);
      h8_to_f(vr[uu][1], vf + 8);
      decode_update<G>(sc, vf, m, l, acc);
    }
  }
  // Merge the key slots of the warp (lanes with the same sub), then the warps; write the split's partials.
  decode_write_partials<D, G, LPK>(m, l, acc, warp, slot, sub, d0, gsz, kh, splits, split, part);
  if constexpr (FUSED) {
    const int ns = (kv_len + split_len - 1) / split_len;
    if (!last_block_arrival(f.counters + kh, unsigned(ns))) return;
    merge_heads<D>(part, kh, gsz, splits, ns, out, out32);
    if (threadIdx.x == 0) f.counters[kh] = 0u;  // ready for the next launch (which waits for this one)
  }
}

// Keys [kb, ke) of a quantized decode kernel's split: each slot takes U keys per round (raw
// words of all U loaded before any is converted). KF, VF: formats known at compile time (0: the
// sources' own); ST: whether keys may be staged rows.
// softcap > 0: the scores soft-capped (cap * tanh(s / cap), after the scale) before the softmax.
template <int U, int G, int LPK, int KF, int VF, bool ST>
__device__ __forceinline__ void decode_keys(const KvSource& ks, const KvSource& vs, int kb, int ke, int past,
                                            std::size_t row, std::size_t col, int warp, int slot,
                                            const float (&qf)[G][16], float (&m)[G], float (&l)[G],
                                            float (&acc)[G][16], float softcap = 0.0f) {
  constexpr int KPW = 32 / LPK;
  for (int base = kb + warp * KPW * U; base < ke; base += 4 * KPW * U) {
    KvRaw16 kr[U], vr[U];
    bool valid[U];
#pragma unroll
    for (int uu = 0; uu < U; ++uu) {
      const int key = base + uu * KPW + slot;
      valid[uu] = key < ke;
      const int kk = valid[uu] ? key : kb;
      kv_raw16<KF, ST>(ks, kk, past, row, col, kr[uu]);
      kv_raw16<VF, ST>(vs, kk, past, row, col, vr[uu]);
    }
#pragma unroll
    for (int uu = 0; uu < U; ++uu) {
      float kf[16];
      kv_cvt16<KF, ST>(ks.fmt, kr[uu], kf);
      float sc[G];
      decode_scores<G, LPK>(qf, kf, sc);
      if (!valid[uu]) continue;
      if (softcap > 0.0f) {
#pragma unroll
        for (int h = 0; h < G; ++h) sc[h] = softcap * tanhf(sc[h] / softcap);
      }
      float vf[16];
      kv_cvt16<VF, ST>(vs.fmt, vr[uu], vf);
      decode_update<G>(sc, vf, m, l, acc);
    }
  }
}

// The decode kernel's form for quantized stores (kv_cache.cu): the same split and slot layout,
// each key slot's 16 elements of K and V dequantized by kv_load8 (positions < past from the
// stores, the chunk's own rows from the staging). Partials as attn_decode_kernel's.
// It is also the model families' kernel (attention_general): fp16 stores too (KvSource without
// staging), any t (grid z), head_dim 16 .. 256, soft-capped scores (softcap > 0) and a sliding
// window (window > 0: query position p sees keys p - window + 1 .. p; a split wholly before the
// window writes an empty state, which the merge weighs 0).
template <int D, int G, int KF = 0, int VF = 0>
__global__ void __launch_bounds__(128) attn_decode_q_kernel(const __half* __restrict__ q, KvSource ks, KvSource vs,
                                                            const int* past_p, int nh, int nkv, float scale, int splits,
                                                            float* __restrict__ part, float softcap, int window) {
  pdl_trigger();
  pdl_wait();
  const int gsz = nh / nkv;
  constexpr int LPK = D / 16;
  const int split = blockIdx.x, kh = blockIdx.y, tq = blockIdx.z;
  const int past = *past_p;
  const DecodeSplit sp = decode_split(past, tq, split, splits);
  if (sp.k0 >= sp.k1) return;  // past the last key: the merge does not read this split
  const int k0 = window > 0 ? max(sp.k0, sp.kv_len - window) : sp.k0, k1 = sp.k1;
  q += std::size_t(tq) * nh * D;
  part += std::size_t(tq) * nh * splits * (D + 2);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int slot = lane / LPK, sub = lane % LPK;
  const int d0 = sub * 16;
  float qf[G][16];
#pragma unroll
  for (int h = 0; h < G; ++h) {
    if (h >= gsz) {
#pragma unroll
      for (int i = 0; i < 16; ++i) qf[h][i] = 0.0f;
      continue;
    }
    decode_q_row(q + std::size_t(kh * gsz + h) * D + d0, scale, qf[h]);
  }
  float m[G], l[G], acc[G][16];
  decode_init<G>(m, l, acc);
  const std::size_t row = std::size_t(nkv) * D, col = std::size_t(kh) * D + d0;
  if constexpr (KF != 0) {
    // Formats known: the stored keys with more in flight (their raw words are small), then the
    // chunk's staged rows.
    const int kmid = max(k0, min(k1, past));
    decode_keys<G >= 8 ? 2 : 4, G, LPK, KF, VF, false>(ks, vs, k0, kmid, past, row, col, warp, slot, qf, m, l, acc,
                                                        softcap);
    decode_keys<1, G, LPK, 0, 0, true>(ks, vs, kmid, k1, past, row, col, warp, slot, qf, m, l, acc, softcap);
  } else {
    decode_keys<G >= 8 ? 1 : 2, G, LPK, 0, 0, true>(ks, vs, k0, k1, past, row, col, warp, slot, qf, m, l, acc,
                                                    softcap);
  }
  decode_write_partials<D, G, LPK>(m, l, acc, warp, slot, sub, d0, gsz, kh, splits, split, part);
}

// Grid (nh, t), 128 threads. The splits' maxima, weights and sums are spread over the threads
// (block reductions), then each thread sums its output dimensions over the splits with eight
// independent accumulators, so the partials' loads are in flight together rather than one by one.
__device__ __forceinline__ float block_reduce_128(float v, bool is_max, float* red) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  __syncthreads();  // red is free (an earlier reduction's readers are done)
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = red[0];
#pragma unroll
  for (int w = 1; w < 4; ++w) v = is_max ? fmaxf(v, red[w]) : v + red[w];
  return v;
}

__global__ void __launch_bounds__(128) attn_decode_merge_kernel(const float* __restrict__ part, const int* past, int nh,
                                                                int d, int splits, __half* __restrict__ out,
                                                                float* __restrict__ out32,
                                                                const std::int32_t* __restrict__ out_pos, bool rot) {
  pdl_trigger();
  pdl_wait();
  const int h = blockIdx.x, tq = blockIdx.y;
  EXL_SHARED_ARRAY(float, xo, [256]);  // rot: the head's fp16 output before kv_finish's rotation
  const int kv_len = *past + tq + 1;
  const int split_len = decode_split_len(kv_len, splits);
  const int ns = min(splits, (kv_len + split_len - 1) / split_len);
  const float* p = part + (std::size_t(tq) * nh + h) * splits * (d + 2);
  const std::size_t ps = std::size_t(d) + 2;  // floats per split
  constexpr int k_wgt = 1024;
  EXL_SHARED_ARRAY(float, wgt, [k_wgt]);
  EXL_SHARED_ARRAY(float, red, [4]);
  float mx = -FLT_MAX;
  for (int s = threadIdx.x; s < ns; s += blockDim.x) mx = fmaxf(mx, p[s * ps + d]);
  mx = block_reduce_128(mx, true, red);
  float l = 0.0f;
  for (int s = threadIdx.x; s < ns; s += blockDim.x) {
    const float w = __expf(p[s * ps + d] - mx);
    if (s < k_wgt) wgt[s] = w;
    l += p[s * ps + d + 1] * w;
  }
  l = block_reduce_128(l, false, red);  // (its barriers also publish wgt)
  const float inv = 1.0f / l;
  const int nw = min(ns, k_wgt);
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int s = 0;
    for (; s + 8 <= nw; s += 8) {
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = fmaf(p[(s + j) * ps + e], wgt[s + j], acc[j]);
    }
    for (; s < nw; ++s) acc[0] = fmaf(p[s * ps + e], wgt[s], acc[0]);
    for (; s < ns; ++s) acc[1] = fmaf(p[s * ps + e], __expf(p[s * ps + d] - mx), acc[1]);
    const float o = (((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))) * inv;
    const std::size_t idx = (std::size_t(tq) * nh + h) * d + e;
    if (rot) {
      xo[e] = round_h(o);
      continue;
    }
    if (out) out[out_pos ? std::size_t(tq) * nh * d + std::size_t(__ldg(out_pos + h * d + e)) : idx] = __float2half_rn(o);
    if (out32) out32[idx] = o;
  }
  if (!rot) return;
  // A rotated V: each 64-element chunk rotated back (H x / 32, fp32 butterflies, one rounding), one
  // warp per chunk, then written (scattered into o's order with out_pos).
  __syncthreads();
  const int lane = threadIdx.x & 31;
  for (int c = threadIdx.x >> 5; c < d / 64; c += blockDim.x >> 5) {
    const int e = c * 64 + 2 * lane;
    float x0 = xo[e], x1 = xo[e + 1];
    wht_pair<false>(x0, x1, lane);
    const std::size_t base = std::size_t(tq) * nh * d;
    const std::size_t i0 = out_pos ? base + std::size_t(__ldg(out_pos + h * d + e)) : base + std::size_t(h) * d + e;
    const std::size_t i1 = out_pos ? base + std::size_t(__ldg(out_pos + h * d + e + 1)) : i0 + 1;
    out[i0] = __float2half_rn(x0 * (1.0f / 32.0f));
    out[i1] = __float2half_rn(x1 * (1.0f / 32.0f));
  }
}

template <int D, bool FUSED>
void launch_decode(const AttentionShape& a, const __half* q, const __half* k, const __half* v, const int* past,
                   float* part, const DecodeStepInputs& f, __half* out, float* out32, cudaStream_t s) {
  const dim3 grid(a.splits, a.nkv, FUSED ? 1 : a.t);
  const int g = a.nh / a.nkv;
#define EXL_DECODE(G)                                                                                              \
  launch(attn_decode_kernel<D, G, FUSED>, dim3(grid), dim3(128), 0, s, q, k, v, past, a.nh, a.nkv, a.scale, a.splits, \
         part, f, out, out32, a.pages)
  switch (g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8) {
    case 1: EXL_DECODE(1); break;
    case 2: EXL_DECODE(2); break;
    case 4: EXL_DECODE(4); break;
    case 8: EXL_DECODE(8); break;
    default: throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: heads per KV head must be 1, 2, 4 or 8");
  }
#undef EXL_DECODE
  EXL_CUDA_CHECK_LAUNCH();
}

// The model families' form (attention_general): attn_decode_q_kernel over any stores for every
// query token, then the decode merge (which also scatters into o's order or rotates V back).
template <int D>
void launch_general(const AttentionShape& a, const __half* q, const KvSource& k, const KvSource& v, const int* past,
                    float* part, cudaStream_t s) {
  const int g = a.nh / a.nkv;
#define EXL_GENERAL(G)                                                                                              \
  launch(attn_decode_q_kernel<D, G, 0, 0>, dim3(a.splits, a.nkv, a.t), dim3(128), 0, s, q, k, v, past, a.nh, a.nkv, \
         a.scale, a.splits, part, a.softcap, a.window)
  switch (g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8) {
    case 1: EXL_GENERAL(1); break;
    case 2: EXL_GENERAL(2); break;
    case 4: EXL_GENERAL(4); break;
    default: EXL_GENERAL(8); break;
  }
#undef EXL_GENERAL
  EXL_CUDA_CHECK_LAUNCH();
}

void check_heads(const AttentionShape& a) {
  if (a.nkv <= 0 || a.nh % a.nkv != 0 || a.nh / a.nkv > k_max_group)
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: heads per KV head must divide and be at most 8");
}

void check_shape(const AttentionShape& a) {
  check_heads(a);
  if (a.d != 64 && a.d != 128 && a.d != 256)
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: head_dim " + std::to_string(a.d) + " (64, 128, 256 supported)");
}

}  // namespace

bool decode_mma() { return g_decode_mma; }

int decode_ctas_per_sm(int d, int kfmt, int vfmt) {
  if (!g_decode_mma || (d != 64 && d != 128)) return 4;
  int dev = 0, smem = 0;
  EXL_CUDA_CHECK(cudaGetDevice(&dev));
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  const int pair = kfmt * 8 + vfmt;
  if (g_decode_reg && (pair == kv_q4 * 9 || pair == kv_q8 * 8 + kv_q4)) {
    int n = 0;
    if (pair == kv_q4 * 9) n = d == 64 ? decode_reg_ctas_per_sm<64, kv_q4, kv_q4>() : decode_reg_ctas_per_sm<128, kv_q4, kv_q4>();
    else n = d == 64 ? decode_reg_ctas_per_sm<64, kv_q8, kv_q4>() : decode_reg_ctas_per_sm<128, kv_q8, kv_q4>();
    return std::max(1, std::min(8, n));
  }
  std::size_t bytes = d == 64 ? decode_mma_smem_bytes<64, kv_f16, kv_f16>() : decode_mma_smem_bytes<128, kv_f16, kv_f16>();
  if (pair == kv_q4 * 9) bytes = d == 64 ? decode_mma_smem_bytes<64, kv_q4, kv_q4>() : decode_mma_smem_bytes<128, kv_q4, kv_q4>();
  else if (kv_cache_type_pair(kfmt, vfmt))
    bytes = d == 64 ? decode_mma_smem_bytes<64, kv_q8, kv_q8>() : decode_mma_smem_bytes<128, kv_q8, kv_q8>();
  // Each CTA also holds about 1 KB of the driver's reserve.
  return std::max(1, std::min(4, int(std::size_t(smem) / (bytes + 1024))));
}

bool set_decode_reg(bool on) {
  const bool was = g_decode_reg;
  g_decode_reg = on;
  return was;
}
bool decode_reg() { return g_decode_reg; }

bool set_decode_mma(bool on) {
  const bool was = g_decode_mma;
  g_decode_mma = on;
  return was;
}

bool attention_decode_form(const AttentionShape& a) { return a.t < k_prefill_min_t && a.splits >= 1; }

bool attention_general(const AttentionShape& a) {
  return a.softcap > 0.0f || a.window > 0 || (a.d != 64 && a.d != 128 && a.d != 256);
}

bool attention_folds_rope(const AttentionShape& a) {
  return a.t == 1 && a.splits >= 1 && g_decode_mma && (a.d == 64 || a.d == 128) && !a.rotate_out &&
         !attention_general(a);
}

namespace {
// The requests both store-reading forms refuse: a scattered output outside the decode form (t < 32,
// at least one split), the output rotation outside the decode form or to an fp32 output or past
// head_dim rotate_max_d, a quantized store without the chunk's staged rows.
void check_outputs_and_stores(const AttentionShape& a, const KvSource& k, const KvSource& v, const __half* out,
                              const float* out32, const std::int32_t* out_pos, int rotate_max_d) {
  if (out_pos && !(a.t < k_prefill_min_t && a.splits >= 1))
    throw_status(EXL_CUDA_ERR_INVALID, "attention: a scattered output only in the decode form (t < 32)");
  if (a.rotate_out && (!attention_decode_form(a) || !out || out32 || a.d > rotate_max_d))
    throw_status(EXL_CUDA_ERR_INVALID, "attention: the output rotation only in the decode form, to an fp16 output");
  for (const KvSource* src : {&k, &v})
    if (src->fmt != kv_f16 && !src->stage)
      throw_status(EXL_CUDA_ERR_INVALID, "attention: a quantized store without the chunk's staged rows");
}

// The general form (attention_general) over any stores: every query token's keys split evenly
// (a.splits CTAs per KV head and token, the split length chosen on the device as in the decode
// form), the decode merge.
void attention_general_form(const AttentionShape& a, const __half* q, const KvSource& k, const KvSource& v,
                            const int* past, float* part, __half* out, float* out32, cudaStream_t s,
                            const std::int32_t* out_pos) {
  if (a.t <= 0) return;
  check_heads(a);
  if (a.d != 16 && a.d != 32 && a.d != 64 && a.d != 128 && a.d != 256)
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: head_dim " + std::to_string(a.d) + " (16, 32, 64, 128, 256 supported)");
  if (a.splits < 1) throw_status(EXL_CUDA_ERR_INVALID, "attention: at least one split");
  if (a.rope) throw_status(EXL_CUDA_ERR_INVALID, "attention: RoPE is not folded into the general form");
  if (a.softcap < 0.0f || a.window < 0) throw_status(EXL_CUDA_ERR_INVALID, "attention: negative soft-cap or window");
  check_outputs_and_stores(a, k, v, out, out32, out_pos, 1 << 30);
  KvSource kp = k, vp = v;
  kp.pages = vp.pages = a.pages;
  switch (a.d) {
    case 16: launch_general<16>(a, q, kp, vp, past, part, s); break;
    case 32: launch_general<32>(a, q, kp, vp, past, part, s); break;
    case 64: launch_general<64>(a, q, kp, vp, past, part, s); break;
    case 128: launch_general<128>(a, q, kp, vp, past, part, s); break;
    default: launch_general<256>(a, q, kp, vp, past, part, s); break;
  }
  launch(attn_decode_merge_kernel, dim3(a.nh, a.t), dim3(128), 0, s, part, past, a.nh, a.d, a.splits, out, out32,
         out_pos, a.rotate_out);
  EXL_CUDA_CHECK_LAUNCH();
}
}  // namespace

std::size_t attention_partial_floats(const AttentionShape& a) {
  return std::size_t(a.t) * a.nh * a.splits * (a.d + 2);
}

void attention(const AttentionShape& a, const __half* q, const __half* k_cache, const __half* v_cache, const int* past,
               float* part, __half* out, float* out32, cudaStream_t s, const std::int32_t* out_pos) {
  if (attention_general(a)) {
    attention_general_form(a, q, KvSource{kv_f16, k_cache}, KvSource{kv_f16, v_cache}, past, part, out, out32, s,
                           out_pos);
    return;
  }
  if (a.t <= 0) return;
  check_shape(a);
  if (out_pos && !(a.t < k_prefill_min_t && a.splits >= 1))
    throw_status(EXL_CUDA_ERR_INVALID, "attention: a scattered output only in the decode form (t < 32)");
  if (a.rotate_out && (!attention_decode_form(a) || !out || out32 || a.d > 256))
    throw_status(EXL_CUDA_ERR_INVALID, "attention: the output rotation only in the decode form, to an fp16 output");
  if (a.split_len % k_tile != 0) throw_status(EXL_CUDA_ERR_INVALID, "attention: split_len must be a multiple of 64");
  if (a.rope && (!attention_folds_rope(a) || !a.rope->cs))
    throw_status(EXL_CUDA_ERR_INVALID, "attention: RoPE folded in only for one token, head_dim 64 or 128, tensor cores");
  // One token, or a short chunk (each query token on its own, its keys split evenly): the
  // decode kernels. Their work is spread over splits x KV heads x tokens.
  if (a.t < k_prefill_min_t && a.splits >= 1) {
    const DecodeStepInputs none;
    if (g_decode_mma && (a.d == 64 || a.d == 128)) {
      if (a.d == 64) launch_decode_mma<64, kv_f16, kv_f16>(a, q, k_cache, v_cache, past, part, s);
      else launch_decode_mma<128, kv_f16, kv_f16>(a, q, k_cache, v_cache, past, part, s);
    } else switch (a.d) {
      case 64: launch_decode<64, false>(a, q, k_cache, v_cache, past, part, none, nullptr, nullptr, s); break;
      case 128: launch_decode<128, false>(a, q, k_cache, v_cache, past, part, none, nullptr, nullptr, s); break;
      default: launch_decode<256, false>(a, q, k_cache, v_cache, past, part, none, nullptr, nullptr, s); break;
    }
    launch(attn_decode_merge_kernel, dim3(a.nh, a.t), dim3(128), 0, s, part, past, a.nh, a.d, a.splits, out, out32,
           out_pos, a.rotate_out);
    EXL_CUDA_CHECK_LAUNCH();
    return;
  }
  if (a.t >= k_prefill_min_t && (a.d == 64 || a.d == 128)) {  // flash attention on tensor cores
    if (a.d == 64) launch_prefill<64>(a, q, k_cache, v_cache, past, out, out32, s);
    else launch_prefill<128>(a, q, k_cache, v_cache, past, out, out32, s);
    return;
  }
  const dim3 grid(a.splits, a.nkv, a.t);
  if (a.d != 64 && a.d != 128 && a.d != 256) return;  // (check_shape threw)
  switch (a.d) {
    case 64: launch(attn_split_kernel<64>, dim3(grid), dim3(128), 0, s, q, k_cache, v_cache, past, a.nh, a.nkv, a.scale, a.split_len, a.splits, part, a.pages); break;
    case 128: launch(attn_split_kernel<128>, dim3(grid), dim3(128), 0, s, q, k_cache, v_cache, past, a.nh, a.nkv, a.scale, a.split_len, a.splits, part, a.pages); break;
    case 256: launch(attn_split_kernel<256>, dim3(grid), dim3(128), 0, s, q, k_cache, v_cache, past, a.nh, a.nkv, a.scale, a.split_len, a.splits, part, a.pages); break;
    default: throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: head_dim " + std::to_string(a.d) + " (64, 128, 256 supported)");
  }
  EXL_CUDA_CHECK_LAUNCH();
  launch(attn_merge_kernel, dim3(dim3(a.nh, a.t)), dim3(a.d < 128 ? a.d : 128), 0, s, part, past, a.nh, a.d, a.split_len, a.splits, out, out32);
  EXL_CUDA_CHECK_LAUNCH();
}

void attention(const AttentionShape& a, const __half* q, const KvSource& k, const KvSource& v, const int* past,
               float* part, __half* out, float* out32, cudaStream_t s, const std::int32_t* out_pos) {
  if (attention_general(a)) {
    attention_general_form(a, q, k, v, past, part, out, out32, s, out_pos);
    return;
  }
  if (k.fmt == kv_f16 && v.fmt == kv_f16 && !k.stage && !v.stage) {
    attention(a, q, static_cast<const __half*>(k.data), static_cast<const __half*>(v.data), past, part, out, out32, s,
              out_pos);
    return;
  }
  if (a.rope) throw_status(EXL_CUDA_ERR_INVALID, "attention: RoPE folded in only over FP16 stores without staging");
  if (a.t <= 0) return;
  check_shape(a);
  check_outputs_and_stores(a, k, v, out, out32, out_pos, 256);
  KvSource kp = k, vp = v;
  kp.pages = vp.pages = a.pages;
  // The cache types' format pairs on tensor cores (others: the CUDA-core kernels below).
  const int pair = k.fmt * 8 + v.fmt;
  const bool known = (a.d == 64 || a.d == 128) && kv_cache_type_pair(k.fmt, v.fmt);
  if (a.t < k_prefill_min_t && a.splits >= 1 && g_decode_mma && known) {
#define EXL_DECODE_MMA(D)                                                                                         \
  if (g_decode_reg && pair == kv_q4 * 9) launch_decode_reg<D, kv_q4, kv_q4>(a, q, past, part, s, k, v);     \
  else if (g_decode_reg && pair == kv_q8 * 8 + kv_q4) launch_decode_reg<D, kv_q8, kv_q4>(a, q, past, part, s, k, v); \
  else if (pair == kv_fp8 * 9) launch_decode_mma<D, kv_fp8, kv_fp8>(a, q, nullptr, nullptr, past, part, s, k, v);     \
  else if (pair == kv_q8 * 9) launch_decode_mma<D, kv_q8, kv_q8>(a, q, nullptr, nullptr, past, part, s, k, v);    \
  else if (pair == kv_q4 * 9) launch_decode_mma<D, kv_q4, kv_q4>(a, q, nullptr, nullptr, past, part, s, k, v);    \
  else launch_decode_mma<D, kv_q8, kv_q4>(a, q, nullptr, nullptr, past, part, s, k, v)
    if (a.d == 64) { EXL_DECODE_MMA(64); } else { EXL_DECODE_MMA(128); }
#undef EXL_DECODE_MMA
    launch(attn_decode_merge_kernel, dim3(a.nh, a.t), dim3(128), 0, s, part, past, a.nh, a.d, a.splits, out, out32,
           out_pos, a.rotate_out);
    EXL_CUDA_CHECK_LAUNCH();
    return;
  }
  if (a.t < k_prefill_min_t && a.splits >= 1) {
    const int g = a.nh / a.nkv;
    // The cache types' pairs have kernels of their own (`known`); others take the generic form.
#define EXL_DECODE_QF(D, G, KF, VF)                                                                                    \
  launch(attn_decode_q_kernel<D, G, KF, VF>, dim3(a.splits, a.nkv, a.t), dim3(128), 0, s, q, kp, vp, past, a.nh, a.nkv, \
         a.scale, a.splits, part, 0.0f, 0)
#define EXL_DECODE_Q(D, G)                                                        \
  if (!known || D == 256) EXL_DECODE_QF(D, G, 0, 0);                              \
  else if (pair == kv_fp8 * 9) EXL_DECODE_QF(D == 256 ? 64 : D, G, kv_fp8, kv_fp8); \
  else if (pair == kv_q8 * 9) EXL_DECODE_QF(D == 256 ? 64 : D, G, kv_q8, kv_q8);    \
  else if (pair == kv_q4 * 9) EXL_DECODE_QF(D == 256 ? 64 : D, G, kv_q4, kv_q4);    \
  else EXL_DECODE_QF(D == 256 ? 64 : D, G, kv_q8, kv_q4)
#define EXL_DECODE_QD(D)                                  \
  switch (g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8) {     \
    case 1: EXL_DECODE_Q(D, 1); break;                    \
    case 2: EXL_DECODE_Q(D, 2); break;                    \
    case 4: EXL_DECODE_Q(D, 4); break;                    \
    default: EXL_DECODE_Q(D, 8); break;                   \
  }
    switch (a.d) {
      case 64: EXL_DECODE_QD(64); break;
      case 128: EXL_DECODE_QD(128); break;
      default: EXL_DECODE_QD(256); break;
    }
#undef EXL_DECODE_QD
#undef EXL_DECODE_Q
#undef EXL_DECODE_QF
    EXL_CUDA_CHECK_LAUNCH();
    launch(attn_decode_merge_kernel, dim3(a.nh, a.t), dim3(128), 0, s, part, past, a.nh, a.d, a.splits, out, out32,
           out_pos, a.rotate_out);
    EXL_CUDA_CHECK_LAUNCH();
    return;
  }
  if (a.d == 64) launch_prefill<64, true>(a, q, nullptr, nullptr, past, out, out32, s, k, v);
  else if (a.d == 128) launch_prefill<128, true>(a, q, nullptr, nullptr, past, out, out32, s, k, v);
  else throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention: a quantized cache with head_dim 256 and chunks of 32 tokens or more");
}

void attention_decode_step(const AttentionShape& a, const DecodeStepInputs& in, __half* k_cache, __half* v_cache,
                           const int* past, float* part, __half* out, float* out32, cudaStream_t s) {
  if (attention_general(a))
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "attention_decode_step: no soft-capping, window or head_dim below 64");
  check_shape(a);
  if (a.t != 1 || a.splits < 1) throw_status(EXL_CUDA_ERR_INVALID, "attention_decode_step: one token, one split or more");
  if (!in.q || !in.k || !in.v || !in.cs || !in.counters)
    throw_status(EXL_CUDA_ERR_INVALID, "attention_decode_step: missing input");
  switch (a.d) {
    case 64: launch_decode<64, true>(a, nullptr, k_cache, v_cache, past, part, in, out, out32, s); break;
    case 128: launch_decode<128, true>(a, nullptr, k_cache, v_cache, past, part, in, out, out32, s); break;
    default: launch_decode<256, true>(a, nullptr, k_cache, v_cache, past, part, in, out, out32, s); break;
  }
}

}  // namespace exl::cuda

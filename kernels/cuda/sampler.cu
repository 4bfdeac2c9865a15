// Device sampler: the host sampler's stages (exl/generator.h) on one fp32 logits row.
// Memory layout: logits [vocab] fp32 (edited in place by penalties / bans / bias); work buffers
// e [vocab] fp32 (unnormalised kept weights, 0 = dropped; the distribution of a write_dist launch)
// and keys [vocab] u32 (the one-block path: typical's keys, the compacted kept weights and ids);
// the candidate buffer (candidate logits and ids, a PrepPart per slice, the rows kernel's scratch:
// RowsScratch); blob = SamplerParams, then int32 lists: penalty ids, penalty counts, banned ids,
// bias ids, bias values (fp32 bits); bias entries sorted by id (stable).
// Launch shape: three launches with fixed arguments (the last two with PDL), for every setting.
//  1. sample_prep_kernel, one block of 256 threads per slice of 1024 ids: the edits, each slice's
//     arg-max and largest finite logit, for a top-k of at most 512 the slice's candidates.
//  2. sample_rows_kernel, a grid of 256-thread blocks, one per slice where the device has a
//     multiprocessor for each (otherwise one per multiprocessor, each taking every gridDim.x-th
//     slice): for a
//     plain draw each slice's kept weight; for top-p, typical, a top-k above 512 (and a
//     distribution asked for) the row-wide radix selects (below), then the same per-slice sums of
//     the kept set. Its blocks meet at grid barriers (a counter the prep launch zeroes; the grid
//     never exceeds one block per multiprocessor, and launch 3 is scheduled only once every
//     block runs). Greedy and a top-k of at most 512 return at once.
//  3. sample_kernel, ONE block of 512 threads: greedy from the slices' arg-maxes; a plain draw
//     and the rows path draw from the slices' sums, scanning only the slice the draw lands in;
//     a top-k of at most 512 selects among the candidates and filters and draws over those k.
// Every reduction has a fixed order and integer atomics only, so a seed reproduces a generation.
// Algorithm: sparse edits (penalties, bans, bias); the masked arg-max and the max finite logit
// from the slices (greedy stops here); e = exp((l - max) / T), recomputed bit for bit where
// needed. Rows path: top-k, top-p and typical as radix selects over a 32-bit key (bits of e, or
// of typical's score |S / Z - ln e| inverted) with 3 digit passes of 11, 11 and 10 bits, weights
// 1 for top-k and fixed-point e * 2^40 for the mass-weighted ones; each pass's histogram is summed
// over the grid with integer atomics and read by every block after a barrier, which all pick the
// same bin; ties at the threshold key go to the lowest ids (the last pass keeps each slice's
// histogram, so the slice and then the id where the tie weight reaches the target are found
// without another barrier; none needed when every tie is kept). top-k, top-p and min-p (a
// threshold on e) keep prefixes of the order (e desc, id asc), so the kept set stays a few
// thresholds (RowsState); typical's S and Z are per-slice fp64 sums added in slice order after a
// barrier. Barriers: 3 per select, 1 more for typical's sums. One-block path (a top-k of at most
// 512): the slices' candidates weighted and selected (exact when every logit left out weighs less
// than the k-th kept one, checked; otherwise the whole row, 4 passes of 8 bits in one block), the
// kept tokens compacted in id order, then top-p, min-p, typical and the draw over those k entries.
// Precision: fp32 logits and weights, fp64 sums, 2^-40 fixed-point histogram masses; results equal
// the host's up to floating-point ties (a boundary of a cumulative mass, or equal keys).
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "launch.cuh"
#include "sampler.h"

namespace exl::cuda {
namespace {

constexpr int T = DeviceSampler::k_threads;
constexpr int k_warps = T / 32;
// Privatised histograms: lane l of every warp adds into copy l % k_copies, so the lanes of one
// atomic instruction never meet on one address (at most 2 do: the hardware serialises those, and
// a concentrated key distribution put up to 32 lanes on one bin with per-warp copies). Rows padded
// to 257 entries: the copies of one bin sit in 16 distinct bank pairs.
constexpr int k_copies = 16;
constexpr int k_hist_stride = 257;
constexpr unsigned k_full = 0xffffffffu;
constexpr int k_slice = 1024;         // ids per block of the first launch (sample_prep_kernel)
constexpr int k_prep_threads = 256;   // 4 ids a thread
constexpr int k_fast_top_k = 512;     // a top-k up to this works on the slices' candidates
constexpr int k_max_slices = T;       // ... for a vocabulary of up to T slices

struct Shared {
  union {
    unsigned long long hist[k_copies][k_hist_stride];
    struct {
      int off[k_max_slices], cnt[k_max_slices];  // the slices' candidates (offsets, counts)
    } sl;
  };
  unsigned long long bins[256];  // the copies' sum
  double d[k_warps];
  unsigned long long u[k_warps];
  float f[k_warps];
  int i[k_warps];
  // broadcasts
  unsigned prefix, prefix_mask;
  unsigned long long above, target;
  double before;  // a plain draw: the weight of the slices before the one it lands in
  int cut;
  int found_id;
  SamplerParams prm;
};

__device__ __forceinline__ unsigned long long fixed_weight(float e) {
  return __float2ull_rn(e * 1099511627776.0f);  // 2^40; e <= 1
}

// Block-wide reductions over W warps (scratch: W entries): every thread gets the same bits
// (commutative butterfly, fixed order).
template <int W = k_warps, class V, class Op>
__device__ V block_reduce(V v, V identity, V* scratch, Op op) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(k_full, v, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < W ? scratch[threadIdx.x & 31] : identity;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(k_full, v, o));
  return v;
}

struct Add {
  template <class V> __device__ V operator()(V a, V b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct Min {
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

// Exclusive scan over threads (W warps) in thread order; *total = the sum of all.
template <int W = k_warps, class V>
__device__ V block_exclusive_scan(V v, V* scratch, V* total) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  V x = v;
  for (int o = 1; o < 32; o <<= 1) {
    const V y = __shfl_up_sync(k_full, x, o);
    if (lane >= o) x = x + y;
  }
  V excl = __shfl_up_sync(k_full, x, 1);
  if (lane == 0) excl = V(0);
  __syncthreads();
  if (lane == 31) scratch[w] = x;
  __syncthreads();
  V before = V(0), all = V(0);
  for (int j = 0; j < W; ++j) {
    if (j == w) before = all;
    all = all + scratch[j];
  }
  *total = all;
  return before + excl;
}

// Arg-max with the host's rule (first index of the largest non-NaN value; index 0 when l[0] is
// NaN or everything is NaN).
__device__ void argmax_merge(float& v, int& i, float v2, int i2) {
  if (isnan(v2)) return;
  if (i == INT_MAX || v2 > v || (v2 == v && i2 < i)) { v = v2; i = i2; }
}

// The block's arg-max (W warps; sf, si: W entries of scratch) of the threads' (bv, bi), left in
// thread 0's bv, bi (bi INT_MAX: none).
template <int W>
__device__ void block_argmax(float& bv, int& bi, float* sf, int* si) {
  for (int o = 16; o > 0; o >>= 1) {
    const float v2 = __shfl_xor_sync(k_full, bv, o);
    const int i2 = __shfl_xor_sync(k_full, bi, o);
    if (i2 != INT_MAX) argmax_merge(bv, bi, v2, i2);
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) { sf[threadIdx.x >> 5] = bv; si[threadIdx.x >> 5] = bi; }
  __syncthreads();
  if (threadIdx.x == 0) {
    bv = -INFINITY;
    bi = INT_MAX;
    for (int w = 0; w < W; ++w)
      if (si[w] != INT_MAX) argmax_merge(bv, bi, sf[w], si[w]);
  }
}

// The settings from the blob into shared memory, for the whole block.
__device__ __forceinline__ void load_settings(SamplerParams& dst, const int* blob) {
  if (threadIdx.x == 0) memcpy(&dst, blob, sizeof(SamplerParams));
  __syncthreads();
}

// Ids at or past this are masked (-inf).
__device__ __forceinline__ int vocab_limit(const SamplerParams& p, int vocab) {
  return p.vocab_limit > 0 && p.vocab_limit < vocab ? p.vocab_limit : vocab;
}

// A logit's softmax weight (unnormalised, max 1; 0 = dropped). The mass kernel and the select
// must compute it bit for bit alike: the row's fixed-point total is summed from both.
__device__ __forceinline__ float softmax_weight(float l, float mx, float inv_t) {
  return isfinite(l) ? expf((l - mx) * inv_t) : 0.0f;
}

// The passes over the vocabulary load several float4 per thread before using any, so a pass costs
// one L2 latency per batch of 4 * k_quads * T elements rather than one per T elements (a 128k
// vocabulary: 32 latencies instead of 251 with 512 threads). Each element's work is unchanged, so
// are the results (the per-thread order of typical sampling's fp64 sums aside: the host's differs
// from it anyway).
constexpr int k_quads = 2;

// f(i, a[i], b[i]) for every i < n (b[i] = 0 without b), each thread its quads q = threadIdx.x,
// + T, ..., i = 4q .. 4q + 3 in increasing order. 16-byte loads where a (and b) are aligned.
template <bool HasB, class F>
__device__ __forceinline__ void for_quads(int n, const float* a, const unsigned* b, F f) {
  const int nq = (n + 3) / 4;
  const bool vec = ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) & 15u) == 0;
  for (int base = threadIdx.x; base < nq; base += k_quads * T) {
    float4 va[k_quads];
    uint4 vb[k_quads];
#pragma unroll
    for (int u = 0; u < k_quads; ++u) {
      const int q = base + u * T, i = 4 * q;
      va[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      vb[u] = make_uint4(0u, 0u, 0u, 0u);
      if (q >= nq) continue;
      if (vec && i + 3 < n) {
        va[u] = *reinterpret_cast<const float4*>(a + i);
        if constexpr (HasB) vb[u] = *reinterpret_cast<const uint4*>(b + i);
      } else {
        float* fa = &va[u].x;
        unsigned* fb = &vb[u].x;
        for (int c = 0; c < 4 && i + c < n; ++c) {
          fa[c] = a[i + c];
          if constexpr (HasB) fb[c] = b[i + c];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < k_quads; ++u) {
      const int q = base + u * T, i = 4 * q;
      if (q >= nq) continue;
      const float fa[4] = {va[u].x, va[u].y, va[u].z, va[u].w};
      const unsigned fb[4] = {vb[u].x, vb[u].y, vb[u].z, vb[u].w};
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (i + c < n) f(i + c, fa[c], fb[c]);
    }
  }
}
template <class F>
__device__ __forceinline__ void for_each(int n, const float* a, F f) {
  for_quads<false>(n, a, nullptr, [&](int i, float v, unsigned) { f(i, v); });
}
// f(i, e[i], key) with the key of e[i] (keys[i], or e[i]'s own bits without keys).
template <class F>
__device__ __forceinline__ void for_keyed(int n, const float* e, const unsigned* keys, F f) {
  if (keys) for_quads<true>(n, e, keys, f);
  else for_quads<false>(n, e, nullptr, [&](int i, float v, unsigned) { f(i, v, __float_as_uint(v)); });
}

// The id-ordered scans (ties at a threshold, the draw) give each thread one contiguous chunk of
// the vocabulary, a multiple of 4 long: [lo, hi) of thread threadIdx.x.
struct Chunk {
  int lo, hi;
};
__device__ __forceinline__ Chunk chunk_of(int vocab) {
  const int len = ((vocab + T - 1) / T + 3) & ~3;
  const int lo = min(vocab, int(threadIdx.x) * len);
  return Chunk{lo, min(vocab, lo + len)};
}

// f(i, e[i]) for i in [c.lo, c.hi) in order, until f returns false (loads batched as in for_quads).
template <class F>
__device__ __forceinline__ void for_chunk(const float* e, Chunk c, F f) {
  const bool vec = (reinterpret_cast<std::uintptr_t>(e) & 15u) == 0;
  for (int b = c.lo; b < c.hi; b += 4 * k_quads) {
    float v[4 * k_quads];
#pragma unroll
    for (int u = 0; u < k_quads; ++u) {
      const int i = b + 4 * u;
      if (vec && i + 3 < c.hi) {
        const float4 x = *reinterpret_cast<const float4*>(e + i);
        v[4 * u] = x.x; v[4 * u + 1] = x.y; v[4 * u + 2] = x.z; v[4 * u + 3] = x.w;
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[4 * u + j] = i + j < c.hi ? e[i + j] : 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < 4 * k_quads; ++u)
      if (b + u < c.hi && !f(b + u, v[u])) return;
  }
}

// Copies the kept tokens (e > 0) to ce / cid in id order; returns how many.
__device__ int compact(const float* e, int vocab, float* ce, int* cid, Shared& sh) {
  const Chunk ch = chunk_of(vocab);
  int mine = 0;
  for_chunk(e, ch, [&](int, float ei) {
    mine += ei > 0.0f;
    return true;
  });
  int total = 0;
  int at = block_exclusive_scan(mine, sh.i, &total);
  if (mine > 0)
    for_chunk(e, ch, [&](int i, float ei) {
      if (ei > 0.0f) { ce[at] = ei; cid[at] = i; ++at; }
      return true;
    });
  __syncthreads();
  return total;
}

// The mass a top-p (typical) keeps: frac of the kept weight `total` (fixed point), at least 1.
__device__ __forceinline__ unsigned long long mass_target(float frac, unsigned long long total) {
  unsigned long long t = (unsigned long long)ceil(double(frac) * double(total));
  if (t < 1) t = 1;
  if (t > total) t = total;
  return t;
}

// Keeps the best tokens by (key desc, id asc) whose weight (1 each, or fixed-point e) reaches
// `target` (count) or `frac` of the kept weight (mass); the rest get e = 0. mass_total: the kept
// weight the fraction refers to when e [vocab] holds only part of the row (0: e's own sum).
__device__ void select_top(float* e, const unsigned* keys, int vocab, bool mass, unsigned long long count_target,
                           float frac, Shared& sh, unsigned long long mass_total = 0) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  auto key_of = [&](int i, float ei) { return keys ? keys[i] : __float_as_uint(ei); };
  if (threadIdx.x == 0) {
    sh.prefix = 0; sh.prefix_mask = 0; sh.above = 0; sh.target = count_target;
  }
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    for (int j = threadIdx.x; j < k_copies * k_hist_stride; j += T) (&sh.hist[0][0])[j] = 0;
    __syncthreads();
    const unsigned prefix = sh.prefix, pmask = sh.prefix_mask;
    unsigned long long* hist = sh.hist[lane % k_copies];
    for_keyed(vocab, e, keys, [&](int, float ei, unsigned k) {
      if (!(ei > 0.0f) || (k & pmask) != prefix) return;
      atomicAdd(&hist[(k >> shift) & 255u], mass ? fixed_weight(ei) : 1ull);
    });
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += T) {
      unsigned long long t = 0;
      for (int c = 0; c < k_copies; ++c) t += sh.hist[c][b];
      sh.bins[b] = t;
    }
    __syncthreads();
    if (w == 0) {
      // Lane l owns bins 8l .. 8l+7; suffix sums from the top bin down.
      unsigned long long h[8], s = 0;
      for (int b = 0; b < 8; ++b) {
        const unsigned long long t = sh.bins[lane * 8 + b];
        h[b] = t;
        s += t;
      }
      unsigned long long incl = s;
      for (int o = 1; o < 32; o <<= 1) {
        const unsigned long long y = __shfl_down_sync(k_full, incl, o);
        if (lane + o < 32) incl += y;
      }
      if (pass == 0 && mass) {
        const unsigned long long total = __shfl_sync(k_full, incl, 0);
        if (lane == 0) sh.target = mass_target(frac, mass_total ? mass_total : total);
        __syncwarp();
      }
      const unsigned long long target = sh.target, above = sh.above;
      __syncwarp();  // every lane has read them before one lane updates them
      const unsigned long long excl = incl - s;
      if (above + excl < target && target <= above + incl) {
        unsigned long long acc = above + excl;
        for (int b = 7; b >= 0; --b) {
          if (acc + h[b] >= target) {
            sh.prefix = prefix | (unsigned(lane * 8 + b) << shift);
            sh.prefix_mask = pmask | (255u << shift);
            sh.above = acc;
            break;
          }
          acc += h[b];
        }
      }
    }
    __syncthreads();
  }
  // Ties at the threshold key: the lowest ids until the weight reaches the target.
  const unsigned thr = sh.prefix;
  const unsigned long long need = sh.target - sh.above;  // > 0
  const Chunk ch = chunk_of(vocab);
  unsigned long long mine = 0;
  for_chunk(e, ch, [&](int i, float ei) {
    if (ei > 0.0f && key_of(i, ei) == thr) mine += mass ? fixed_weight(ei) : 1ull;
    return true;
  });
  unsigned long long tot = 0;
  const unsigned long long before = block_exclusive_scan(mine, sh.u, &tot);
  if (threadIdx.x == 0) sh.cut = vocab - 1;  // fallback: every tie (cannot happen: tot >= need)
  __syncthreads();
  if (before < need && need <= before + mine) {
    unsigned long long acc = before;
    for_chunk(e, ch, [&](int i, float ei) {
      if (ei > 0.0f && key_of(i, ei) == thr) {
        acc += mass ? fixed_weight(ei) : 1ull;
        if (acc >= need) { sh.cut = i; return false; }
      }
      return true;
    });
  }
  __syncthreads();
  const int cut = sh.cut;
  for_keyed(vocab, e, keys, [&](int i, float ei, unsigned k) {
    if (ei > 0.0f && (k < thr || (k == thr && i > cut))) e[i] = 0.0f;
  });
  __syncthreads();
}

__device__ void finish(const SamplerParams& p, float* e, int vocab, int id, int candidates, float prob,
                       SamplerResult* out) {
  if (p.write_dist)
    for (int i = threadIdx.x; i < vocab; i += T) e[i] = i == id ? 1.0f : 0.0f;
  if (threadIdx.x == 0) { out->id = id; out->candidates = candidates; out->p = prob; }
}

// Stages 8-11 on the kept weights w [n] (ids cid [n] in id order, or none: w is the row e itself,
// index = id) and the write-back of the distribution into e [vocab].
__device__ __forceinline__ void filter_and_draw(const SamplerParams& p, float* w, int n, const int* cid, float* e,
                                                unsigned* keys, int vocab, int best, Shared& sh,
                                                SamplerResult* out) {
  // 8. top-p: the smallest set of the most likely tokens whose mass reaches top_p.
  if (p.top_p < 1.0f) select_top(w, nullptr, n, true, 0, p.top_p, sh);
  // 9. min-p: keep e >= min_p * e_max.
  if (p.min_p > 0.0f) {
    float emax = 0.0f;
    for_each(n, w, [&](int, float ei) { emax = fmaxf(emax, ei); });
    emax = block_reduce(emax, 0.0f, sh.f, Max());
    const float floor_v = emax * p.min_p;
    for_each(n, w, [&](int i, float ei) {
      if (ei > 0.0f && ei < floor_v) w[i] = 0.0f;
    });
    __syncthreads();
  }
  // 10. typical: with p = e / Z, |-ln p - H| = |S / Z - ln e| where S = sum e ln e; keys order
  // by that score ascending (inverted float bits), mass-weighted like top-p.
  if (p.typical > 0.0f && p.typical < 1.0f) {
    double z = 0, s = 0;
    for_each(n, w, [&](int, float ei) {
      if (ei > 0.0f) { z += double(ei); s += double(ei) * double(logf(ei)); }
    });
    z = block_reduce(z, 0.0, sh.d, Add());
    s = block_reduce(s, 0.0, sh.d, Add());
    const float m = float(s / z);
    for_each(n, w, [&](int i, float ei) { keys[i] = ei > 0.0f ? ~__float_as_uint(fabsf(m - logf(ei))) : 0u; });
    __syncthreads();
    select_top(w, keys, n, true, 0, p.typical, sh);
  }

  // 11. Draw: walk the kept tokens in id order until the cumulative weight exceeds u * total.
  const Chunk ch = chunk_of(n);
  double mine = 0;
  int kept = 0, last = -1;
  for_chunk(w, ch, [&](int i, float ei) {
    if (ei > 0.0f) { mine += double(ei); ++kept; last = i; }
    return true;
  });
  double total = 0;
  const double before = block_exclusive_scan(mine, sh.d, &total);
  kept = block_reduce(kept, 0, sh.i, Add());
  last = block_reduce(last, -1, sh.i, Max());
  const double r = p.uniform * total;
  int found = INT_MAX;
  if (before <= r) {
    double cum = before;
    for_chunk(w, ch, [&](int i, float ei) {
      cum += double(ei);
      if (ei > 0.0f && r < cum) { found = i; return false; }
      return true;
    });
  }
  found = block_reduce(found, INT_MAX, sh.i, Min());
  const int at = found != INT_MAX ? found : last;  // index into w (-1: nothing kept)
  const int id = at < 0 ? best : cid ? cid[at] : at;
  const float prob = total > 0 ? float(double(w[at]) / total) : 1.0f;
  if (p.write_dist) {
    __syncthreads();
    if (cid) {  // the full row: zeros, then the kept tokens
      for (int i = threadIdx.x; i < vocab; i += T) e[i] = 0.0f;
      __syncthreads();
      for (int j = threadIdx.x; j < n; j += T) e[cid[j]] = total > 0 ? float(double(w[j]) / total) : 0.0f;
    } else {
      for_each(vocab, e, [&](int i, float ei) { e[i] = total > 0 ? float(double(ei) / total) : 0.0f; });
    }
  }
  if (threadIdx.x == 0) { out->id = id; out->candidates = kept; out->p = prob; }
}

// ---- Launch 1 (sample_prep_kernel, one block per slice of k_slice ids): the edits, each slice's
// arg-max and largest finite logit, and for a top-k of at most k_fast_top_k the slice's
// candidates.
// A slice's candidates are its finite logits >= thr, thr just under the slice's own k-th largest
// (or every finite logit when it has fewer than k): one of the row's k largest has fewer than k
// larger logits in the row, so fewer in its slice, and is a candidate.
// Launch 2 (sample_rows_kernel, a grid of slice blocks) does the row-wide work of the other
// settings (below); launch 3 (sample_kernel, one block) needs no pass over the vocabulary for
// greedy sampling, draws from the slices' sums of launch 2, and for a top-k of at most
// k_fast_top_k works on the candidates (typically a few more than k) once it has checked that every
// logit left out has a weight below the k-th kept one (otherwise it takes the whole row).

// One slice's results (32 bytes).
struct PrepPart {
  float max_finite;  // largest finite logit of the slice (-inf: none)
  float arg_value;   // the slice's arg-max by the host's rule (value, id; INT_MAX: all NaN)
  int arg_id;
  int count;         // candidates written (-1: none asked for); launch 2: the slice's kept ids
  float thr;         // the candidates are the slice's finite logits >= thr (-inf: all of them)
  int last;          // launch 2: the slice's last kept id (-1: none)
  double sum;        // launch 2: the slice's kept weight, summed in fp64
};

// A plain draw (temperature, maybe min-p; no top-k, top-p or typical, no distribution asked for:
// what an OpenAI client that sets no filter gets): sample_rows_kernel sums each slice's kept
// weight, and sample_kernel finds the slice where the draw lands and scans only that one.
__device__ __forceinline__ bool plain_draw(const SamplerParams& p) {
  return !p.greedy && p.top_k == 0 && !(p.top_p < 1.0f) && !(p.typical > 0.0f && p.typical < 1.0f) && !p.write_dist;
}

// Every other sampled setting without a top-k of at most k_fast_top_k (top-p, typical, a larger
// top-k, a distribution asked for): the row's selects run in sample_rows_kernel, over the grid.
// All three kernels must agree on it.
__device__ __forceinline__ bool rows_select_path(const SamplerParams& p) {
  return !p.greedy && !plain_draw(p) && !(p.top_k > 0 && p.top_k <= k_fast_top_k);
}

// A plain draw's weight of id i: the softmax weight, 0 under min-p's floor (min_p times the row's
// largest weight, which is exp(0) = 1). Both kernels weigh alike.
__device__ __forceinline__ float plain_weight(const float* logits, int i, int limit, float mx, float inv_t,
                                              float min_p) {
  const float w = softmax_weight(i < limit ? logits[i] : -INFINITY, mx, inv_t);
  return w > 0.0f && !(w < min_p) ? w : 0.0f;
}

// ---- The row-wide selects of launch 2. The kept set is always described by a few thresholds
// (RowsState): top-k, top-p and min-p each keep a prefix of the order (e desc, id asc), so after
// them the set is {e > 0, key(e) > thr_a or (key(e) == thr_a and id <= cut_a), e >= floor}; typical
// then keeps {typical key > thr_t or (== thr_t and id <= cut_t)} of that. Each select is a radix
// select over the grid: 3 digit passes (11, 11 and 10 bits); in each, every block builds its
// slices' histogram (weights as in select_top: 1, or fixed-point e) of the entries in the set that
// match the prefix chosen so far, adds it into a global histogram of the pass (integer atomics),
// and after a grid barrier every block reads that histogram and picks the same bin. Ties at the
// final key go by id: the last pass also leaves each slice's histogram, so every block finds the
// slice where the tie weight reaches the target and the id there.
struct RowsState {
  unsigned thr_a;
  int cut_a;
  float floor;  // min-p (e >= floor; 0: off)
  int typ;      // typical applied
  float m;      // typical's S / Z
  unsigned thr_t;
  int cut_t;
  int pad_;
};

constexpr int k_rows_threads = k_prep_threads;  // 4 ids of a slice per thread
constexpr int k_rows_warps = k_rows_threads / 32;
constexpr int k_bins = 2048;       // the first two digits: 11 bits
constexpr int k_last_bins = 1024;  // the last one: 10 bits
constexpr int k_hist_passes = 9;   // top-k, top-p and typical: 3 passes each

// The rows kernel's scratch, in the candidate buffer after the slices' PrepParts (sampler.h's
// candidate_bytes counts it): the state and the barrier counter (64 bytes), the passes' global
// histograms, each slice's last-digit histogram, each slice's entropy sums (16 bytes).
struct RowsScratch {
  RowsState* state;
  unsigned* bar;
  unsigned long long* hist;        // [k_hist_passes][k_bins], zeroed by the prep launch
  unsigned long long* slice_hist;  // [slices][k_last_bins]
  double* ent;                     // [slices][2]
};

__host__ __device__ __forceinline__ std::size_t rows_scratch_offset(int vocab) {
  return std::size_t(vocab) * 8 + std::size_t((vocab + k_slice - 1) / k_slice) * 32;
}
__host__ __device__ __forceinline__ RowsScratch rows_scratch(void* cand, int vocab) {
  const int slices = (vocab + k_slice - 1) / k_slice;
  unsigned char* b = static_cast<unsigned char*>(cand) + rows_scratch_offset(vocab);
  RowsScratch r;
  r.state = reinterpret_cast<RowsState*>(b);
  r.bar = reinterpret_cast<unsigned*>(b + 32);
  r.hist = reinterpret_cast<unsigned long long*>(b + 64);
  r.slice_hist = r.hist + std::size_t(k_hist_passes) * k_bins;
  r.ent = reinterpret_cast<double*>(r.slice_hist + std::size_t(slices) * k_last_bins);
  return r;
}

// Thread t's contiguous chunk [lo, hi) of `slices` slices split over `threads` threads (a
// block's ordered scan over per-slice values: chunks in thread order are slice order).
struct SliceChunk {
  int lo, hi;
};
__device__ __forceinline__ SliceChunk slice_chunk(int slices, int threads) {
  const int per = (slices + threads - 1) / threads;
  const int lo = min(slices, int(threadIdx.x) * per);
  return {lo, min(slices, lo + per)};
}

__device__ __forceinline__ bool in_prefix(unsigned key, int i, unsigned thr, int cut) {
  return key > thr || (key == thr && i <= cut);
}
// Typical's key: |S / Z - ln e| ascending as the key descends (inverted float bits).
__device__ __forceinline__ unsigned typical_key(float e, float m) { return ~__float_as_uint(fabsf(m - logf(e))); }
__device__ __forceinline__ bool in_set(const RowsState& st, float e, int i) {
  return e > 0.0f && in_prefix(__float_as_uint(e), i, st.thr_a, st.cut_a) && e >= st.floor &&
         (!st.typ || in_prefix(typical_key(e, st.m), i, st.thr_t, st.cut_t));
}

__device__ __forceinline__ std::uint64_t global_ns() {
#ifdef EXL_CUDA_EMU
  return ::exl::emu::now_ns();
#else
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
#endif
}

// Grid barrier n (1, 2, ...) of launch 2: every block arrives and waits for all gridDim.x (the
// grid is at most one block per multiprocessor, DeviceSampler's constructor; the next launch is
// scheduled only once every block has started, pdl_trigger). The counter counts up within a launch
// and is zeroed by the prep launch.
__device__ __forceinline__ void grid_sync(unsigned* bar, unsigned n) {
  __syncthreads();
  if (threadIdx.x == 0) {
    atom_acq_rel_add(bar, 1u);
    const unsigned want = n * gridDim.x;
    const std::uint64_t t0 = global_ns();
    while (ld_acquire(bar) < want)
      if (global_ns() - t0 > 10000000000ull) __trap();  // 10 s: a block never arrived; an error, not a hang
  }
  __syncthreads();
}

// The softmax weights of the thread's four ids of slice s (ids s * k_slice + 4 * threadIdx.x + c,
// c = 0..3; 0 past the vocabulary).
__device__ __forceinline__ void slice_weights(const float* logits, int vocab, int limit, int s, float mx, float inv_t,
                                              float (&w)[4]) {
  const int i0 = s * k_slice + 4 * int(threadIdx.x);
  float v[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  if (i0 + 3 < vocab && (reinterpret_cast<std::uintptr_t>(logits) & 15u) == 0) {
    const float4 x = *reinterpret_cast<const float4*>(logits + i0);
    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
  } else {
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (i0 + c < vocab) v[c] = logits[i0 + c];
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) w[c] = softmax_weight(i0 + c < limit ? v[c] : -INFINITY, mx, inv_t);
}

// The weights of the slice a thread visited last, kept in registers: a block with one slice (the
// grid holds one block per slice wherever the device has a multiprocessor for each) loads and weighs it once for all
// of the selects' passes.
struct SliceCache {
  int s = -1;
  float w[4];
};

// f(i, e) for the thread's four ids of slice s in id order (ids past the vocabulary skipped), e
// the softmax weight; `keep`: the weights stay in the cache for the next visit.
template <class F>
__device__ __forceinline__ void visit_slice(const float* logits, int vocab, int limit, int s, float mx, float inv_t,
                                            SliceCache& sc, bool keep, F f) {
  const int i0 = s * k_slice + 4 * int(threadIdx.x);
  if (i0 >= vocab) return;
  float w[4];
  if (sc.s == s) {
#pragma unroll
    for (int c = 0; c < 4; ++c) w[c] = sc.w[c];
  } else {
    slice_weights(logits, vocab, limit, s, mx, inv_t, w);
    if (keep) {
      sc.s = s;
#pragma unroll
      for (int c = 0; c < 4; ++c) sc.w[c] = w[c];
    }
  }
#pragma unroll
  for (int c = 0; c < 4; ++c)
    if (i0 + c < vocab) f(i0 + c, w[c]);
}

struct RowsShared {
  unsigned long long hist[k_bins];
  unsigned long long u[k_rows_warps];
  double d[k_rows_warps];
  float f[k_rows_warps];
  int i[k_rows_warps];
  unsigned prefix;
  int cut_slice, cut;
  unsigned long long above, cut_before, tie_total, tie_count;
};

struct RowsCtx {
  const float* logits;
  int vocab, limit, slices;
  float mx, inv_t;
  RowsScratch rs;
  SliceCache* sc;  // the thread's
};

// One radix select over the set `st` describes (the key: key_of(e)): keeps the best entries by
// (key desc, id asc) whose weight (1 each, or fixed-point e) reaches `count` (count) or `frac` of
// the set's weight (mass). Returns false (nothing to do) when a count covers the whole set;
// otherwise the threshold key and the last id kept at it. Uniform over the grid: every block
// takes the same decisions from the same global histograms.
// uniform_ties: entries with equal keys weigh alike (the key is e's bits), so the ties kept at the
// threshold follow from their count.
template <class Key>
__device__ __forceinline__ bool rows_select(const RowsCtx& c, const RowsState& st, RowsShared& sh, int& hpass,
                                            unsigned& nbar, bool mass, unsigned long long count, float frac,
                                            Key key_of, bool uniform_ties, unsigned& thr_out, int& cut_out) {
  constexpr int R = k_rows_threads;
  const int tid = threadIdx.x;
  unsigned prefix = 0, pmask = 0;
  unsigned long long above = 0, target = count;
  for (int pass = 0; pass < 3; ++pass) {
    const int shift = pass == 0 ? 21 : pass == 1 ? 10 : 0;
    const int nb = pass == 2 ? k_last_bins : k_bins;
    unsigned long long* g = c.rs.hist + std::size_t(hpass++) * k_bins;
    // (The last pass also counts the entries of each bin, in the upper half of the histograms.)
    for (int s = blockIdx.x; s < c.slices; s += gridDim.x) {
      for (int b = tid; b < k_bins; b += R) sh.hist[b] = 0;
      __syncthreads();
      visit_slice(c.logits, c.vocab, c.limit, s, c.mx, c.inv_t, *c.sc, true, [&](int i, float e) {
        if (!in_set(st, e, i)) return;
        const unsigned k = key_of(e);
        if ((k & pmask) != prefix) return;
        const unsigned bin = (k >> shift) & unsigned(nb - 1);
        atomicAdd(&sh.hist[bin], mass ? fixed_weight(e) : 1ull);
        if (pass == 2) atomicAdd(&sh.hist[k_last_bins + bin], 1ull);
      });
      __syncthreads();
      for (int b = tid; b < k_bins; b += R) {
        const unsigned long long v = sh.hist[b];
        if (v) atomicAdd(g + b, v);
        if (pass == 2 && b < k_last_bins) c.rs.slice_hist[std::size_t(s) * k_last_bins + b] = v;
      }
      __syncthreads();  // before the next slice clears the histogram
    }
    grid_sync(c.rs.bar, ++nbar);
    // Every block: the same bin from the same histogram. Thread t owns bins per * t .. per * t + per - 1.
    const int per = nb / R;
    unsigned long long h[k_bins / R], mine = 0;
#pragma unroll
    for (int j = 0; j < k_bins / R; ++j) {
      h[j] = j < per ? __ldcg(g + tid * per + j) : 0ull;
      mine += h[j];
    }
    unsigned long long total = 0;
    const unsigned long long before = block_exclusive_scan<k_rows_warps>(mine, sh.u, &total);
    if (pass == 0) {
      if (mass) target = mass_target(frac, total);
      else if (target >= total) return false;  // (the same in every thread of the grid)
    }
    const unsigned long long higher = above + (total - before - mine);  // the bins above this thread's
    if (higher < target && target <= higher + mine) {
      unsigned long long acc = higher;
      for (int j = per - 1; j >= 0; --j) {
        if (acc + h[j] >= target) {
          const int bin = tid * per + j;
          sh.prefix = prefix | (unsigned(bin) << shift);
          sh.above = acc;
          sh.tie_total = h[j];  // (the last pass: the weight and count of the entries at the threshold key)
          sh.tie_count = pass == 2 && !uniform_ties ? __ldcg(g + k_last_bins + bin) : 0ull;
          break;
        }
        acc += h[j];
      }
    }
    __syncthreads();
    prefix = sh.prefix;
    above = sh.above;
    pmask |= unsigned(nb - 1) << shift;
  }
  // Ties at the threshold key: the lowest ids until the weight reaches the target. The slices'
  // tie weights (their last-digit bin of the key), in slice order.
  const unsigned thr = prefix;
  const unsigned long long need = target - above;  // > 0
  const unsigned long long ties = sh.tie_total;
  bool all = need == ties || sh.tie_count == 1;  // every tie kept: no id to find
  if (uniform_ties) {
    const unsigned long long w = mass ? fixed_weight(__uint_as_float(thr)) : 1ull;
    all = (need + w - 1) / w * w >= ties;
  }
  if (all) {
    thr_out = thr;
    cut_out = INT_MAX;
    return true;
  }
  const int b = int(thr & unsigned(k_last_bins - 1));
  const SliceChunk ch = slice_chunk(c.slices, R);
  unsigned long long mine = 0;
  for (int s = ch.lo; s < ch.hi; ++s) mine += __ldcg(c.rs.slice_hist + std::size_t(s) * k_last_bins + b);
  if (tid == 0) { sh.cut_slice = -1; sh.cut = INT_MAX; }
  unsigned long long tot = 0;
  const unsigned long long bef = block_exclusive_scan<k_rows_warps>(mine, sh.u, &tot);  // syncs
  if (bef < need && need <= bef + mine) {
    unsigned long long acc = bef;
    for (int s = ch.lo; s < ch.hi; ++s) {
      const unsigned long long v = __ldcg(c.rs.slice_hist + std::size_t(s) * k_last_bins + b);
      if (acc + v >= need) { sh.cut_slice = s; sh.cut_before = acc; break; }
      acc += v;
    }
  }
  __syncthreads();
  const int cs = sh.cut_slice;
  if (cs >= 0) {  // (uniform; always, unless the histograms disagree with the row)
    const unsigned long long rest = need - sh.cut_before;
    unsigned long long w[4] = {0, 0, 0, 0}, m4 = 0;
    visit_slice(c.logits, c.vocab, c.limit, cs, c.mx, c.inv_t, *c.sc, false, [&](int i, float e) {
      if (in_set(st, e, i) && key_of(e) == thr) w[i & 3] = mass ? fixed_weight(e) : 1ull;
    });
    for (int j = 0; j < 4; ++j) m4 += w[j];
    unsigned long long in_slice = 0;
    const unsigned long long pre = block_exclusive_scan<k_rows_warps>(m4, sh.u, &in_slice);
    if (pre < rest && rest <= pre + m4) {
      unsigned long long acc = pre;
      for (int j = 0; j < 4; ++j) {
        acc += w[j];
        if (w[j] > 0 && acc >= rest) { sh.cut = cs * k_slice + 4 * tid + j; break; }
      }
    }
    __syncthreads();
  }
  thr_out = thr;
  cut_out = sh.cut;
  __syncthreads();  // sh.cut read by all before a later select writes it
  return true;
}

// Launch 2: a grid of at most one block per slice (each block takes slices blockIdx.x,
// + gridDim.x, ...). A plain draw: each slice's kept weight (fp64), kept ids and last kept id.
// The row-select settings (rows_select_path): top-k (above k_fast_top_k), top-p, min-p and typical
// as radix selects over the grid, then the same per-slice sums of the kept set, and the set's
// thresholds for launch 3. Other settings: nothing to do.
// (Launch bounds for one block per SM: 104 registers, no spills; the grid is one block per SM at most.)
__global__ void __launch_bounds__(k_rows_threads, 1)
    sample_rows_kernel(const float* __restrict__ logits, int vocab, const int* __restrict__ blob,
                       PrepPart* __restrict__ part, RowsScratch rs) {
  constexpr int W = k_rows_warps;
  EXL_BLOCK_SHARED(RowsShared, sh);
  pdl_wait();
  pdl_trigger();  // launch 3 is scheduled once every block of this grid runs
  SamplerParams p;
  memcpy(&p, blob, sizeof(SamplerParams));
  const bool plain = plain_draw(p);
  if (p.greedy || !(plain || rows_select_path(p))) return;
  const int slices = (vocab + k_slice - 1) / k_slice;
  float mx = -INFINITY;
  for (int b = threadIdx.x; b < slices; b += k_rows_threads) mx = fmaxf(mx, part[b].max_finite);
  mx = block_reduce<W>(mx, -INFINITY, sh.f, Max());
  if (mx == -INFINITY) return;  // (every block alike) launch 3 samples the arg-max
  const float inv_t = 1.0f / p.temperature;
  const int limit = vocab_limit(p, vocab);
  RowsState st{0u, -1, 0.0f, 0, 0.0f, 0u, -1, 0};
  SliceCache sc;
  if (plain) {
    st.floor = p.min_p;
  } else {
    const RowsCtx c{logits, vocab, limit, slices, mx, inv_t, rs, &sc};
    int hpass = 0;
    unsigned nbar = 0;
    auto ekey = [](float e) { return __float_as_uint(e); };
    unsigned thr = 0;
    int cut = 0;
    // 7. top-k (a count), 8. top-p (a mass fraction of what top-k kept): prefixes of one order,
    // so each narrows the same threshold (every tie kept at the set's own key: its own cut).
    auto narrow = [&](bool mass, unsigned long long count, float frac) {
      if (!rows_select(c, st, sh, hpass, nbar, mass, count, frac, ekey, true, thr, cut)) return;
      st.cut_a = thr == st.thr_a ? min(cut, st.cut_a) : cut;
      st.thr_a = thr;
    };
    if (p.top_k > 0) narrow(false, (unsigned long long)p.top_k, 0.0f);
    if (p.top_p < 1.0f) narrow(true, 0, p.top_p);
    // 9. min-p: e >= min_p * e_max, and e_max = exp(0) = 1 is always kept.
    if (p.min_p > 0.0f) st.floor = p.min_p;
    // 10. typical: S = sum e ln e and Z = sum e over the set, per slice, then in slice order.
    if (p.typical > 0.0f && p.typical < 1.0f) {
      for (int s = blockIdx.x; s < slices; s += gridDim.x) {
        double z = 0, sl = 0;
        visit_slice(logits, vocab, limit, s, mx, inv_t, sc, true, [&](int i, float e) {
          if (in_set(st, e, i)) { z += double(e); sl += double(e) * double(logf(e)); }
        });
        z = block_reduce<W>(z, 0.0, sh.d, Add());
        sl = block_reduce<W>(sl, 0.0, sh.d, Add());
        if (threadIdx.x == 0) { rs.ent[2 * s] = z; rs.ent[2 * s + 1] = sl; }
      }
      grid_sync(rs.bar, ++nbar);
      const SliceChunk ch = slice_chunk(slices, k_rows_threads);
      double z = 0, sl = 0;
      for (int s = ch.lo; s < ch.hi; ++s) { z += __ldcg(rs.ent + 2 * s); sl += __ldcg(rs.ent + 2 * s + 1); }
      z = block_reduce<W>(z, 0.0, sh.d, Add());
      sl = block_reduce<W>(sl, 0.0, sh.d, Add());
      st.m = float(sl / z);
      const float m = st.m;
      if (rows_select(c, st, sh, hpass, nbar, true, 0, p.typical, [m](float e) { return typical_key(e, m); }, false, thr,
                      cut)) {
        st.typ = 1;
        st.thr_t = thr;
        st.cut_t = cut;
      }
    }
  }
  // 11. The draw's per-slice sums of the kept set.
  for (int s = blockIdx.x; s < slices; s += gridDim.x) {
    double sum = 0;
    int kept = 0, last = -1;
    visit_slice(logits, vocab, limit, s, mx, inv_t, sc, true, [&](int i, float e) {
      if (in_set(st, e, i)) { sum += double(e); ++kept; last = i; }
    });
    sum = block_reduce<W>(sum, 0.0, sh.d, Add());
    kept = block_reduce<W>(kept, 0, sh.i, Add());
    last = block_reduce<W>(last, -1, sh.i, Max());
    if (threadIdx.x == 0) {
      part[s].sum = sum;
      part[s].count = kept;
      part[s].last = last;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *rs.state = st;
}

// Launch 3's draw from the slices' sums of launch 2 (a chunk of slices a thread, then two ids a
// thread of the slice the draw lands in): the first kept id, in id order, whose cumulative weight
// exceeds u * total (the last kept one when rounding leaves the draw past every boundary), as
// filter_and_draw's draw over the row. weight(i): the kept weight of id i (0: dropped), as
// launch 2 weighed it. With `dist`, the kept distribution is written there (tests; one block over
// the row).
template <class Wt>
__device__ void draw_from_slices(const SamplerParams& p, int vocab, int slices, const PrepPart* part, int best,
                                 Wt weight, Shared& sh, SamplerResult* out, float* dist) {
  const SliceChunk ch = slice_chunk(slices, T);
  double sb = 0;
  int kept = 0;
  for (int b = ch.lo; b < ch.hi; ++b) { sb += __ldcg(&part[b].sum); kept += __ldcg(&part[b].count); }
  double total = 0;
  const double before = block_exclusive_scan(sb, sh.d, &total);
  kept = block_reduce(kept, 0, sh.i, Add());
  const double r = p.uniform * total;
  int lands = INT_MAX;
  double lands_before = 0;
  if (before <= r) {
    double acc = before;
    for (int b = ch.lo; b < ch.hi; ++b) {
      const double v = __ldcg(&part[b].sum);
      if (v > 0.0 && acc <= r && r < acc + v) { lands = b; lands_before = acc; break; }
      acc += v;
    }
  }
  const int slice = block_reduce(lands, INT_MAX, sh.i, Min());
  int found = INT_MAX;
  if (slice != INT_MAX) {  // (uniform across the block)
    if (lands == slice) sh.before = lands_before;
    const int s0 = slice * k_slice, s1 = min(vocab, s0 + k_slice);
    const int i0 = s0 + 2 * int(threadIdx.x);
    const float w0 = i0 < s1 ? weight(i0) : 0.0f;
    const float w1 = i0 + 1 < s1 ? weight(i0 + 1) : 0.0f;
    double unused = 0;
    const double mine = block_exclusive_scan(double(w0) + double(w1), sh.d, &unused);  // syncs: before is seen
    double cum = sh.before + mine + double(w0);
    if (w0 > 0.0f && r < cum) found = i0;
    cum += double(w1);
    if (found == INT_MAX && w1 > 0.0f && r < cum) found = i0 + 1;
    found = block_reduce(found, INT_MAX, sh.i, Min());
    if (found == INT_MAX) found = __ldcg(&part[slice].last);
  }
  int id = found;
  if (id == INT_MAX) {  // past every boundary: the last kept id of the row
    int last = -1;
    for (int j = threadIdx.x; j < slices; j += T) last = max(last, __ldcg(&part[j].last));
    last = block_reduce(last, -1, sh.i, Max());
    id = last;
  }
  if (id < 0) id = best;  // (nothing kept: the max logit always is, so only on a NaN row)
  if (threadIdx.x == 0) {
    const float wi = weight(id);
    out->id = id;
    out->candidates = kept;
    out->p = total > 0 ? float(double(wi) / total) : 1.0f;
  }
  if (dist)
    for (int i = threadIdx.x; i < vocab; i += T) dist[i] = total > 0 ? float(double(weight(i)) / total) : 0.0f;
}

struct PrepShared {
  float vals[k_slice];
  float f[k_prep_threads / 32];
  int i[k_prep_threads / 32];
  SamplerParams prm;
};

__global__ void __launch_bounds__(k_prep_threads) sample_prep_kernel(float* __restrict__ logits, int vocab,
                                                                     const int* __restrict__ blob,
                                                                     float* __restrict__ cand_l,
                                                                     int* __restrict__ cand_id,
                                                                     PrepPart* __restrict__ part, RowsScratch rs) {
  EXL_BLOCK_SHARED(PrepShared, ps);
  pdl_wait();
  pdl_trigger();  // the next two launches (PDL) wait for this one's writes
  load_settings(ps.prm, blob);
  const SamplerParams& p = ps.prm;
  const int* pen_ids = blob + sampler_header_bytes() / 4;
  const int* pen_counts = pen_ids + p.num_penalty;
  const int* banned = pen_counts + p.num_penalty;
  const int* bias_ids = banned + p.num_banned;
  const float* bias_vals = reinterpret_cast<const float*>(bias_ids + p.num_bias);
  const int limit = vocab_limit(p, vocab);
  const int s0 = int(blockIdx.x) * k_slice, s1 = min(vocab, s0 + k_slice);
  auto mine = [&](int id) { return id >= s0 && id < s1 && id < limit; };

  // The rows kernel's global histograms and barrier counter start at zero.
  if (rows_select_path(p)) {
    const int n = k_hist_passes * k_bins;
    for (int j = int(blockIdx.x) * k_prep_threads + int(threadIdx.x); j < n; j += int(gridDim.x) * k_prep_threads)
      rs.hist[j] = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) *rs.bar = 0;
  }

  // 1-3. Penalties (distinct ids), bans, bias (grouped by id, applied in list order), each block
  // for the ids of its slice. Ids at or beyond the vocabulary mask are skipped: they are -inf.
  for (int j = threadIdx.x; j < p.num_penalty; j += k_prep_threads) {
    const int id = pen_ids[j];
    if (!mine(id)) continue;
    float l = logits[id];
    l = l > 0.0f ? l / p.repetition_penalty : l * p.repetition_penalty;
    l -= p.presence_penalty;
    for (int c = pen_counts[j]; c > 0; --c) l -= p.frequency_penalty;
    logits[id] = l;
  }
  __syncthreads();
  for (int j = threadIdx.x; j < p.num_banned; j += k_prep_threads)
    if (mine(banned[j])) logits[banned[j]] = -INFINITY;
  __syncthreads();
  for (int j = threadIdx.x; j < p.num_bias; j += k_prep_threads) {
    const int id = bias_ids[j];
    if (!mine(id) || (j > 0 && bias_ids[j - 1] == id)) continue;
    float l = logits[id];
    for (int k = j; k < p.num_bias && bias_ids[k] == id; ++k) l += bias_vals[k];
    logits[id] = l;
  }
  __syncthreads();

  // 4-5. The thread's four ids (masked ones -inf, ids past the slice NaN: no entry).
  const int i0 = s0 + 4 * int(threadIdx.x);
  float v[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int i = i0 + c;
    v[c] = i < s1 ? (i < limit ? logits[i] : -INFINITY) : NAN;
  }
  float bv = -INFINITY, mx = -INFINITY;
  int bi = INT_MAX, fin = 0;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    argmax_merge(bv, bi, v[c], i0 + c);
    if (isfinite(v[c])) { mx = fmaxf(mx, v[c]); ++fin; }
  }
  block_argmax<k_prep_threads / 32>(bv, bi, ps.f, ps.i);
  PrepPart r{};
  r.arg_value = bv;  // (thread 0's is the block's, and thread 0 writes r)
  r.arg_id = bi;
  r.max_finite = block_reduce<k_prep_threads / 32>(mx, -INFINITY, ps.f, Max());
  r.count = -1;
  r.thr = -INFINITY;
  r.last = -1;
  // Candidates for a top-k of at most k_fast_top_k.
  const int kk = p.top_k;
  if (!p.greedy && kk > 0 && kk <= k_fast_top_k) {
    int n_fin = 0;
    block_exclusive_scan<k_prep_threads / 32>(fin, ps.i, &n_fin);
    // The slice's k-th largest finite logit: a bitonic sort (descending) of its 1024 entries.
#pragma unroll
    for (int c = 0; c < 4; ++c) ps.vals[4 * threadIdx.x + c] = isfinite(v[c]) ? v[c] : -INFINITY;
    __syncthreads();
    for (int size = 2; size <= k_slice; size <<= 1)
      for (int stride = size / 2; stride > 0; stride >>= 1) {
        for (int t = threadIdx.x; t < k_slice / 2; t += k_prep_threads) {
          const int i = 2 * stride * (t / stride) + t % stride, j = i + stride;
          const float a = ps.vals[i], b = ps.vals[j];
          if ((i & size) == 0 ? a < b : a > b) { ps.vals[i] = b; ps.vals[j] = a; }
        }
        __syncthreads();
      }
    float thr = -INFINITY;
    if (kk <= n_fin) {
      const float kth = ps.vals[kk - 1];
      thr = kth - 1e-5f * (fabsf(kth) + 1.0f);  // a little below: logits that round alike come along
    }
    bool keep[4];
    int cnt = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      keep[c] = isfinite(v[c]) && v[c] >= thr;
      cnt += keep[c];
    }
    int total = 0;
    int at = s0 + block_exclusive_scan<k_prep_threads / 32>(cnt, ps.i, &total);
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (keep[c]) { cand_l[at] = v[c]; cand_id[at] = i0 + c; ++at; }
    r.count = total;
    r.thr = thr;
  }
  if (threadIdx.x == 0) part[blockIdx.x] = r;
}

__global__ void __launch_bounds__(T, 1) sample_kernel(float* __restrict__ logits, int vocab, const int* __restrict__ blob,
                                                   float* __restrict__ e, unsigned* __restrict__ keys,
                                                   const float* __restrict__ cand_l,
                                                   const int* __restrict__ cand_id,
                                                   const PrepPart* __restrict__ part, RowsScratch rs,
                                                   SamplerResult* __restrict__ out) {
  EXL_BLOCK_SHARED(Shared, sh);
  pdl_wait();
  load_settings(sh.prm, blob);
  const SamplerParams& p = sh.prm;
  const int limit = vocab_limit(p, vocab);
  const int slices = (vocab + k_slice - 1) / k_slice;

  // 4-5. Arg-max (greedy) and the largest finite logit, from the slices' results (the edits of
  // stages 1-3 are in the logits already).
  float bv = -INFINITY, mx = -INFINITY;
  int bi = INT_MAX;
  bool cands = true;
  for (int b = threadIdx.x; b < slices; b += T) {
    const PrepPart r = part[b];
    if (r.arg_id != INT_MAX) argmax_merge(bv, bi, r.arg_value, r.arg_id);
    mx = fmaxf(mx, r.max_finite);
    cands = cands && r.count >= 0;
  }
  block_argmax<k_warps>(bv, bi, sh.f, sh.i);
  if (threadIdx.x == 0) sh.found_id = bi == INT_MAX || isnan(logits[0]) ? 0 : bi;
  mx = block_reduce(mx, -INFINITY, sh.f, Max());  // syncs, so found_id is visible after it
  const int best = sh.found_id;
  if (p.greedy || mx == -INFINITY) {  // the host samples the arg-max when nothing finite is left
    finish(p, e, vocab, best, 1, 1.0f, out);
    return;
  }
  const float inv_t = 1.0f / p.temperature;
  auto weight = [&](float l) { return softmax_weight(l, mx, inv_t); };
  if (plain_draw(p)) {
    draw_from_slices(
        p, vocab, slices, part, best, [&](int i) { return plain_weight(logits, i, limit, mx, inv_t, p.min_p); }, sh,
        out, nullptr);
    return;
  }
  if (rows_select_path(p)) {
    RowsState st;
    memcpy(&st, rs.state, sizeof(RowsState));
    draw_from_slices(
        p, vocab, slices, part, best,
        [&](int i) {
          const float w = weight(i < limit ? logits[i] : -INFINITY);
          return in_set(st, w, i) ? w : 0.0f;
        },
        sh, out, p.write_dist ? e : nullptr);
    return;
  }

  // 7. top-k (at most k_fast_top_k here). The stages after it see only the k kept tokens,
  // compacted in id order (w [n], their ids cid [n]) into the keys buffer, whose first third stays
  // free for typical's keys: the same decisions (ties go to the lowest index, which is the lowest
  // id) over k entries instead of the vocabulary.
  float* w = e;
  int n = vocab;
  const int* cid = nullptr;
  const int third = (vocab / 3) & ~3;  // a multiple of 4: 16-byte aligned parts
  int* ids = reinterpret_cast<int*>(keys + third);
  float* kw = reinterpret_cast<float*>(keys + 2 * third);
  bool done = false;
  cands = block_reduce(int(cands), 1, sh.i, Min()) != 0;
  if (cands && slices <= k_max_slices) {
    // The slices' candidates at or above the highest slice threshold (the row's k-th largest is at
    // least every slice's own k-th, so none of the k largest goes; the check below covers that
    // threshold as well), in slice order (= id order), weighted.
    float tmax = -INFINITY;
    for (int b = threadIdx.x; b < slices; b += T) tmax = fmaxf(tmax, part[b].thr);
    tmax = block_reduce(tmax, -INFINITY, sh.f, Max());
    const int lane = threadIdx.x & 31;
    for (int b = threadIdx.x >> 5; b < slices; b += k_warps) {  // a warp per slice: how many stay
      const int c = part[b].count;
      int stay = 0;
      for (int j = lane; j < c; j += 32) stay += cand_l[b * k_slice + j] >= tmax;
      for (int o = 16; o > 0; o >>= 1) stay += __shfl_xor_sync(k_full, stay, o);
      if (lane == 0) sh.sl.cnt[b] = stay;
    }
    __syncthreads();
    int total = 0;
    const int off = block_exclusive_scan(threadIdx.x < slices ? sh.sl.cnt[threadIdx.x] : 0, sh.i, &total);
    if (threadIdx.x < slices) sh.sl.off[threadIdx.x] = off;
    __syncthreads();
    if (total <= third) {
      int pos = 0;
      for (int b = threadIdx.x >> 5; b < slices; b += k_warps) {
        const int c = part[b].count;
        int at = sh.sl.off[b];
        for (int j0 = 0; j0 < c; j0 += 32) {
          const int j = j0 + lane;
          const float l = j < c ? cand_l[b * k_slice + j] : -INFINITY;
          const int keep = j < c && l >= tmax;
          int x = keep;  // the lane's place among the warp's kept ones (inclusive scan)
          for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(k_full, x, o);
            if (lane >= o) x += y;
          }
          if (keep) {
            const float wj = weight(l);
            kw[at + x - 1] = wj;
            ids[at + x - 1] = cand_id[b * k_slice + j];
            pos += wj > 0.0f;
          }
          at += __shfl_sync(k_full, x, 31);
        }
      }
      pos = block_reduce(pos, 0, sh.i, Add());
      if (p.top_k < pos) {
        select_top(kw, nullptr, total, false, (unsigned long long)p.top_k, 0.0f, sh);
        // Exact only if every logit left out weighs less than the k-th kept weight.
        const float kth = __uint_as_float(sh.prefix);
        int ok = 1;
        for (int b = threadIdx.x; b < slices; b += T) {
          const float thr = part[b].thr;
          if (thr != -INFINITY && !(weight(thr) * 1.00001f < kth)) ok = 0;
        }
        if (block_reduce(ok, 1, sh.i, Min()) != 0) {
          w = kw;
          n = total;
          cid = ids;
          done = true;
        }
      }
    }
  }
  if (!done) {
    // 6. Softmax weights over the row (unnormalised, max 1): e = exp((l - max) / T); 0 = dropped.
    int n_pos = 0;
    for_each(vocab, logits, [&](int i, float l) {
      const float wi = weight(i < limit ? l : -INFINITY);
      e[i] = wi;
      n_pos += wi > 0.0f;
    });
    n_pos = block_reduce(n_pos, 0, sh.i, Add());
    if (p.top_k < n_pos) {
      select_top(e, nullptr, vocab, false, (unsigned long long)p.top_k, 0.0f, sh);
      if (p.top_k <= third) {
        n = compact(e, vocab, kw, ids, sh);
        w = kw;
        cid = ids;
      }
    }
  }
  filter_and_draw(p, w, n, cid, e, keys, vocab, best, sh, out);
}

static_assert(sizeof(PrepPart) == 32, "candidate_bytes counts 32 bytes per slice");
static_assert(2 * T >= k_slice, "a plain draw scans its slice with two ids a thread");
static_assert(k_slice == 1024, "candidate_bytes counts slices of 1024 ids");
static_assert(k_slice == 4 * k_rows_threads, "the rows kernel visits 4 ids of a slice per thread");
static_assert(sizeof(RowsState) <= 32, "candidate_bytes counts 32 bytes of state, then the barrier counter");
static_assert(k_bins % k_rows_threads == 0 && k_last_bins % k_rows_threads == 0, "bins per thread");

}  // namespace

DeviceSampler::DeviceSampler(Allocator* a, int vocab, int max_penalty) : vocab_(vocab), max_penalty_(max_penalty) {
  EXL_CUDA_REQUIRE(vocab > 0 && max_penalty >= 0, "device sampler: bad sizes");
  const std::size_t blob = sampler_header_bytes() + 4 * (2 * std::size_t(max_penalty) + 3 * EXL_CUDA_SAMPLER_MAX_EDITS);
  blob_.allocate(a, blob, "sampler settings");
  e_.allocate(a, std::size_t(vocab) * 4, "sampler weights");
  keys_.allocate(a, std::size_t(vocab) * 4, "sampler keys");
  cand_.allocate(a, candidate_bytes(vocab), "sampler candidates");
  result_.allocate(a, sizeof(SamplerResult), "sampler result");
  // The rows kernel's grid waits on itself (grid_sync): at most one block per multiprocessor,
  // each taking every rows_grid_-th slice. Not the occupancy's two: the grid is a PDL launch, so
  // its first blocks can wait at a barrier on a multiprocessor whose shared-memory carve-out is
  // still the previous kernel's, where a second block may never find room (a grid barrier under
  // PDL can deadlock that way); one block fits under any carve-out once the previous
  // kernel's blocks are gone, and those never wait for this grid.
  int dev = 0, sms = 0, per_sm = 0;
  EXL_CUDA_CHECK(cudaGetDevice(&dev));
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  EXL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sample_rows_kernel, k_rows_threads, 0));
  const int slices = (vocab + k_slice - 1) / k_slice;
  rows_grid_ = std::max(1, std::min({slices, sms, per_sm * sms}));
  h_blob_ = PinnedBuffer(blob);
  h_result_ = PinnedBuffer(sizeof(SamplerResult));
}

void DeviceSampler::stage(const exl_cuda_sampler& s, bool write_dist) {
  EXL_CUDA_REQUIRE(s.num_penalty >= 0 && s.num_penalty <= max_penalty_,
                   "sampler: " + std::to_string(s.num_penalty) + " penalty entries (at most " +
                       std::to_string(max_penalty_) + ", the cache length)");
  EXL_CUDA_REQUIRE(s.num_banned >= 0 && s.num_bias >= 0 && s.num_banned + s.num_bias <= EXL_CUDA_SAMPLER_MAX_EDITS,
                   "sampler: more than " + std::to_string(EXL_CUDA_SAMPLER_MAX_EDITS) + " banned / bias entries");
  EXL_CUDA_REQUIRE((s.num_penalty == 0 || (s.penalty_ids && s.penalty_counts)) && (s.num_banned == 0 || s.banned) &&
                       (s.num_bias == 0 || (s.bias_ids && s.bias_values)),
                   "sampler: null list");
  const bool greedy = s.greedy != 0 || s.temperature < 0.01f || s.top_k == 1;
  EXL_CUDA_REQUIRE(greedy || (s.temperature > 0 && s.temperature < INFINITY), "sampler: bad temperature");
  EXL_CUDA_REQUIRE(s.top_k >= 0 && s.top_p > 0 && s.top_p <= 1 && s.min_p >= 0 && s.min_p <= 1 && s.typical >= 0 &&
                       s.typical <= 1 && s.vocab_limit >= 0,
                   "sampler: setting out of range");
  EXL_CUDA_REQUIRE(greedy || (s.uniform >= 0 && s.uniform < 1), "sampler: uniform outside [0, 1)");
  for (int j = 1; j < s.num_bias; ++j)
    EXL_CUDA_REQUIRE(s.bias_ids[j - 1] <= s.bias_ids[j], "sampler: bias entries must be sorted by id");
  for (int j = 0; j < s.num_bias; ++j)
    EXL_CUDA_REQUIRE(s.bias_ids[j] >= 0 && s.bias_ids[j] < vocab_,
                     "sampler: bias names token " + std::to_string(s.bias_ids[j]) + " beyond the vocabulary");
  SamplerParams p{};
  p.uniform = s.uniform;
  p.temperature = s.temperature; p.top_p = s.top_p; p.min_p = s.min_p; p.typical = s.typical;
  p.repetition_penalty = s.repetition_penalty; p.frequency_penalty = s.frequency_penalty;
  p.presence_penalty = s.presence_penalty;
  p.greedy = greedy ? 1 : 0; p.top_k = s.top_k; p.vocab_limit = s.vocab_limit;
  p.num_penalty = s.num_penalty; p.num_banned = s.num_banned; p.num_bias = s.num_bias;
  p.write_dist = write_dist ? 1 : 0;
  auto* h = h_blob_.get<unsigned char>();
  std::memcpy(h, &p, sizeof(p));
  std::size_t off = sampler_header_bytes();
  auto put = [&](const void* src, int n) {
    if (n > 0) std::memcpy(h + off, src, std::size_t(n) * 4);
    off += std::size_t(n) * 4;
  };
  put(s.penalty_ids, s.num_penalty);
  put(s.penalty_counts, s.num_penalty);
  put(s.banned, s.num_banned);
  put(s.bias_ids, s.num_bias);
  put(s.bias_values, s.num_bias);
  staged_bytes_ = off;
}

void DeviceSampler::enqueue_upload(cudaStream_t s) const {
  EXL_CUDA_REQUIRE(staged_bytes_ > 0, "sampler: nothing staged");
  EXL_CUDA_CHECK(cudaMemcpyAsync(blob_.get(), h_blob_.get(), staged_bytes_, cudaMemcpyHostToDevice, s));
}

void DeviceSampler::enqueue_sample(float* logits, cudaStream_t s) const {
  // The candidates' layout: logits [vocab] fp32, ids [vocab], one PrepPart per slice, then the
  // rows kernel's scratch (RowsScratch). The first launch is plain (it may follow a copy: the
  // settings, a test's logits); the other two follow a sampler kernel and start early (PDL).
  auto* cl = cand_.get<float>();
  auto* ci = reinterpret_cast<int*>(cl + vocab_);
  auto* part = reinterpret_cast<PrepPart*>(ci + vocab_);
  const RowsScratch rs = rows_scratch(cand_.get(), vocab_);
  const int slices = (vocab_ + k_slice - 1) / k_slice;
  launch_ex(false, sample_prep_kernel, dim3(slices), dim3(k_prep_threads), 0, s, logits, vocab_,
            blob_.get<const int>(), cl, ci, part, rs);
  launch_ex(true, sample_rows_kernel, dim3(rows_grid_), dim3(k_rows_threads), 0, s,
            static_cast<const float*>(logits), vocab_, blob_.get<const int>(), part, rs);
  launch_ex(true, sample_kernel, dim3(1), dim3(T), 0, s, logits, vocab_, blob_.get<const int>(), e_.get<float>(),
            keys_.get<unsigned>(), static_cast<const float*>(cl), static_cast<const int*>(ci),
            static_cast<const PrepPart*>(part), rs, result_.get<SamplerResult>());
  EXL_CUDA_CHECK(cudaMemcpyAsync(h_result_.get(), result_.get(), sizeof(SamplerResult), cudaMemcpyDeviceToHost, s));
}

exl_cuda_sample_result DeviceSampler::result() const {
  const SamplerResult* r = h_result_.get<SamplerResult>();
  return exl_cuda_sample_result{r->id, r->candidates, r->p};
}

}  // namespace exl::cuda

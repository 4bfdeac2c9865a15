// The persistent decode pipeline (kernels/cuda/PERSISTENT_DECODE.md, experiment 2): the one-token
// GEMVs from one attention to the next (o, gate/up, down, the next layer's q/k/v or the head) as
// the stages of one launch in which the weight stream never stops at a stage boundary; with
// GemvChainCall::attention, RoPE and attention of the layer come first (the consumers run it while
// the producer already streams the o projection's weights), so a layer is one launch.
//
// One block per multiprocessor (the grid is the device: every wait below needs all blocks
// resident). A block is CW consumer warps, one producer warp and k_tails tail warps:
//   - The producer walks the block's work items of every stage in order (item = one 64-column
//     tile of one layer over a range of its 32-row units, as a launch-form block) and copies each
//     item's unit table, permutation, scales and weights into a ring in shared memory with bulk
//     copies (cp.async.bulk, sm_90). It waits only for ring space, never for activations, so the
//     next stage's weights arrive while the consumers still wait for that stage's input.
//   - The consumers wait for a stage's input to be complete (a counter per stage in global
//     memory), read the whole input vector once per block into shared memory as fp16 (RMSNorm
//     or SiLU(gate) * up applied there), and then run each item's units from the ring: the same
//     decode and mma as the launch form, the units of an item split over the consumer warps in
//     contiguous runs, each warp on its own (no block-wide barrier per item). Each warp leaves
//     its 64 column sums in one of k_sum_bufs buffers.
//   - A tail warp (items alternate between them) adds each item's warp sums in warp order and
//     adds them to y, or puts them into the item's slot of the GEMV workspace where the tile's
//     last item (a ticket per tile) adds the slots in split order (deterministic, as the launch
//     form: y gets one addition per element and stage); a finished tile counts towards its
//     stage's counter. Their global round trips are off the consumers' path.
// Ring protocol: per item entry e (k_queue entries reused in turn) one "meta" mbarrier (tables),
// one "full" mbarrier per consumer warp (that warp's units; the producer sets the expected bytes
// before it issues the copies) and one "empty" mbarrier (each consumer warp arrives once it is
// done with the item). Items are released in order, so the producer reuses ring bytes once the
// item that held them is released. Sum buffers: "sum_full" (the consumer warps arrive) and
// "sum_empty" (the item's tail warp arrives).
// Counters (GemvScratch::pipe_sync, zero between launches): [s] counts the finished column
// tiles of stage s (of the attention stage: the merged KV heads) plus one arrival per block once
// it has written its share of the stage's init regions; [count] counts the consumers and tail
// warps that are done; the last one clears them all.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "async_copy.cuh"
#include "attn_common.cuh"
#include "cuda_check.h"
#include "exl2_common.cuh"
#include "exl2_tile.cuh"
#include "kernels.h"
#include "kv_pages.cuh"
#include "launch.cuh"

namespace exl::cuda {
namespace {

constexpr int k_queue = 16;          // ring entries (items in flight per block)
constexpr int k_pipe_units = 128;    // most units per item
constexpr int k_pipe_stages = k_gemv_chain_max + 1;  // a window launch: an attention stage, then the GEMV stages
constexpr int k_tails = 2;           // tail warps (items alternate between them)
constexpr int k_sum_bufs = 4;        // items whose sums wait for a tail warp (a multiple of k_tails)
static_assert(k_sum_bufs % k_tails == 0, "a sum buffer's items belong to one tail warp");

struct PipeStage {
  int attention = 0;  // a > 0: an attention stage (descriptor a - 1; its items: KV head x key split)
  GemvJob job[k_gemv_max_layers];  // block_begin: the job's first item in the stage
  int count = 0;
  int items = 0;   // work items of the stage (all jobs)
  int target = 0;  // its counter once complete: column tiles + blocks
  int k = 0;       // input features (shared by the jobs)
  int mode = 0;
  GemvInput in;
  GemvInit init[k_gemv_max_inits];
  int inits = 0;
};
// A launch's stages: a window's few in the parameters (st, attn), or a whole step's in a device
// table (table, attn_table: exl2_pipe_step).
struct PipeParams {
  PipeStage st[k_pipe_stages];
  PipeAttention attn;
  const PipeStage* table = nullptr;
  const PipeAttention* attn_table = nullptr;
  int count = 0;
  float* partials = nullptr;
  unsigned* tickets = nullptr;
  unsigned* sync = nullptr;  // [count] stage counters, then the blocks done (k_pipe_sync_counters in all)
  unsigned long long* trace = nullptr;  // EXL_PIPE_TRACE: time accounts (pipe_trace_report), or null
  int ring_bytes = 0;
  int xs_halves = 0;
  int skip = 0;  // experiments only (EXL_PIPE_SKIP, pipe_skip): parts left out to place time, wrong results
};
// EXL_PIPE_SKIP bits: the consumers' decode and mma (they still wait for and release the
// weights), the producer's weight copies (the consumers decode stale ring bytes), the consumers'
// waits for a stage's input, the tail's global sums (only the tickets and stage counts remain).
constexpr int k_skip_compute = 1, k_skip_weights = 2, k_skip_stage_wait = 4, k_skip_tail_sums = 8;

// TB: the stages come from the device table (a whole step) rather than the parameters (a window).
template <bool TB>
__device__ __forceinline__ const PipeStage& stage_of(const PipeParams& p, int s) {
  if constexpr (TB) return p.table[s];
  else return p.st[s];
}
template <bool TB>
__device__ __forceinline__ const PipeAttention& attention_of(const PipeParams& p, const PipeStage& st) {
  if constexpr (TB) return p.attn_table[st.attention - 1];
  else return p.attn;
}

// One item's plan (every role computes it from the stage's parameters alone).
__device__ __forceinline__ SplitPlan pipe_item(const PipeStage& st, int it) { return split_plan(st.job, st.count, it); }

// The block's items, stage after stage, in the order every role walks them: f(stage index,
// stage, item index, plan, the block's running item number).
template <bool TB, class F>
__device__ __forceinline__ void for_each_item(const PipeParams& p, F&& f) {
  int seq = 0;
  for (int s = 0; s < p.count; ++s) {
    const PipeStage& st = stage_of<TB>(p, s);
    if (!st.attention)
      for (int it = int(blockIdx.x); it < st.items; it += int(gridDim.x), ++seq) f(s, st, it, pipe_item(st, it), seq);
  }
}

// The block's GEMV item after item `it` of stage `s` (false: none): the producer asks L1 for its
// unit table while it copies the current one's.
template <bool TB>
__device__ __forceinline__ bool next_item(const PipeParams& p, int& s, int& it) {
  it += int(gridDim.x);
  while (s < p.count && (stage_of<TB>(p, s).attention || it >= stage_of<TB>(p, s).items)) {
    ++s;
    it = int(blockIdx.x);
  }
  return s < p.count;
}

// Written by the producer before it arrives on the item's meta barrier (byte offsets in the ring).
template <int CW>
struct ItemHdr {
  int perm, smax, scale;  // tables: permutation (int32 per row), scale maxima (fp16, from g0e), scale words
  int g0, g0e;            // first group of the item, first group of the copied maxima
  int info;               // unit table (int2, from unit u0 & ~1)
  int woff[CW];           // first weight byte of each consumer warp's units
};

// ---- sm_90 primitives: mbarriers and bulk copies ----

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
#endif

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
#elif defined(EXL_CUDA_EMU)
  ::exl::emu::mbar_init(bar, count);
#endif
}
__device__ __forceinline__ void mbar_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_expect(std::uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
#elif defined(EXL_CUDA_EMU)
  ::exl::emu::mbar_arrive(bar, bytes);
#endif
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
#elif defined(EXL_CUDA_EMU)
  ::exl::emu::mbar_arrive(bar, 0);
#endif
}
__device__ __forceinline__ bool mbar_test(std::uint64_t* bar, unsigned parity) {
  unsigned ok = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
#elif defined(EXL_CUDA_EMU)
  ok = ::exl::emu::mbar_test_parity(bar, parity) ? 1u : 0u;
#endif
  return ok != 0;
}
// The time accounts of EXL_PIPE_TRACE (SM cycles, per block, summed over launches).
enum TraceField : int {
  k_tr_launches, k_tr_consumer, k_tr_stage_wait, k_tr_input, k_tr_meta_wait, k_tr_data_wait, k_tr_ring_wait,
  k_tr_producer, k_tr_sum_wait, k_tr_tail, k_tr_items, k_tr_tail_global, k_tr_sum_buf_wait, k_tr_compute,
  k_tr_issue, k_tr_fields = 16
};
constexpr int k_trace_blocks = int(k_pipe_trace_bytes / (8 * k_tr_fields));
struct Tracer {
  unsigned long long* p;
  __device__ __forceinline__ long long now() const { return p ? clock64() : 0; }
  __device__ __forceinline__ void add(int f, long long since) const {
    if (p && int(blockIdx.x) < k_trace_blocks)
      atomicAdd(p + blockIdx.x * k_tr_fields + f, static_cast<unsigned long long>(clock64() - since));
  }
  __device__ __forceinline__ void count(int f, unsigned long long v) const {
    if (p && int(blockIdx.x) < k_trace_blocks) atomicAdd(p + blockIdx.x * k_tr_fields + f, v);
  }
};

// 10 s without progress is a scheduling mistake: an error (trap), not a hang. Lane 0 of the
// waiting warp says first which wait it was (device printf, flushed when the error is reported).
__device__ EXL_NOINLINE void pipe_stuck(const char* what, int index, unsigned value) {
  if ((threadIdx.x & 31) == 0)
    printf("exl2_gemv_pipe: block %d warp %d: no progress in 10 s waiting for %s %d (%u)\n", int(blockIdx.x),
           int(threadIdx.x >> 5), what, index, value);
  __trap();
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity, const char* what, int index) {
  if (mbar_test(bar, parity)) return;
  const std::uint64_t t0 = global_ns();
  while (!mbar_test(bar, parity))
    if (global_ns() - t0 > 10000000000ull) pipe_stuck(what, index, parity);
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
#elif defined(EXL_CUDA_EMU)
  ::exl::emu::bulk_copy(dst, src, bytes, bar);
#endif
}
// Barrier of the consumer warps only (the producer runs ahead): named barrier 1.
template <int CW>
__device__ __forceinline__ void consumers_sync() {
#ifdef EXL_CUDA_EMU
  ::exl::emu::bar_sync(1, CW * 32);
#else
  asm volatile("bar.sync 1, %0;\n" ::"n"(CW * 32) : "memory");
#endif
}
__device__ __forceinline__ void red_release_add(unsigned* p, unsigned v) {
#ifdef EXL_CUDA_EMU
  ::exl::emu::atomic_add(p, v);
#else
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
#endif
}
__device__ __forceinline__ void wait_counter(const unsigned* p, unsigned target, int stage) {
  if (ld_acquire(p) >= target) return;
  const std::uint64_t t0 = global_ns();
  unsigned v;
  while ((v = ld_acquire(p)) < target)
    if (global_ns() - t0 > 10000000000ull) pipe_stuck("the input of stage", stage, v);
}

// Every block's consumers and tail warp arrive once they are past all their waits; the last of
// them clears the counters for the next launch.
__device__ __forceinline__ void pipe_exit(const PipeParams& p) {
  if (atom_acq_rel_add(p.sync + p.count, 1u) == unsigned(1 + k_tails) * gridDim.x - 1u)
    for (int s = 0; s <= p.count; ++s) p.sync[s] = 0u;
}

// Ring bytes of an item's tables (all multiples of 16, the bulk copies' granule).
struct MetaSizes {
  int info, perm, smax, scale;
  __host__ __device__ int total() const { return info + perm + smax + scale; }
};
__host__ __device__ inline MetaSizes meta_sizes(int u0, int u1, int g0, int g1, bool permuted) {
  MetaSizes m;
  m.info = (((u1 + 1) & ~1) - (u0 & ~1)) * 8;
  m.perm = permuted ? 0 : (u1 - u0) * 32 * 4;
  m.smax = (((g1 + 8) & ~7) - (g0 & ~7)) * 2;
  m.scale = (g1 - g0 + 1) * 32;
  return m;
}

// Warp w's contiguous share [wa, wb) of an item's nb units.
template <int CW>
__device__ __forceinline__ int share_begin(int nb, int w) { return nb * w / CW; }

template <int CW>
struct PipeSmem {
  unsigned char* ring;
  __half* xs;
  float* red;          // [k_sum_bufs][CW][64]
  float* norm;         // [CW]
  std::uint64_t* meta;   // [k_queue]
  std::uint64_t* full;   // [k_queue][CW]
  std::uint64_t* empty;  // [k_queue]
  std::uint64_t* sum_full;   // [k_sum_bufs]: the consumer warps' sums are in
  std::uint64_t* sum_empty;  // [k_sum_bufs]: the tail warp has read them
  ItemHdr<CW>* hdr;      // [k_queue]
  int* off;              // producer scratch [k_pipe_units + 1]
  int* end;              // producer: ring end of each entry's item [k_queue]
  __device__ __forceinline__ PipeSmem(unsigned char* base, const PipeParams& p) {
    ring = base;
    xs = reinterpret_cast<__half*>(base + p.ring_bytes);
    red = reinterpret_cast<float*>(xs + ((p.xs_halves + 7) & ~7));
    norm = red + k_sum_bufs * CW * k_tile_cols;
    meta = reinterpret_cast<std::uint64_t*>(norm + ((CW + 1) & ~1));
    full = meta + k_queue;
    empty = full + k_queue * CW;
    sum_full = empty + k_queue;
    sum_empty = sum_full + k_sum_bufs;
    hdr = reinterpret_cast<ItemHdr<CW>*>(sum_empty + k_sum_bufs);
    off = reinterpret_cast<int*>(hdr + k_queue);
    end = off + k_pipe_units + 1;
  }
};
template <int CW>
constexpr std::size_t pipe_fixed_smem(int xs_halves) {
  return std::size_t((xs_halves + 7) & ~7) * 2 + std::size_t(k_sum_bufs) * CW * k_tile_cols * 4 +
         std::size_t((CW + 1) & ~1) * 4 + std::size_t(k_queue) * (CW + 2) * 8 + std::size_t(k_sum_bufs) * 2 * 8 +
         std::size_t(k_queue) * sizeof(ItemHdr<CW>) +
         std::size_t(k_pipe_units + 1 + k_queue) * 4 + 16;
}

// ---- the producer warp ----

template <int CW, bool TB>
__device__ void pipe_produce(const PipeParams& p, const PipeSmem<CW>& sm) {
  const int lane = threadIdx.x & 31;
  const int R = p.ring_bytes;
  int pos = 0, released = 0, oldest = 0;
  const Tracer tr{lane == 0 ? p.trace : nullptr};
  const long long t_start = tr.now();
  for_each_item<TB>(p, [&](int s, const PipeStage& st, int it, const SplitPlan& pi, int seq) {
    const Exl2Device& w = st.job[pi.j].w;
    const int nb = pi.u1 - pi.u0;
    int ns = s, nit = it;
    if (next_item<TB>(p, ns, nit)) {  // the next item's unit table into L1 (128-byte lines)
      const PipeStage& nst = stage_of<TB>(p, ns);
      const SplitPlan np = pipe_item(nst, nit);
      const char* t = reinterpret_cast<const char*>(nst.job[np.j].w.units + np.u0);
      const int lines = int((reinterpret_cast<std::uintptr_t>(t) & 127u) + std::size_t(np.u1 - np.u0) * 8 + 127) / 128;
#ifndef EXL_CUDA_EMU
      if (lane < lines) asm volatile("prefetch.global.L1 [%0];\n" ::"l"(t + lane * 128) : "memory");
#else
      (void)lines;
#endif
    }
    // Unit sizes and their prefix sums (unit order), 32 units per round.
    int carry = 0;
    for (int r = 0; r < nb; r += 32) {
      const int i = r + lane;
      const int sz = i < nb ? 256 * (__ldg(&w.units[pi.u0 + i].y) & 15) : 0;
      int incl = sz;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
      }
      if (i < nb) sm.off[i] = carry + incl - sz;
      carry += __shfl_sync(0xffffffffu, incl, 31);
    }
    if (lane == 0) sm.off[nb] = carry;
    const int g0 = __ldg(&w.units[pi.u0].y) >> 4, g1 = __ldg(&w.units[pi.u1 - 1].y) >> 4;
    const MetaSizes ms = meta_sizes(pi.u0, pi.u1, g0, g1, st.in.permuted);
    const int meta_bytes = ms.total();
    const int total = meta_bytes + carry;
    // Ring space: skip to the start at a wrap, then wait until the bytes and the entry are free.
    if (pos % R + total > R) pos += R - pos % R;
    const int e = seq % k_queue;
    const long long t_ring = tr.now();
    while (oldest < seq && (seq - oldest >= k_queue || released < pos + total - R)) {
      mbar_wait(&sm.empty[oldest % k_queue], unsigned(oldest / k_queue) & 1u, "ring space, item", oldest);
      released = sm.end[oldest % k_queue];
      ++oldest;
    }
    tr.add(k_tr_ring_wait, t_ring);
    __syncwarp();
    const int base = pos % R;
    if (lane == 0) {
      sm.end[e] = pos + total;
      ItemHdr<CW>& h = sm.hdr[e];
      h.info = base;
      h.perm = base + ms.info;
      h.smax = h.perm + ms.perm;
      h.scale = h.smax + ms.smax;
      h.g0 = g0;
      h.g0e = g0 & ~7;
      mbar_expect(&sm.meta[e], unsigned(meta_bytes));
      for (int c = 0; c < CW; ++c) {
        const int a = share_begin<CW>(nb, c), b = share_begin<CW>(nb, c + 1);
        h.woff[c] = base + meta_bytes + sm.off[a];
        mbar_expect(&sm.full[e * CW + c], p.skip & k_skip_weights ? 0u : unsigned(sm.off[b] - sm.off[a]));
      }
    }
    __syncwarp();
    // The tables (meta barrier), then the units (their warp's barrier).
    const long long t_issue = tr.now();
    unsigned char* dst = sm.ring + base;
    if (lane == 0) bulk_copy(dst, w.units + (pi.u0 & ~1), unsigned(ms.info), &sm.meta[e]);
    if (lane == 1 && ms.perm) bulk_copy(dst + ms.info, w.perm + pi.u0 * 32, unsigned(ms.perm), &sm.meta[e]);
    if (lane == 2) bulk_copy(dst + ms.info + ms.perm, w.q_scale_max + (g0 & ~7), unsigned(ms.smax), &sm.meta[e]);
    // The item's scales and each warp's share of its units are contiguous in the tile layout
    // (exl2_unit_words): one copy each.
    if (lane == 3)
      bulk_copy(dst + ms.info + ms.perm + ms.smax, w.q_scale + exl2_scale_words(w, g0, pi.tile), unsigned(ms.scale),
                &sm.meta[e]);
    for (int c = p.skip & k_skip_weights ? CW : lane; c < CW; c += 32) {
      const int a = share_begin<CW>(nb, c), b = share_begin<CW>(nb, c + 1);
      if (a < b)
        bulk_copy(dst + meta_bytes + sm.off[a], w.q_weight + exl2_unit_words(w, __ldg(&w.units[pi.u0 + a].x), pi.tile),
                  unsigned(sm.off[b] - sm.off[a]), &sm.full[e * CW + c]);
    }
    pos += total;
    __syncwarp();
    tr.add(k_tr_issue, t_issue);
  });
  tr.add(k_tr_producer, t_start);
}

// ---- the consumer warps ----

// The input vector of a stage into shared memory as fp16 (all consumer threads).
// Four input features (4i .. 4i+3) of a stage in fp32: the residual (RMSNorm mode; its squares
// added to ss), SiLU(gate) * up, or the fp16 input widened (exact).
__device__ __forceinline__ float4 input4(const PipeStage& st, int i, float& ss) {
  const GemvInput& in = st.in;
  if (st.mode == k_x_norm) {
    const float4 v = __ldcg(reinterpret_cast<const float4*>(in.xf) + i);
    ss = fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, ss))));
    return v;
  }
  if (st.mode == k_x_silu) {
    const float4 g = __ldcg(reinterpret_cast<const float4*>(in.xf) + i);
    const float4 u = __ldcg(reinterpret_cast<const float4*>(in.up) + i);
    return make_float4(silu_times(g.x, u.x), silu_times(g.y, u.y), silu_times(g.z, u.z), silu_times(g.w, u.w));
  }
  const uint2 h = __ldcg(reinterpret_cast<const uint2*>(in.x) + i);
  const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&h.x));
  const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&h.y));
  return make_float4(a.x, a.y, b.x, b.y);
}

// Element q of the stage's input as it goes into x_s: fp16(v * 1/rms * w[q]) (the launch form's
// rounding) in RMSNorm mode, fp16(v) otherwise.
__device__ __forceinline__ __half input_half(const PipeStage& st, float v, float rinv, int q) {
  return __float2half_rn(st.mode == k_x_norm ? v * rinv * __half2float(__ldg(st.in.norm_w + q)) : v);
}

// The input vector of a stage into shared memory as fp16 (all consumer threads). With in.order
// (the layers' shared permutation) element r of x_s is input feature order[r]: the features are
// read in order (coalesced) into fp32 staging after the k halves, then gathered. RMSNorm inputs
// are staged the same way, so the residual is read from global memory once (the norm needs the
// whole row before any element can be written).
template <int CW>
__device__ void load_input(const PipeStage& st, const PipeSmem<CW>& sm) {
  constexpr int CT = CW * 32;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int k4 = st.k / 4;
  const bool norm = st.mode == k_x_norm;
  float4* stage = st.in.order || norm ? reinterpret_cast<float4*>(sm.xs + st.k) : nullptr;
  auto put4 = [&](int i, const float4& v, float rinv) {
    reinterpret_cast<__half2*>(sm.xs)[2 * i] =
        __halves2half2(input_half(st, v.x, rinv, 4 * i), input_half(st, v.y, rinv, 4 * i + 1));
    reinterpret_cast<__half2*>(sm.xs)[2 * i + 1] =
        __halves2half2(input_half(st, v.z, rinv, 4 * i + 2), input_half(st, v.w, rinv, 4 * i + 3));
  };
  float ss = 0.0f;
  for (int i = tid; i < k4; i += CT) {
    const float4 v = input4(st, i, ss);
    if (stage) stage[i] = v;
    else if (!norm) put4(i, v, 1.0f);
  }
  if (!stage && !norm) return;
  // 1 / rms over the whole row (the launch form's order: threads, then warps in order).
  float rinv = 1.0f;
  if (norm) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) sm.norm[warp] = ss;
  }
  consumers_sync<CW>();
  if (norm) {
    float t = 0.0f;
#pragma unroll
    for (int w = 0; w < CW; ++w) t += sm.norm[w];
    rinv = rsqrtf(t / float(st.k) + st.in.eps);
  }
  if (st.in.order) {
    const float* staged = reinterpret_cast<const float*>(stage);
    for (int r = tid; r < st.k; r += CT) {
      const int q = __ldg(st.in.order + r);
      sm.xs[r] = input_half(st, staged[q], rinv, q);
    }
  } else {
    for (int i = tid; i < k4; i += CT) put4(i, stage[i], rinv);
  }
}

// The B fragment of one unit for the lanes of row 0 (g == 0): rows 2t, 2t+1, 2t+8, ... of the unit,
// through the item's permutation (or in stored order: perm null). Branch-free: every lane loads
// (lane & 3's rows, the same addresses as a row-0 lane: broadcasts) and the lanes of other rows
// keep zeros; the permutation is data, not a second instantiation, so the unit loop stays small
// (session 21's profile: half of the loop's stalls were instruction fetch).
__device__ __forceinline__ void unit_fragment(const __half* xs, const std::int32_t* perm, int row0, int lane,
                                              std::uint32_t (&b)[1][4]) {
  const int t = lane & 3;
  const bool row_lane = lane < 4;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int r = row0 + 2 * t + 8 * q;
    int lo = r, hi = r + 1;
    if (perm) {
      lo = perm[r];
      hi = perm[r + 1];
    }
    const __half2 h = __halves2half2(xs[lo], xs[hi]);
    b[0][q] = row_lane ? *reinterpret_cast<const std::uint32_t*>(&h) : 0u;
  }
}

// A run of n units of width B at ring bytes `w8` (unit i at w8 + 256 B i): per group the mma
// accumulate in `part`, then go into acc scaled by the group's 64 fp16 scales (the launch form's
// order: acc = fma(part, scale, acc) group by group). One unit at a time and not unrolled: two
// units in flight gained nothing (the loop is not latency-bound) and doubled the code.
template <int B>
__device__ __forceinline__ void pipe_run(const unsigned char* w8, int n, const int2* info, int row0,
                                         const __half* xs, const std::int32_t* perm, const std::uint32_t* scales,
                                         const __half* smax, int g0, int g0e, int lane, float (&acc)[4][4]) {
  for (int i = 0; i < n;) {
    const int grp = info[i].y >> 4;
    float part[1][4][4];
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
      for (int c = 0; c < 4; ++c) part[0][mt][c] = 0.0f;
#pragma unroll 1
    for (; i < n && (info[i].y >> 4) == grp; ++i) {
      std::uint32_t w[16];
      read_unit<B>(reinterpret_cast<const std::uint32_t*>(w8 + std::size_t(i) * 256 * B), lane, w);
      std::uint32_t b[1][4];
      unit_fragment(xs, perm, row0 + i * 32, lane, b);
      mma_tile<B, 1, 0, 0>(w, b, part);
      mma_tile<B, 1, 0, 1>(w, b, part);
      mma_tile<B, 1, 0, 2>(w, b, part);
      mma_tile<B, 1, 0, 3>(w, b, part);
      mma_tile<B, 1, 1, 0>(w, b, part);
      mma_tile<B, 1, 1, 1>(w, b, part);
      mma_tile<B, 1, 1, 2>(w, b, part);
      mma_tile<B, 1, 1, 3>(w, b, part);
    }
    if ((lane & 3) == 0) {  // row 0 of the C fragments: c0 (column mt*16 + g), c2 (column + 8)
      const std::uint32_t sw = scales[(grp - g0) * 8 + (lane >> 2)];
      const __half mx = smax[grp - g0e];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt) {
        acc[mt][0] = fmaf(part[0][mt][0], exl2_scale(mx, (sw >> (4 * (mt * 2))) & 15u), acc[mt][0]);
        acc[mt][2] = fmaf(part[0][mt][2], exl2_scale(mx, (sw >> (4 * (mt * 2 + 1))) & 15u), acc[mt][2]);
      }
    }
  }
}

// ---- the attention stage (consumer warps) ----

// Scratch of an attention item in the input region: q after RoPE [G][D], the warps' online
// softmax states [CW][G] (max, sum) and outputs [CW][G][D], the ticket.
template <int CW>
constexpr std::size_t attn_scratch_bytes(int d, int g) {
  return std::size_t(g) * d * 4 + std::size_t(CW) * g * 8 + std::size_t(CW) * g * d * 4 + 16;
}

// One item: the G query heads of KV head kh over the keys of one split (as the fused decode
// step's split kernel, attention.cu: RoPE of q, and of the new key with its K/V row written by
// the split that holds it). Warp w takes keys k0 + w, k0 + w + CW, ...; a lane holds D / 32
// elements of q, K, V and the output. The warps' states meet in shared memory, the split's
// partials (unnormalised output, max, sum) go to part, and the last split of the KV head (a
// ticket) merges the splits in split order into out and counts the stage's head as done.
template <int CW, bool TB, int D, int G>
__device__ void attention_item(const PipeParams& p, const PipeSmem<CW>& sm, int stage, int kh, int split) {
  constexpr int CT = CW * 32, EPL = D / 32;
  const PipeAttention& a = attention_of<TB>(p, stage_of<TB>(p, stage));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int nh = a.shape.nh, nkv = a.shape.nkv, splits = a.shape.splits, gsz = nh / nkv;
  const DecodeSplit sp = decode_split(__ldcg(a.past), 0, split, splits);
  if (sp.k0 >= sp.k1) return;  // past the keys (the whole block alike)
  float* qs = reinterpret_cast<float*>(sm.xs);
  float* s_m = qs + G * D;
  float* s_l = s_m + CW * G;
  float* s_acc = s_l + CW * G;
  unsigned* s_ticket = reinterpret_cast<unsigned*>(s_acc + CW * G * D);
  const float2* cs = a.in.cs;
  const int style = a.in.style;
  for (int i = tid; i < gsz * D; i += CT) {
    const int h = i / D, e = i - h * D;
    qs[h * D + e] = rope_elem(a.in.q + std::size_t(kh * gsz + h) * D, e, D, style, cs) * a.shape.scale;
  }
  const std::size_t row_stride = std::size_t(nkv) * D;
  if (sp.k1 == sp.kv_len) {  // this split holds the new key: RoPE it, write the K and V rows
    const std::size_t row = std::size_t(kv_row(a.shape.pages, sp.kv_len - 1)) * row_stride + std::size_t(kh) * D;
    const float* kr = a.in.k + std::size_t(kh) * D;
    const float* vr = a.in.v + std::size_t(kh) * D;
    for (int i = tid; i < D / 2; i += CT) {
      const int x = style == 0 ? i : 2 * i, y = style == 0 ? i + D / 2 : 2 * i + 1;
      const float2 c = cs[i];
      const float xa = kr[x], xb = kr[y];
      a.k_cache[row + x] = __float2half_rn(xa * c.x - xb * c.y);
      a.k_cache[row + y] = __float2half_rn(xb * c.x + xa * c.y);
    }
    for (int i = tid; i < D; i += CT) a.v_cache[row + i] = __float2half_rn(vr[i]);
  }
  consumers_sync<CW>();  // q in shared memory; the new row visible to the block's loads
  float qf[G][EPL], m[G], l[G], acc[G][EPL];
#pragma unroll
  for (int h = 0; h < G; ++h) {
    m[h] = -FLT_MAX;
    l[h] = 0.0f;
#pragma unroll
    for (int j = 0; j < EPL; ++j) {
      qf[h][j] = h < gsz ? qs[h * D + lane * EPL + j] : 0.0f;
      acc[h][j] = 0.0f;
    }
  }
  const __half* kb = a.k_cache + std::size_t(kh) * D + lane * EPL;
  const __half* vb = a.v_cache + std::size_t(kh) * D + lane * EPL;
  // U keys per warp and round, all their K and V loads issued before any is used (a warp has
  // the keys k0 + warp + CW * i; whether a key exists is the same for the whole warp). Raw fp16
  // pairs are kept until use (EPL / 2 registers per row).
  constexpr int U = (CW >= 16 ? 4 : 8) / (G >= 8 ? 2 : 1);
  for (int base = sp.k0 + warp; base < sp.k1; base += CW * U) {
    __half2 kr[U][EPL / 2], vr[U][EPL / 2];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int key = base + u * CW < sp.k1 ? base + u * CW : sp.k0;
      const std::size_t at = std::size_t(kv_row(a.shape.pages, key)) * row_stride;
#pragma unroll
      for (int j = 0; j < EPL / 2; ++j) {
        kr[u][j] = reinterpret_cast<const __half2*>(kb + at)[j];
        vr[u][j] = reinterpret_cast<const __half2*>(vb + at)[j];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + u * CW >= sp.k1) break;
      float kf[EPL];
#pragma unroll
      for (int j = 0; j < EPL / 2; ++j) {
        const float2 kk = __half22float2(kr[u][j]);
        kf[2 * j] = kk.x; kf[2 * j + 1] = kk.y;
      }
      float sc[G];
#pragma unroll
      for (int h = 0; h < G; ++h) {
        float d = 0.0f;
#pragma unroll
        for (int j = 0; j < EPL; ++j) d = fmaf(qf[h][j], kf[j], d);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
        sc[h] = d;
      }
      float vf[EPL];
#pragma unroll
      for (int j = 0; j < EPL / 2; ++j) {
        const float2 vv = __half22float2(vr[u][j]);
        vf[2 * j] = vv.x; vf[2 * j + 1] = vv.y;
      }
      decode_update<G>(sc, vf, m, l, acc);
    }
  }
#pragma unroll
  for (int h = 0; h < G; ++h) {
#pragma unroll
    for (int j = 0; j < EPL; ++j) s_acc[(warp * G + h) * D + lane * EPL + j] = acc[h][j];
    if (lane == 0) { s_m[warp * G + h] = m[h]; s_l[warp * G + h] = l[h]; }
  }
  consumers_sync<CW>();
  // The split's partials: the warps merged (a warp without keys has max -FLT_MAX, weight 0).
  for (int i = tid; i < gsz * D; i += CT) {
    const int h = i / D, e = i - h * D;
    float mx = -FLT_MAX;
#pragma unroll
    for (int w = 0; w < CW; ++w) mx = fmaxf(mx, s_m[w * G + h]);
    float o = 0.0f, lsum = 0.0f;
#pragma unroll
    for (int w = 0; w < CW; ++w) {
      const float f = __expf(s_m[w * G + h] - mx);
      o += s_acc[(w * G + h) * D + e] * f;
      lsum += s_l[w * G + h] * f;
    }
    float* pp = a.part + (std::size_t(kh * gsz + h) * splits + split) * (D + 2);
    __stcg(pp + e, o);
    if (e == 0) { __stcg(pp + D, mx); __stcg(pp + D + 1, lsum); }
  }
  consumers_sync<CW>();
  const int split_len = decode_split_len(sp.kv_len, splits);
  const int ns = (sp.kv_len + split_len - 1) / split_len;  // splits with keys
  if (tid == 0) *s_ticket = atom_acq_rel_add(a.in.counters + kh, 1u);
  consumers_sync<CW>();
  if (*s_ticket == unsigned(ns) - 1u) {  // the last split of the head group: merge in split order
    for (int i = tid; i < gsz * D; i += CT) {
      const int h = i / D, e = i - h * D;
      const float* pp = a.part + std::size_t(kh * gsz + h) * splits * (D + 2);
      float mx = -FLT_MAX;
      for (int k = 0; k < ns; ++k) mx = fmaxf(mx, __ldcg(pp + k * (D + 2) + D));
      float o = 0.0f, lsum = 0.0f;
      for (int k = 0; k < ns; ++k) {
        const float f = __expf(__ldcg(pp + k * (D + 2) + D) - mx);
        o += __ldcg(pp + k * (D + 2) + e) * f;
        lsum += __ldcg(pp + k * (D + 2) + D + 1) * f;
      }
      __stcg(a.out + std::size_t(kh * gsz + h) * D + e, __float2half_rn(o / lsum));
    }
    if (tid == 0) a.in.counters[kh] = 0u;
    __threadfence();
    consumers_sync<CW>();
    if (tid == 0) red_release_add(p.sync + stage, 1u);  // one more KV head of the stage
  }
  consumers_sync<CW>();  // the scratch is reused by the next item
}

template <int CW, bool TB>
__device__ void pipe_attention(const PipeParams& p, const PipeSmem<CW>& sm, int stage, int it) {
  const AttentionShape& as = attention_of<TB>(p, stage_of<TB>(p, stage)).shape;
  const int splits = as.splits, kh = it / splits, split = it - kh * splits;
  const int gsz = as.nh / as.nkv;
#define EXL_PIPE_ATTN(D, G) attention_item<CW, TB, D, G>(p, sm, stage, kh, split)
  if (as.d == 64) {
    if (gsz <= 1) EXL_PIPE_ATTN(64, 1);
    else if (gsz <= 2) EXL_PIPE_ATTN(64, 2);
    else if (gsz <= 4) EXL_PIPE_ATTN(64, 4);
    else EXL_PIPE_ATTN(64, 8);
  } else {
    if (gsz <= 1) EXL_PIPE_ATTN(128, 1);
    else if (gsz <= 2) EXL_PIPE_ATTN(128, 2);
    else if (gsz <= 4) EXL_PIPE_ATTN(128, 4);
    else EXL_PIPE_ATTN(128, 8);
  }
#undef EXL_PIPE_ATTN
}

// AT: the launch has an attention stage (without, the kernel carries no attention code and needs
// fewer registers).
template <int CW, bool TB, bool AT>
__device__ void pipe_consume(const PipeParams& p, const PipeSmem<CW>& sm) {
  constexpr int CT = CW * 32;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const unsigned G = gridDim.x;
  int seq = 0;
  const Tracer tr{tid == 0 ? p.trace : nullptr};  // thread 0: the stage waits and warp 0's waits
  const long long t_start = tr.now();
  for (int s = 0; s < p.count; ++s) {
    const PipeStage& st = stage_of<TB>(p, s);
    const long long t_wait = tr.now();
    // Every consumer warp is past its items of the previous stage here (x_s is reused).
    if (s > 0 && tid == 0 && !(p.skip & k_skip_stage_wait))
      wait_counter(p.sync + s - 1, unsigned(stage_of<TB>(p, s - 1).target), s);
    consumers_sync<CW>();
    tr.add(k_tr_stage_wait, t_wait);
    if (st.attention) {
      if (tid == 0) red_release_add(p.sync + s, 1u);  // (no init regions)
      if constexpr (AT)
        for (int it = int(blockIdx.x); it < st.items; it += int(G)) pipe_attention<CW, TB>(p, sm, s, it);
      continue;
    }
    const long long t_input = tr.now();
    // This stage's init regions (accumulators of later launches: their earlier readers are done).
    write_inits(st.init, st.inits, int(blockIdx.x) * CT + tid, int(G) * CT);
    load_input<CW>(st, sm);
    consumers_sync<CW>();
    tr.add(k_tr_input, t_input);
    if (tid == 0) red_release_add(p.sync + s, 1u);  // the block's init share is written
    for (int it = int(blockIdx.x); it < st.items; it += int(G), ++seq) {
      const SplitPlan pi = pipe_item(st, it);
      const int nb = pi.u1 - pi.u0;
      const int e = seq % k_queue;
      const unsigned ph = unsigned(seq / k_queue) & 1u;
      float acc[4][4];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int c = 0; c < 4; ++c) acc[mt][c] = 0.0f;
      const long long t_meta = tr.now();
      mbar_wait(&sm.meta[e], ph, "the tables of item", seq);
      tr.add(k_tr_meta_wait, t_meta);
      tr.count(k_tr_items, 1);
      const ItemHdr<CW>& h = sm.hdr[e];
      const int wa = share_begin<CW>(nb, warp), wb = share_begin<CW>(nb, warp + 1);
      if (wa < wb) {
        const long long t_data = tr.now();
        mbar_wait(&sm.full[e * CW + warp], ph, "the weights of item", seq);
        tr.add(k_tr_data_wait, t_data);
        const long long t_compute = tr.now();
        const int2* info = reinterpret_cast<const int2*>(sm.ring + h.info) + (pi.u0 - (pi.u0 & ~1));
        const std::int32_t* perm = st.in.permuted ? nullptr : reinterpret_cast<const std::int32_t*>(sm.ring + h.perm);
        const std::uint32_t* scales = reinterpret_cast<const std::uint32_t*>(sm.ring + h.scale);
        const __half* smax = reinterpret_cast<const __half*>(sm.ring + h.smax);
        // Rows: with a permutation, relative to the item (perm holds the item's rows); without,
        // absolute (the input is in stored row order).
        const int row_base = perm ? 0 : pi.u0 * 32;
        const unsigned char* w8 = sm.ring + h.woff[warp];
        for (int i = p.skip & k_skip_compute ? wb : wa; i < wb;) {
          const int bits = info[i].y & 15;
          int e2 = i + 1;
          while (e2 < wb && (info[e2].y & 15) == bits) ++e2;
#define EXL_PIPE_RUN(B) \
  pipe_run<B>(w8, e2 - i, info + i, row_base + i * 32, sm.xs, perm, scales, smax, h.g0, h.g0e, lane, acc)
          switch (bits) {
            case 2: EXL_PIPE_RUN(2); break;
            case 3: EXL_PIPE_RUN(3); break;
            case 4: EXL_PIPE_RUN(4); break;
            case 5: EXL_PIPE_RUN(5); break;
            case 6: EXL_PIPE_RUN(6); break;
            default: EXL_PIPE_RUN(8); break;
          }
#undef EXL_PIPE_RUN
          w8 += std::size_t(e2 - i) * 256 * bits;
          i = e2;
        }
        tr.add(k_tr_compute, t_compute);
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(&sm.empty[e]);  // the ring entry goes back to the producer
      // The warp's sums by column into the item's sum buffer, for the tail warp.
      const int b = seq % k_sum_bufs;
      const long long t_buf = tr.now();
      if (seq >= k_sum_bufs)
        mbar_wait(&sm.sum_empty[b], unsigned(seq / k_sum_bufs - 1) & 1u, "a sum buffer, item", seq);
      tr.add(k_tr_sum_buf_wait, t_buf);
      float* red_w = sm.red + (b * CW + warp) * k_tile_cols;
      if ((lane & 3) == 0) {
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) {
          red_w[mt * 16 + (lane >> 2)] = acc[mt][0];
          red_w[mt * 16 + (lane >> 2) + 8] = acc[mt][2];
        }
      }
      __threadfence_block();  // the lanes' sums before lane 0's arrival (release) publishes them
      __syncwarp();
      if (lane == 0) mbar_arrive(&sm.sum_full[b]);
    }
  }
  tr.add(k_tr_consumer, t_start);
  tr.count(k_tr_launches, 1);
  if (tid == 0) pipe_exit(p);
}

// The tail warp: each item's sums (consumer warps in order) into y, or into the item's split-K
// slot, the tile's last item adding the slots in split order; a finished tile counts towards
// its stage. Off the consumers' path: they go on with the next item meanwhile.
template <int CW, bool TB>
__device__ void pipe_tail(const PipeParams& p, const PipeSmem<CW>& sm, int tail) {
  const int lane = threadIdx.x & 31;
  const Tracer tr{lane == 0 && tail == 0 ? p.trace : nullptr};
  const long long t_start = tr.now();
  for_each_item<TB>(p, [&](int s, const PipeStage& st, int it, const SplitPlan& pi, int seq) {
    if (seq % k_tails != tail) return;
    const GemvJob& job = st.job[pi.j];
    const int b = seq % k_sum_bufs;
    const long long t_sum = tr.now();
    mbar_wait(&sm.sum_full[b], unsigned(seq / k_sum_bufs) & 1u, "the sums of item", seq);
    tr.add(k_tr_sum_wait, t_sum);
    const long long t_global = tr.now();
    float sum[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      sum[h] = 0.0f;
#pragma unroll
      for (int w = 0; w < CW; ++w) sum[h] += sm.red[(b * CW + w) * k_tile_cols + lane + 32 * h];
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&sm.sum_empty[b]);
    // y gets one addition per element and stage (this item's, or the tile's last item's sum of
    // the slots), so an atomic add gives what a read, add and store would, without the read.
    bool done = true;
    const bool sums = !(p.skip & k_skip_tail_sums);
    if (job.ksplit == 1) {
      if (sums) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int col = pi.tile * k_tile_cols + lane + 32 * h;
          if (col < job.w.n) atomicAdd(job.y + col, sum[h]);
        }
      }
    } else {
      float* slots = p.partials + std::size_t(it - pi.kb) * k_tile_cols;
#pragma unroll
      for (int h = 0; h < 2; ++h)
        if (sums) __stcg(slots + std::size_t(pi.kb) * k_tile_cols + lane + 32 * h, sum[h]);
      // One acq_rel ticket by lane 0, ordered with the other lanes' stores and loads by the warp
      // barriers around it (last_block_arrival's pattern for a warp): no fence in every lane.
      __syncwarp();
      unsigned* ticket = p.tickets + job.tile_begin + pi.tile;
      unsigned t = 0;
      if (lane == 0) t = atom_acq_rel_add(ticket, 1u);
      t = __shfl_sync(0xffffffffu, t, 0);
      done = t == unsigned(job.ksplit) - 1u;
      if (done) {
        __syncwarp();
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int col = pi.tile * k_tile_cols + lane + 32 * h;
          if (!sums || col >= job.w.n) continue;
          float v = 0.0f;
          for (int k = 0; k < job.ksplit; ++k) v += __ldcg(slots + std::size_t(k) * k_tile_cols + lane + 32 * h);
          atomicAdd(job.y + col, v);
        }
        if (lane == 0) *ticket = 0u;
      }
    }
    if (done) {
      __syncwarp();  // the lanes' y additions before lane 0's release (cumulative) publishes the tile
      if (lane == 0) red_release_add(p.sync + s, 1u);  // one more column tile of the stage
    }
    tr.add(k_tr_tail_global, t_global);
  });
  tr.add(k_tr_tail, t_start);
  if (lane == 0) pipe_exit(p);
}

template <int CW, bool TB, bool AT>
__global__ void __launch_bounds__((CW + 1 + k_tails) * 32, 1) exl2_pipe_kernel(const __grid_constant__ PipeParams p) {
  EXL_DYNAMIC_SMEM(__align__(128) unsigned char, pipe_smem);
  // Launched without PDL (its grid must be resident before anyone waits); its dependents are
  // scheduled once every block has triggered.
  pdl_trigger();
  const PipeSmem<CW> sm(pipe_smem, p);
  if (threadIdx.x == 0) {
    for (int e = 0; e < k_queue; ++e) {
      mbar_init(&sm.meta[e], 1);
      mbar_init(&sm.empty[e], CW);
      for (int c = 0; c < CW; ++c) mbar_init(&sm.full[e * CW + c], 1);
    }
    for (int b = 0; b < k_sum_bufs; ++b) {
      mbar_init(&sm.sum_full[b], CW);
      mbar_init(&sm.sum_empty[b], 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  pdl_wait();
  const int warp = int(threadIdx.x) >> 5;
  if (warp == CW) {
    pipe_produce<CW, TB>(p, sm);
  } else if (warp > CW) {
    pipe_tail<CW, TB>(p, sm, warp - CW - 1);
  } else {
    pipe_consume<CW, TB, AT>(p, sm);
  }
}

// Tuning experiments, read once from the environment (unset in normal use): EXL_PIPE_SKIP, the
// k_skip_* bits; EXL_PIPE_UPB, units per work item (pipe_ksplit takes the valid split nearest it).
struct PipeKnobs {
  int skip = 0, upb = 0;
};
const PipeKnobs& pipe_knobs() {
  static const PipeKnobs k = [] {
    PipeKnobs r;
    if (const char* v = std::getenv("EXL_PIPE_SKIP")) r.skip = std::atoi(v);
    if (const char* v = std::getenv("EXL_PIPE_UPB")) r.upb = std::atoi(v);
    return r;
  }();
  return k;
}

// Items per tile (split K) of a stage: the fewest items on the busiest block, counted in units
// plus a small fixed part per item, with every item fitting half the ring (and the split-K
// workspace); with EXL_PIPE_UPB the valid split whose units per item are nearest the forced count.
int pipe_ksplit(int units, int tiles, int grid, int max_bits, int ring_bytes) {
  const int force = pipe_knobs().upb;
  int best = 0;
  double best_cost = 1e30;
  for (int ks = 1; ks <= units; ++ks) {
    const int upb = (units + ks - 1) / ks;
    if (upb > k_pipe_units) continue;
    const int kse = (units + upb - 1) / upb;
    const std::size_t bytes = std::size_t(upb) * (256 * max_bits + 8 + 128 + 32 + 2) + 64;
    if (bytes * 2 > std::size_t(ring_bytes)) continue;
    const std::size_t items = std::size_t(tiles) * kse;
    if (kse > 1 && items * k_tile_cols > k_gemv_partial_floats) break;
    const double per_block = std::ceil(double(items) / grid);
    const double cost = force > 0 ? std::abs(upb - force) : per_block * (2.0 + upb);
    if (cost < best_cost - 1e-9) { best_cost = cost; best = kse; }
  }
  if (best == 0) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: a layer's work items do not fit the ring");
  return best;
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

static_assert(sizeof(PipeParams) <= 4000, "the pipeline's parameters must fit a kernel's 4 KB of arguments");

// One stage of a launch as the host gives it: a GEMV call or an attention step.
struct PipeSpec {
  const GemvCall* gemv = nullptr;
  const PipeAttention* attention = nullptr;
};
struct PipeOptions {
  int warps = 8;
  bool order = false, coop = false;
  unsigned* sync = nullptr;
  unsigned long long* trace = nullptr;
};

// Refuses what the pipeline cannot run, with the reason.
void check_specs(const std::vector<PipeSpec>& specs, const PipeOptions& o) {
  if (specs.empty()) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: no stages");
  if (int(specs.size()) > k_pipe_max_stages) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: too many stages");
  if (!exl2_pipe_supported()) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: needs compute capability 9.0");
  if (!o.sync) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: no stage counters");
  const float* ws = nullptr;
  for (const PipeSpec& sp : specs) {
    if (const PipeAttention* a = sp.attention) {
      const AttentionShape& as = a->shape;
      if (as.t != 1 || (as.d != 64 && as.d != 128) || as.nkv < 1 || as.nh % as.nkv != 0 || as.nh / as.nkv > 8 ||
          as.splits < 1 || as.rotate_out)
        throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: attention of this shape is not a pipeline stage");
      if (!a->in.q || !a->in.k || !a->in.v || !a->in.cs || !a->in.counters || !a->k_cache || !a->v_cache ||
          !a->past || !a->part || !a->out)
        throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: attention stage without its buffers");
      continue;
    }
    const GemvCall& g = *sp.gemv;
    if (g.m != 1 || g.count <= 0 || g.count > k_gemv_max_layers)
      throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: stages of one row and 1 to 3 layers only");
    if (!g.ws.partials || (ws && g.ws.partials != ws))
      throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: every stage needs the same split-K workspace");
    ws = g.ws.partials;
    if (g.mode == k_x_norm && !g.in.norm_w) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: norm without weights");
  }
}

// A launch worked out on the host: its parameters (without the stage table's device address),
// the stages and attention descriptors, shared memory and grid.
struct PipePlan {
  PipeParams p;
  std::vector<PipeStage> stages;
  std::vector<PipeAttention> attns;
  std::size_t smem = 0;
  int grid = 0;
};

template <int CW>
PipePlan plan_pipe(const std::vector<PipeSpec>& specs, const PipeOptions& o) {
  check_specs(specs, o);
  PipePlan plan;
  PipeParams& p = plan.p;
  // The input region: k halves, and k floats more of staging where a stage fills it in stored
  // order or normalises it; an attention stage's scratch.
  int kmax = 0;
  int grid = 0;
  for (const PipeSpec& sp : specs) {
    if (const PipeAttention* a = sp.attention) {
      const AttentionShape& as = a->shape;
      const int g = as.nh / as.nkv;
      const int gp = g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8;
      kmax = std::max<int>(kmax, int((attn_scratch_bytes<CW>(as.d, gp) + 1) / 2));
      continue;
    }
    const GemvCall& g = *sp.gemv;
    const bool ordered = o.order && !g.in.permuted && (g.in.order || g.count == 1);
    kmax = std::max(kmax, g.w[0]->k * (ordered || g.mode == k_x_norm ? 3 : 1));
    if (!grid) grid = std::max(1, g.sm_count);
  }
  if (!grid) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: no GEMV stage");
  p.xs_halves = kmax;
  const int optin = device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>();
  const std::size_t fixed = pipe_fixed_smem<CW>(kmax) + 128;
  if (std::size_t(optin) < fixed + 32768)
    throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: not enough shared memory per block");
  p.ring_bytes = int(std::min<std::size_t>(std::size_t(optin) - fixed, 200u << 10) & ~std::size_t(127));
  plan.smem = std::size_t(p.ring_bytes) + fixed;
  plan.grid = grid;
  p.count = int(specs.size());
  p.sync = o.sync;
  p.trace = o.trace;
  p.skip = pipe_knobs().skip;
  for (const PipeSpec& sp : specs) {
    PipeStage st;
    if (const PipeAttention* a = sp.attention) {
      plan.attns.push_back(*a);
      st.attention = int(plan.attns.size());
      st.items = a->shape.nkv * a->shape.splits;
      st.target = a->shape.nkv + grid;
      plan.stages.push_back(st);
      continue;
    }
    const GemvCall& g = *sp.gemv;
    p.partials = g.ws.partials;
    p.tickets = g.ws.counters;
    int tiles = 0, max_bits = 2;
    for (int j = 0; j < g.count; ++j) {
      const Exl2Device& w = *g.w[j];
      if (w.k != g.w[0]->k || w.k % 32 != 0)
        throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: the layers of a stage differ in k");
      if (!aligned16(w.q_weight) || !aligned16(w.q_scale) || !aligned16(w.q_scale_max) || !aligned16(w.perm) ||
          !aligned16(w.units))
        throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: layer tables not 16-byte aligned");
      tiles += w.tiles;
      max_bits = std::max(max_bits, w.max_bits);
    }
    if (tiles > k_gemv_counters) throw_status(EXL_CUDA_ERR_UNSUPPORTED, "exl2_gemv_pipe: too many column tiles");
    const int units = g.w[0]->k / 32;
    const int split = pipe_ksplit(units, tiles, grid, max_bits, p.ring_bytes);
    const int upb = (units + split - 1) / split;
    const int ks = (units + upb - 1) / upb;  // every item has units
    st.count = g.count;
    int items = 0, tile_begin = 0;
    for (int j = 0; j < g.count; ++j) {
      GemvJob& job = st.job[j];
      job.w = *g.w[j];
      job.y = g.y[j];
      job.upb = upb;
      job.ksplit = ks;
      job.block_begin = items;
      job.tile_begin = tile_begin;
      items += job.w.tiles * ks;
      tile_begin += job.w.tiles;
    }
    st.items = items;
    st.target = tiles + grid;
    st.k = g.w[0]->k;
    st.mode = g.mode;
    st.in = g.in;
    // o.order: the input in the layers' stored row order (one layer: its own permutation).
    if (st.in.permuted || !o.order) st.in.order = nullptr;
    else if (!st.in.order && g.count == 1) st.in.order = g.w[0]->perm;
    if (st.in.order) st.in.permuted = true;
    st.inits = g.inits;
    for (int j = 0; j < g.inits; ++j) st.init[j] = g.init[j];
    plan.stages.push_back(st);
  }
  return plan;
}

template <int CW, bool TB, bool AT>
void launch_plan(const PipePlan& plan, const PipeParams& p, bool coop, cudaStream_t s) {
  opt_in_smem<exl2_pipe_kernel<CW, TB, AT>>(plan.smem);
  const dim3 block((CW + 1 + k_tails) * 32);
  if (!coop) {
    launch_ex(false, exl2_pipe_kernel<CW, TB, AT>, dim3(plan.grid), block, plan.smem, s, p);
    return;
  }
  // Cooperative: the runtime starts the grid only once all of it fits (another stream's kernels
  // on the same GPU cannot hold a block back), or refuses the launch.
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(plan.grid);
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = plan.smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
#ifdef EXL_CUDA_EMU
  EXL_CUDA_CHECK(emu_launch(exl2_pipe_kernel<CW, TB, AT>, cfg.gridDim, cfg.blockDim, plan.smem, s, p));
#else
  EXL_CUDA_CHECK(cudaLaunchKernelEx(&cfg, exl2_pipe_kernel<CW, TB, AT>, p));
#endif
}

// A window (GemvChainCall): its stages in the kernel's parameters.
template <int CW>
void launch_window(const std::vector<PipeSpec>& specs, const PipeOptions& o, cudaStream_t s) {
  const PipePlan plan = plan_pipe<CW>(specs, o);  // (at most k_pipe_stages: exl2_gemv_pipe)
  PipeParams p = plan.p;
  for (int i = 0; i < p.count; ++i) p.st[i] = plan.stages[std::size_t(i)];
  if (!plan.attns.empty()) {
    p.attn = plan.attns[0];
    launch_plan<CW, false, true>(plan, p, o.coop, s);
  } else {
    launch_plan<CW, false, false>(plan, p, o.coop, s);
  }
}

std::vector<PipeSpec> step_specs(const PipeStep& step) {
  std::vector<PipeSpec> specs;
  for (int i : step.order) {
    PipeSpec sp;
    if (i >= 0) sp.gemv = &step.gemv.at(std::size_t(i));
    else sp.attention = &step.attention.at(std::size_t(-1 - i));
    specs.push_back(sp);
  }
  return specs;
}
PipeOptions step_options(const PipeStep& step) {
  return PipeOptions{step.warps, step.input_order, step.coop, step.sync, step.trace};
}
// The table's layout: the stages, then the attention descriptors (16-byte aligned).
std::size_t attn_table_offset(std::size_t stages) { return (stages * sizeof(PipeStage) + 15) & ~std::size_t(15); }

template <int CW>
std::vector<unsigned char> step_image(const PipeStep& step) {
  const PipePlan plan = plan_pipe<CW>(step_specs(step), step_options(step));
  const std::size_t off = attn_table_offset(plan.stages.size());
  std::vector<unsigned char> image(off + plan.attns.size() * sizeof(PipeAttention), 0);
  std::memcpy(image.data(), plan.stages.data(), plan.stages.size() * sizeof(PipeStage));
  if (!plan.attns.empty()) std::memcpy(image.data() + off, plan.attns.data(), plan.attns.size() * sizeof(PipeAttention));
  return image;
}

template <int CW>
void launch_step(const PipeStep& step, const void* table, cudaStream_t s) {
  const PipePlan plan = plan_pipe<CW>(step_specs(step), step_options(step));
  PipeParams p = plan.p;
  p.table = static_cast<const PipeStage*>(table);
  p.attn_table = plan.attns.empty() ? nullptr
                                    : reinterpret_cast<const PipeAttention*>(static_cast<const unsigned char*>(table) +
                                                                             attn_table_offset(plan.stages.size()));
  launch_plan<CW, true, true>(plan, p, step.coop, s);
}

}  // namespace

bool exl2_pipe_supported() { return device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 9; }

void exl2_gemv_pipe(const GemvChainCall& c, cudaStream_t s) {
  if (c.count <= 0) return;
  if (c.count > k_gemv_chain_max) throw_status(EXL_CUDA_ERR_INVALID, "exl2_gemv_pipe: too many stages");
  std::vector<PipeSpec> specs;
  if (c.attention) specs.push_back(PipeSpec{nullptr, c.attention});
  for (int i = 0; i < c.count; ++i) specs.push_back(PipeSpec{&c.stage[i], nullptr});
  const PipeOptions o{c.pipe_warps, c.pipe_order, c.pipe_coop, c.pipe_sync, c.pipe_trace};
  if (o.warps == 16) launch_window<16>(specs, o, s);
  else launch_window<8>(specs, o, s);
}

std::vector<unsigned char> exl2_pipe_step_table(const PipeStep& step) {
  return step.warps == 16 ? step_image<16>(step) : step_image<8>(step);
}

void exl2_pipe_step(const PipeStep& step, const void* table, cudaStream_t s) {
  if (!table) throw_status(EXL_CUDA_ERR_INVALID, "exl2_pipe_step: no stage table");
  if (step.warps == 16) launch_step<16>(step, table, s);
  else launch_step<8>(step, table, s);
}

void pipe_trace_report(const unsigned long long* trace) {
  try {
    std::vector<unsigned long long> h(k_pipe_trace_bytes / 8);
    EXL_CUDA_CHECK(cudaDeviceSynchronize());
    EXL_CUDA_CHECK(cudaMemcpy(h.data(), trace, k_pipe_trace_bytes, cudaMemcpyDeviceToHost));
    int khz = 0;
    EXL_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, current_device()));
    const double us_per_cycle = khz > 0 ? 1e3 / khz : 0.0;
    int blocks = 0;
    while (blocks < k_trace_blocks && h[std::size_t(blocks) * k_tr_fields + k_tr_launches]) ++blocks;
    if (!blocks) return;
    const double launches = double(h[k_tr_launches]);
    static const char* names[] = {"", "consumer (start to exit)", "stage input waits", "init + input loads",
                                  "item table waits (warp 0)", "weight waits (warp 0)", "producer ring waits",
                                  "producer (start to last copy)", "tail sum waits", "tail (start to exit)", "",
                                  "tail global ops", "sum buffer waits (warp 0)", "decode + mma (warp 0)",
                                  "producer copy issue"};
    std::fprintf(stderr, "pipe trace: %d blocks, %.0f launches, %.1f items per block and launch; us per launch "
                         "(mean over blocks / max), clock %d MHz:\n",
                 blocks, launches, double(h[k_tr_items]) / launches, khz / 1000);
    for (int f = 1; f < k_tr_fields; ++f) {
      if (f == k_tr_items || f >= int(sizeof(names) / sizeof(names[0]))) continue;
      double sum = 0.0, mx = 0.0;
      for (int b = 0; b < blocks; ++b) {
        const double v = double(h[std::size_t(b) * k_tr_fields + f]) / launches * us_per_cycle;
        sum += v;
        mx = std::max(mx, v);
      }
      std::fprintf(stderr, "  %-32s %9.2f / %9.2f\n", names[f], sum / blocks, mx);
    }
  } catch (...) {
  }
}

}  // namespace exl::cuda

// exl_launch_floor: how fast can a chain of dependent kernels stream weights at all?
//
// Issue #3 asks for batch-1 decode near the bandwidth bound. The launch form (one kernel per
// GEMV, norm and attention, chained with programmatic dependent launch in a CUDA graph) reaches
// about a third of it on the 8B, and sessions 14-21 found most of the gap outside the weight
// stream. This program measures the ceiling of that form with the simplest possible kernels, no
// EXL2 decoding and no engine: each step streams its bytes of "weights" (16-byte loads, as a GEMV
// would), depends on the previous step through a 16 KB activation vector (read after the PDL
// wait, written at the end) and optionally ends in a split-K style ticket (the last block to
// arrive reads every block's partial). The step lists follow llama3-8b's and tinyllama's decode
// (norm, q/k/v, attention, o, norm, gate/up, down per layer, then the head) at 4.0 bpw.
//
// What it prints (one row per variant): µs per token, tokens/s, the bytes' effective bandwidth and
// that as a share of the single-kernel read rate, plus the fixed cost per launch of empty steps.
// If the skeleton reaches the issue's 65 % where the real decode does not, the gap is in our
// kernels; if the skeleton does not either, the launch form itself is the limit.
//
// Section 5 measures the persistent form of kernels/cuda/PERSISTENT_DECODE.md the same way (one
// launch per token, per-warp cp.async rings running ahead across grid-wide stage boundaries, or
// cluster all-reduces), and how long a release waits for the releasing thread's copies in flight.
//
// Standalone (no module, no engine): exl_launch_floor [ROUNDS [persist]] (persist: section 5
// alone). Every CUDA call checked.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#define CK(call)                                                                                        \
  do {                                                                                                  \
    cudaError_t e_ = (call);                                                                            \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

namespace {

constexpr int kVec = 4096;  // floats in the activation vector each step reads and writes (16 KB)

struct Step {
  const uint4* w = nullptr;  // this step's weights (16-byte words), nullptr: no stream
  std::size_t words = 0;
  int blocks = 0;            // grid size
  bool ticket = false;       // split-K style tail: the last block reads every block's partial
};

__device__ __forceinline__ void grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

__device__ __forceinline__ uint4 ld_stream(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// 16 bytes from global into shared memory without passing through registers (sm_80+; a plain
// copy before), and the commit / wait of such copies.
__device__ __forceinline__ void cp_async16(void* smem, const void* g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned sa = unsigned(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(g) : "memory");
#else
  *static_cast<uint4*>(smem) = *static_cast<const uint4*>(g);
#endif
}
__device__ __forceinline__ void cp_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

__device__ __forceinline__ std::size_t umin(std::size_t a, std::size_t b) { return a < b ? a : b; }

constexpr int kThreads = 512;
constexpr int kUnroll = 8;  // 16-byte loads in flight per thread

// One step. PRE 1: the first kUnroll loads of each thread are issued into registers before the
// PDL wait (weights never depend on earlier kernels), as the product's GEMV copies its first ring
// slots early (64 KB a block). PRE 2: the block's first `pre_words` 16-byte words are copied into
// shared memory with cp.async before the wait (the deep copy PERSISTENT_DECODE.md proposes).
template <int PRE>
__global__ void __launch_bounds__(kThreads) step_kernel(const uint4* __restrict__ w, std::size_t words,
                                                        const float* __restrict__ x, float* __restrict__ y,
                                                        float* __restrict__ partial, unsigned* ticket,
                                                        unsigned pre_words) {
  extern __shared__ uint4 pre_smem[];
  grid_trigger();
  const std::size_t per_block = (words + gridDim.x - 1) / gridDim.x;
  const std::size_t begin = umin(words, std::size_t(blockIdx.x) * per_block);
  const std::size_t end = umin(words, begin + per_block);
  unsigned acc = 0;
  std::size_t i = begin + threadIdx.x;
  uint4 first[kUnroll];
  std::size_t in_smem = 0;
  if (PRE == 1) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t j = i + std::size_t(u) * kThreads;
      first[u] = j < end ? ld_stream(w + j) : make_uint4(0, 0, 0, 0);
    }
  }
  if (PRE == 2) {
    in_smem = umin(end - begin, pre_words);
    for (std::size_t j = threadIdx.x; j < in_smem; j += kThreads) cp_async16(pre_smem + j, w + begin + j);
    cp_commit();
  }
  grid_wait();
  // The activation vector from the previous step: every block reads all of it, as a GEMV does.
  float xs = 0;
  for (int k = threadIdx.x; k < kVec; k += kThreads) xs += x[k];
  if (PRE == 1) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= first[u].x ^ first[u].y ^ first[u].z ^ first[u].w;
    i += std::size_t(kUnroll) * kThreads;
  }
  if (PRE == 2) {
    // The rest of the share streams from global memory while the copied part is consumed.
    i += in_smem;
    cp_wait<0>();
    __syncthreads();
    for (std::size_t j = threadIdx.x; j < in_smem; j += kThreads) {
      const uint4 v = pre_smem[j];
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  for (; i + std::size_t(kUnroll - 1) * kThreads < end; i += std::size_t(kUnroll) * kThreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = ld_stream(w + i + std::size_t(u) * kThreads);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < end; i += kThreads) {
    const uint4 v = ld_stream(w + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // Block sum (the value only keeps the loads alive; it is tiny so the vector stays finite).
  float r = xs * 1e-6f + float(acc & 0xff) * 1e-9f;
  for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
  __shared__ float warp_sum[kThreads / 32];
  __shared__ bool last;
  if ((threadIdx.x & 31) == 0) warp_sum[threadIdx.x / 32] = r;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < kThreads / 32; ++k) s += warp_sum[k];
    warp_sum[0] = s;
  }
  __syncthreads();
  const float s = warp_sum[0];
  if (!ticket) {
    // Each block writes its slice of the output vector.
    const int per = (kVec + int(gridDim.x) - 1) / int(gridDim.x);
    for (int k = int(blockIdx.x) * per + threadIdx.x; k < min(kVec, int(blockIdx.x + 1) * per); k += kThreads)
      y[k] = s + float(k) * 1e-7f;
    return;
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float t = 0;
  for (int b = threadIdx.x; b < int(gridDim.x); b += kThreads) t += partial[b];
  for (int k = threadIdx.x; k < kVec; k += kThreads) y[k] = t + float(k) * 1e-7f;
  if (threadIdx.x == 0) *ticket = 0;
}

// ---- The persistent form (PERSISTENT_DECODE.md, "A dataflow sketch"), as a skeleton -----------
//
// One launch per token, one block per SM (all resident), every warp a consumer with its own
// cp.async ring in shared memory. A warp's weights over the whole token are one stream: its share
// of every stage (a contiguous range of 1 KB units, the bytes of one 4-bit EXL2 unit-tile), in
// stage order, and it keeps D - 1 units in flight across stage boundaries (copies never depend on
// activations). A stage boundary is a counter per stage in global memory: each block, once its
// share of stage s is summed, adds its 64 outputs with integer atomics (as the exact accumulators
// do), fences and increments counter[s]; before its first unit of stage s + 1 a block polls
// counter[s] (acquire) until every block has arrived, then reads the stage's input vector from
// global memory into shared memory (a norm stage: 4096 int64 values and their sum of squares, as
// a folded RMSNorm would). So the only dependent chain per stage is poll, input read, sums,
// atomics; the streaming runs under it as long as the ring holds more than the chain lasts.
struct PStage {
  const uint4* w;       // the stage's units (1 KB each)
  unsigned units;       // 0: a boundary without weights (attention at context 0)
  unsigned in_words;    // 16-byte words of input each block reads after the boundary
  unsigned norm;        // 1: the input is int64 and its sum of squares is taken (a folded RMSNorm)
  unsigned scope = 0;   // what must be complete before the stage (persist_kernel)
};

constexpr int kPMaxStages = 256;
struct PStages {
  PStage s[kPMaxStages];
  int count;
};

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
  v = *(volatile const unsigned*)p;
#endif
  return v;
}

// A warp's share of stage s: units [a, b) of it (equal shares over all warps of the grid).
__device__ __forceinline__ void warp_share(const PStage& st, unsigned gw, unsigned nw, unsigned& a, unsigned& b) {
  a = unsigned((unsigned long long)st.units * gw / nw);
  b = unsigned((unsigned long long)st.units * (gw + 1) / nw);
}

// The warp's stream cursor: stage and unit, advanced over stages whose share is empty.
struct Cursor {
  int s;
  unsigned u, e;
};
__device__ __forceinline__ void cursor_settle(Cursor& c, const PStages& ps, unsigned gw, unsigned nw) {
  while (c.u >= c.e && ++c.s < ps.count) warp_share(ps.s[c.s], gw, nw, c.u, c.e);
}

constexpr int kPIn = 4096 * 8 / 16;  // input buffer: 32 KB (4096 int64)

// A cluster barrier. With a control warp the streaming warps arrive relaxed (a release would
// wait for their copies in flight) after a block barrier, and the control warp's release covers
// the block's shared-memory writes.
template <bool CTRL>
__device__ __forceinline__ void cluster_sync(bool ctrl) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (CTRL) {
    __syncthreads();
    if (ctrl) asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    else asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  } else {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  }
#endif
}

// WORK: rounds of two instructions per loaded word (7 is about the real unit loop's 115
// instructions a 4-bit unit per lane). CL: cluster size (0: none; a stage of scope 1 is then a
// grid boundary too). FAST: the input's loads all issued before any store, and the arrival as one
// red.release instead of a fence and an atomic.
//
// Stage scopes (what must be complete before the stage starts): 0, every block's arrival at the
// previous stage's end (grid-wide; the previous stage ends with its outputs added by integer
// atomics, with CL a reduce-scatter through the cluster's shared memory first, so a block adds
// 4096 / CL outputs); 1, the cluster's partial vectors summed (all-reduce through distributed
// shared memory: the cluster-fused layer's q/k/v -> attention -> o steps); 2, nothing beyond the
// block itself (down after gate/up where a block holds whole gate/up columns).
template <int W, int D, int WORK, int CL, bool FAST, bool CTRL = false, bool PUSH = false>
__global__ void __launch_bounds__((W + CTRL) * 32, 1) persist_kernel(const PStages* __restrict__ pst, unsigned* counters,
                                                            unsigned long long* out, int trap_after_ms, int wait) {
  extern __shared__ uint4 psm[];
  const PStages& ps = *pst;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const unsigned nw = gridDim.x * W, gw = blockIdx.x * W + warp;
  uint4* ring = psm + warp * D * 64;          // D slots of 1 KB
  uint4* xin = psm + W * D * 64;              // the stage's input (32 KB)
  float* pbuf = reinterpret_cast<float*>(xin + kPIn);  // cluster partials [2][4096] (CL > 0)
  float* qbuf = pbuf + 2 * 4096;                        // the block's reduced slice [4096] (CL > 0)
  __shared__ float red[W + 1];
  __shared__ float norm_s;
  // CTRL: warp W streams nothing; its lane 0 polls and arrives (a thread with copies in flight
  // would have its release wait for them), and it alone releases at cluster barriers.
  const bool ctrl = CTRL && warp == W;
  const int sig = CTRL ? W * 32 : 0;  // the thread that polls and arrives
  // Prime: the first D - 1 units of the warp's stream.
  Cursor is{-1, 0, 0};
  cursor_settle(is, ps, gw, nw);
  auto issue = [&](int slot) {
    if (is.s < ps.count) {
      const uint4* src = ps.s[is.s].w + std::size_t(is.u) * 64;
      cp_async16(ring + slot * 64 + lane, src + lane);
      cp_async16(ring + slot * 64 + 32 + lane, src + 32 + lane);
      ++is.u;
      cursor_settle(is, ps, gw, nw);
    }
    cp_commit();
  };
#pragma unroll
  for (int d = 0; d < D - 1; ++d)
    if (!ctrl) issue(d);
  int fill = D - 1, use = 0;
  float acc = 0.0f;
  constexpr int T = (W + CTRL) * 32;
  for (int s = 0; s < ps.count; ++s) {
    const PStage st = ps.s[s];
    const int scope = s == 0 ? 2 : (CL == 0 && st.scope == 1 ? 0 : int(st.scope));
    float ss = 0.0f;
    if (scope == 0) {
      if (wait && int(threadIdx.x) == sig) {
        const long long t0 = clock64();
        while (ld_acquire(counters + s - 1) < gridDim.x)
          if (trap_after_ms > 0 && clock64() - t0 > (long long)trap_after_ms * 2000000) {
            printf("persist: block %d stuck before stage %d\n", blockIdx.x, s);
            __trap();
          }
      }
      __syncthreads();
      // The stage's input: 16-byte words from the previous stage's output region (L2: the
      // previous stage wrote it on other SMs).
      const uint4* src = reinterpret_cast<const uint4*>(out + std::size_t((s + 1) & 1) * 4096);
      auto take = [&](unsigned i, const uint4& v) {
        xin[i] = v;
        if (st.norm) {
          const float a = float((long long)(((unsigned long long)v.y << 32) | v.x)) * 1e-30f;
          const float b = float((long long)(((unsigned long long)v.w << 32) | v.z)) * 1e-30f;
          ss = fmaf(a, a, fmaf(b, b, ss));
        }
      };
      if (FAST) {
        constexpr int PER = (kPIn + T - 1) / T;
        uint4 v[PER];
#pragma unroll
        for (int k = 0; k < PER; ++k) {
          const unsigned i = threadIdx.x + k * T;
          if (i < st.in_words) v[k] = __ldcg(src + i);
        }
#pragma unroll
        for (int k = 0; k < PER; ++k) {
          const unsigned i = threadIdx.x + k * T;
          if (i < st.in_words) take(i, v[k]);
        }
      } else {
        for (unsigned i = threadIdx.x; i < st.in_words; i += T) take(i, __ldcg(src + i));
      }
    } else if (scope == 1) {
      if constexpr (CL > 0) {
        // All-reduce of the cluster's partials (written at the previous stage's end): each block
        // sums its slice over the cluster, then gathers every block's sums.
        namespace cg = cooperative_groups;
        cg::cluster_group cl = cg::this_cluster();
        const unsigned rank = cl.block_rank();
        const float* mine = pbuf + (s & 1) * 4096;
        cluster_sync<CTRL>(ctrl);
        constexpr int SL = 4096 / CL;
        if constexpr (PUSH) {
          // The peers pushed their partials of this block's slice into its inbox (pbuf [CL][SL]):
          // sum them here and push the sums into every peer's qbuf; after the barrier every block
          // holds the whole vector. Only stores cross the cluster.
          const float4* in4 = reinterpret_cast<const float4*>(pbuf);
          for (int j = threadIdx.x; j < SL / 4; j += T) {
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int q = 0; q < CL; ++q) {
              const float4 a = in4[q * (SL / 4) + j];
              v.x += a.x; v.y += a.y; v.z += a.z; v.w += a.w;
            }
#pragma unroll
            for (int r = 0; r < CL; ++r) reinterpret_cast<float4*>(cl.map_shared_rank(qbuf, r) + rank * SL)[j] = v;
          }
          cluster_sync<CTRL>(ctrl);
          float4* x4 = reinterpret_cast<float4*>(xin);
          for (int i = threadIdx.x; i < 1024; i += T) x4[i] = reinterpret_cast<const float4*>(qbuf)[i];
        } else {
          // Loading form: each block reads its slice from every peer's partials, then every slice.
          for (int i = threadIdx.x; i < SL; i += T) {
            float t = 0.0f;
#pragma unroll
            for (int r = 0; r < CL; ++r) t += cl.map_shared_rank(mine, r)[rank * SL + i];
            qbuf[rank * SL + i] = t;
          }
          cluster_sync<CTRL>(ctrl);
          float* xf = reinterpret_cast<float*>(xin);
          for (int i = threadIdx.x; i < 4096; i += T) xf[i] = cl.map_shared_rank(qbuf, i / SL)[i];
        }
      }
    }
    if (st.norm) {
      for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
      if (lane == 0) red[warp] = ss;
      __syncthreads();
      if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int k = 0; k < W + CTRL; ++k) t += red[k];
        norm_s = rsqrtf(t * (1.0f / 4096) + 1e-6f);
      }
    }
    __syncthreads();
    const float nscale = st.norm ? norm_s : 1.0f;
    // The warp's units of this stage, from the ring, issuing the stream's next copies.
    unsigned a, b;
    warp_share(st, gw, nw, a, b);
    const float* xf = reinterpret_cast<const float*>(xin);
    if (ctrl) b = a;
    for (unsigned u = a; u < b; ++u) {
      issue(fill);
      fill = fill == D - 1 ? 0 : fill + 1;
      cp_wait<D - 1>();
      const uint4 w0 = ring[use * 64 + lane], w1 = ring[use * 64 + 32 + lane];
      use = use == D - 1 ? 0 : use + 1;
      const float x = xf[(u * 32 + lane) & 4095] * nscale;
      const unsigned wv[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
      float p[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) p[k] = 0.0f;
#pragma unroll
      for (int r = 0; r < WORK; ++r)
#pragma unroll
        for (int k = 0; k < 8; ++k) p[k] = fmaf(__uint_as_float((wv[k] >> r & 0x03ff03ffu) | 0x64006400u), x, p[k]);
      if (WORK == 0)
#pragma unroll
        for (int k = 0; k < 8; ++k) p[k] = float(wv[k] & 0xff) * x;
#pragma unroll
      for (int k = 0; k < 8; ++k) acc += p[k] * 1e-12f;
    }
    // The block's sums, as the next stage needs them.
    const int next = s + 1 < ps.count ? (CL == 0 && ps.s[s + 1].scope == 1 ? 0 : int(ps.s[s + 1].scope)) : 0;
    if (next == 2) continue;
    float r = acc;
    for (int o = 16; o > 0; o >>= 1) r += __shfl_xor_sync(0xffffffffu, r, o);
    if (lane == 0) red[warp] = r;
    __syncthreads();
    float t = 0.0f;
    for (int k = 0; k < W + CTRL; ++k) t += red[k];
    if constexpr (CL > 0) {
      // A partial vector of 4096 outputs (as a block holding whole columns of gate/up produces
      // for down), into this block's buffer for the cluster.
      namespace cg = cooperative_groups;
      cg::cluster_group cl = cg::this_cluster();
      const unsigned rank = cl.block_rank();
      constexpr int SL = 4096 / CL;
      float* mine = pbuf + ((s + 1) & 1) * 4096;
      if constexpr (PUSH) {
        // Each output's partial straight into its owner's inbox (rank i / SL, row of this block).
        for (int i4 = threadIdx.x; i4 < 1024; i4 += T) {
          const int i = i4 * 4, dest = i / SL;
          const float b0 = t + float(i) * 1e-9f;
          reinterpret_cast<float4*>(cl.map_shared_rank(pbuf, dest) + rank * SL)[(i % SL) / 4] =
              make_float4(b0, b0 + 1e-9f, b0 + 2e-9f, b0 + 3e-9f);
        }
      } else {
        for (int i = threadIdx.x; i < 4096; i += T) mine[i] = t + float(i) * 1e-9f;
      }
      if (next == 1) continue;  // the next stage's all-reduce starts with the cluster barrier
      cluster_sync<CTRL>(ctrl);
      for (int i = threadIdx.x; i < SL; i += T) {
        // This block's slice summed over the cluster: from its inbox (pushed) or the peers' buffers.
        float v = 0.0f;
#pragma unroll
        for (int q = 0; q < CL; ++q) v += PUSH ? pbuf[q * SL + i] : cl.map_shared_rank(mine, q)[rank * SL + i];
        atomicAdd(out + std::size_t(s & 1) * 4096 + rank * SL + i, (unsigned long long)(long long)(v * 1e6f));
      }
    } else {
      if (threadIdx.x < 64) {
        const unsigned col = (blockIdx.x * 64 + threadIdx.x) % 4096;
        atomicAdd(out + std::size_t(s & 1) * 4096 + col, (unsigned long long)(long long)(t * 1e6f));
      }
    }
    __syncthreads();
    if (int(threadIdx.x) == sig) {
      if (FAST) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(counters + s), "r"(1u) : "memory");
#endif
      } else {
        __threadfence();
        atomicAdd(counters + s, 1u);
      }
    }
  }
  cp_wait<0>();
}

// Does a release wait for the issuing thread's asynchronous copies? Every warp of a block copies
// `kb` KB into shared memory with cp.async; then warp `who`'s lane 0 times one release
// operation (0: none, 1: __threadfence, 2: red.release.gpu) in clock cycles.
__global__ void fence_probe_kernel(const uint4* __restrict__ w, int kb, int who, int op, unsigned* counter,
                                   long long* cycles) {
  extern __shared__ uint4 fsm[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int per_warp = kb * 64;  // 16-byte words a warp copies
  const uint4* src = w + (std::size_t(blockIdx.x) * (blockDim.x / 32) + warp) * per_warp;
  if (warp != who || who == 0)
    for (int i = lane; i < per_warp; i += 32) cp_async16(fsm + warp * per_warp + i, src + i);
  cp_commit();
  __syncwarp();
  if (warp == who && lane == 0) {
    const long long t0 = clock64();
    if (op == 1) __threadfence();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    if (op == 2) asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(counter), "r"(1u) : "memory");
#endif
    const long long t1 = clock64();
    cycles[blockIdx.x] = t1 - t0;
  }
  cp_wait<0>();
}

struct Variant {
  const char* name;
  bool pdl;
  int pre;  // 0 none, 1 registers (64 KB a block), 2 shared memory (smem_kb a block)
  bool ticket;
  int blocks_per_sm;
  int smem_kb = 0;
};

struct Model {
  const char* name;
  int layers, hidden, q_heads, kv_heads, head_dim, inter, vocab;
};

// A token's steps at 4.0 bpw (weights plus about 0.07 bpw of scales and tables, as EXL2 at 4.0):
// per layer norm, q/k/v, attention, o, norm, gate/up, down (0 bytes: no weights), then norm and head.
std::vector<std::size_t> token_steps(const Model& m) {
  auto bytes = [](std::size_t k, std::size_t n) { return k * n / 2 + k * n / 128 * 2; };
  const std::size_t qkv = bytes(m.hidden, std::size_t(m.q_heads + 2 * m.kv_heads) * m.head_dim);
  const std::size_t o = bytes(std::size_t(m.q_heads) * m.head_dim, m.hidden);
  const std::size_t gu = bytes(m.hidden, 2 * std::size_t(m.inter));
  const std::size_t down = bytes(m.inter, m.hidden);
  std::vector<std::size_t> s;
  for (int l = 0; l < m.layers; ++l) s.insert(s.end(), {0, qkv, 0, o, 0, gu, down});
  s.push_back(0);
  s.push_back(bytes(m.hidden, m.vocab));
  return s;
}

class Bench {
 public:
  explicit Bench(int rounds) : rounds_(rounds) {
    CK(cudaSetDevice(0));
    cudaDeviceProp p{};
    CK(cudaGetDeviceProperties(&p, 0));
    sms_ = p.multiProcessorCount;
    smem_optin_ = int(p.sharedMemPerBlockOptin);
    std::printf("device: %s, cc %d.%d, %d SMs\n", p.name, p.major, p.minor, sms_);
    CK(cudaStreamCreateWithFlags(&st_, cudaStreamNonBlocking));
    CK(cudaMalloc(&x_, 2 * kVec * sizeof(float)));
    CK(cudaMemset(x_, 0, 2 * kVec * sizeof(float)));
    CK(cudaMalloc(&partial_, 4096 * sizeof(float)));
    CK(cudaMalloc(&ticket_, sizeof(unsigned)));
    CK(cudaMemset(ticket_, 0, sizeof(unsigned)));
    CK(cudaEventCreate(&e0_));
    CK(cudaEventCreate(&e1_));
    CK(cudaFuncSetAttribute(step_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_optin_ - 1024));
  }
  ~Bench() {
    cudaFree(w_);
    cudaFree(x_);
    cudaFree(partial_);
    cudaFree(ticket_);
    cudaEventDestroy(e0_);
    cudaEventDestroy(e1_);
    cudaStreamDestroy(st_);
  }

  void reserve(std::size_t bytes) {
    if (bytes <= w_bytes_) return;
    cudaFree(w_);
    CK(cudaMalloc(&w_, bytes));
    CK(cudaMemset(w_, 0x5a, bytes));
    w_bytes_ = bytes;
  }

  // Steps laid out one after another in the weight buffer (no step's bytes in L2 from another's).
  std::vector<Step> layout(const std::vector<std::size_t>& bytes, const Variant& v, int empty_blocks) {
    std::size_t total = 0;
    for (std::size_t b : bytes) total += (b + 255) / 256 * 256;
    reserve(std::max<std::size_t>(total, 256));
    std::vector<Step> s;
    std::size_t off = 0;
    for (std::size_t b : bytes) {
      Step st;
      st.w = reinterpret_cast<const uint4*>(static_cast<const char*>(w_) + off);
      st.words = b / 16;
      st.blocks = b ? sms_ * v.blocks_per_sm : empty_blocks;
      st.ticket = b ? v.ticket : false;
      s.push_back(st);
      off += (b + 255) / 256 * 256;
    }
    return s;
  }

  // Median µs of one replay of what `enqueue` puts on the stream, captured as a graph.
  template <class F>
  double time_captured(F&& enqueue) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st_, cudaStreamCaptureModeThreadLocal));
    enqueue();
    CK(cudaStreamEndCapture(st_, &g));
    cudaGraphExec_t ge;
    CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<double> t;
    for (int r = 0; r < rounds_ + 2; ++r) {
      CK(cudaEventRecord(e0_, st_));
      CK(cudaGraphLaunch(ge, st_));
      CK(cudaEventRecord(e1_, st_));
      CK(cudaEventSynchronize(e1_));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0_, e1_));
      if (r >= 2) t.push_back(ms * 1e3);
    }
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

  // Median µs of one replay of the steps.
  double time_graph(const std::vector<Step>& steps, const Variant& v) {
    return time_captured([&] {
      for (std::size_t k = 0; k < steps.size(); ++k) launch(steps[k], v, k);
    });
  }

  // The persistent skeleton: one launch per token (counters cleared by a memset node first),
  // median µs of a replay. Stage units point into the weight buffer one after another.
  template <int W, int D, int WORK, int CL = 0, bool FAST = false, bool CTRL = false, bool PUSH = false>
  double time_persist(const std::vector<PStage>& stages_in, int wait = 1, int* grid_out = nullptr) {
    auto kern = persist_kernel<W, D, WORK, CL, FAST, CTRL, PUSH>;
    const std::size_t smem = std::size_t(W) * D * 1024 + kPIn * 16 + (CL > 0 ? 3 * 4096 * 4 : 0);
    if (smem > std::size_t(smem_optin_)) return -1.0;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    if (CL > 8) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t c{};
    c.blockDim = dim3((W + CTRL) * 32);
    c.dynamicSmemBytes = smem;
    c.stream = st_;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CL > 0 ? CL : 1;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    c.attrs = at;
    c.numAttrs = CL > 0 ? 1 : 0;
    int grid = sms_;
    constexpr int cs = CL > 0 ? CL : 1;
    if (CL > 0) {
      c.gridDim = dim3(unsigned(sms_ / cs * cs));
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kern, &c) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1.0;
      }
      grid = std::min(clusters, sms_ / cs) * cs;
      if (grid <= 0) return -1.0;
    } else {
      int per_sm = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, (W + CTRL) * 32, smem));
      if (per_sm < 1) return -1.0;
    }
    c.gridDim = dim3(unsigned(grid));
    if (grid_out) *grid_out = grid;
    std::size_t total = 0;
    for (const PStage& st : stages_in) total += std::size_t(st.units) * 1024;
    reserve(std::max<std::size_t>(total, 256));
    PStages h{};
    h.count = int(stages_in.size());
    std::size_t off = 0;
    for (int i = 0; i < h.count; ++i) {
      h.s[i] = stages_in[i];
      h.s[i].w = reinterpret_cast<const uint4*>(static_cast<const char*>(w_) + off);
      off += std::size_t(stages_in[i].units) * 1024;
    }
    PStages* d = nullptr;
    CK(cudaMalloc(&d, sizeof(PStages)));
    CK(cudaMemcpy(d, &h, sizeof(PStages), cudaMemcpyHostToDevice));
    unsigned* counters = nullptr;
    unsigned long long* out = nullptr;
    CK(cudaMalloc(&counters, kPMaxStages * sizeof(unsigned)));
    CK(cudaMalloc(&out, 2 * 4096 * sizeof(unsigned long long)));
    CK(cudaMemset(out, 0, 2 * 4096 * sizeof(unsigned long long)));
    const double us = time_captured([&] {
      CK(cudaMemsetAsync(counters, 0, kPMaxStages * sizeof(unsigned), st_));
      CK(cudaLaunchKernelEx(&c, kern, static_cast<const PStages*>(d), counters, out, 2000, wait));
    });
    CK(cudaFree(d));
    CK(cudaFree(counters));
    CK(cudaFree(out));
    return us;
  }

  // Median over the blocks of fence_probe_kernel's cycles (one block per SM, 8 warps).
  long long fence_probe(int kb, int who, int op) {
    const int warps = 8;
    const std::size_t smem = std::size_t(warps) * kb * 1024;
    CK(cudaFuncSetAttribute(fence_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    reserve(std::size_t(sms_) * smem);
    unsigned* counter = nullptr;
    long long* cyc = nullptr;
    CK(cudaMalloc(&counter, 4));
    CK(cudaMalloc(&cyc, sizeof(long long) * sms_));
    std::vector<long long> all;
    for (int r = 0; r < 5; ++r) {
      fence_probe_kernel<<<sms_, warps * 32, smem, st_>>>(static_cast<const uint4*>(w_), kb, who, op, counter, cyc);
      CK(cudaGetLastError());
      std::vector<long long> h(sms_);
      CK(cudaMemcpyAsync(h.data(), cyc, sizeof(long long) * sms_, cudaMemcpyDeviceToHost, st_));
      CK(cudaStreamSynchronize(st_));
      all.insert(all.end(), h.begin(), h.end());
    }
    CK(cudaFree(counter));
    CK(cudaFree(cyc));
    std::sort(all.begin(), all.end());
    return all[all.size() / 2];
  }

  int sms() const { return sms_; }
  // Whether the device gives a block the variant's shared memory (consumer cards: about 100 KB).
  bool fits(const Variant& v) const { return v.pre != 2 || v.smem_kb * 1024 <= smem_optin_ - 1024; }

 private:
  void launch(const Step& s, const Variant& v, std::size_t k) {
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(unsigned(s.blocks));
    c.blockDim = dim3(kThreads);
    c.stream = st_;
    const unsigned pre_words = v.pre == 2 && s.words ? unsigned(v.smem_kb) * 1024 / 16 : 0;  // empty steps: none
    c.dynamicSmemBytes = pre_words * 16;
    cudaLaunchAttribute a[1];
    a[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a[0].val.programmaticStreamSerializationAllowed = v.pdl ? 1 : 0;
    c.attrs = a;
    c.numAttrs = 1;
    const float* x = x_ + (k & 1) * kVec;
    float* y = x_ + ((k + 1) & 1) * kVec;
    unsigned* t = s.ticket ? ticket_ : nullptr;
    if (v.pre == 1 && s.words)
      CK(cudaLaunchKernelEx(&c, step_kernel<1>, s.w, s.words, x, y, partial_, t, 0u));
    else if (v.pre == 2 && s.words)
      CK(cudaLaunchKernelEx(&c, step_kernel<2>, s.w, s.words, x, y, partial_, t, pre_words));
    else
      CK(cudaLaunchKernelEx(&c, step_kernel<0>, s.w, s.words, x, y, partial_, t, 0u));
  }

  int rounds_;
  int sms_ = 0;
  int smem_optin_ = 0;
  cudaStream_t st_{};
  void* w_ = nullptr;
  std::size_t w_bytes_ = 0;
  float* x_ = nullptr;
  float* partial_ = nullptr;
  unsigned* ticket_ = nullptr;
  cudaEvent_t e0_{}, e1_{};
};

}  // namespace

const Variant k_variants[] = {
    {"plain", false, 0, false, 1},
    {"pdl", true, 0, false, 1},
    {"pdl, 64 KB regs before wait", true, 1, false, 1},
    {"pdl, regs before wait, ticket", true, 1, true, 1},
    {"pdl, regs before wait, 2/SM", true, 1, false, 2},
    {"pdl, 96 KB smem before wait", true, 2, false, 1, 96},
    {"pdl, 96 KB smem, ticket", true, 2, true, 1, 96},
    {"pdl, 48 KB smem, 2/SM", true, 2, false, 2, 48},
    {"pdl, 192 KB smem", true, 2, false, 1, 192},
};

// A token's stages in the persistent form at 4.0 bpw: per layer q/k/v (RMSNorm folded into its
// input read), attention (no weights at context 0; reads q/k/v), o, gate/up (norm folded), down;
// then the head (final norm folded). Input reads: norm stages 32 KB (4096 int64), attention 16 KB,
// o 8 KB (fp16), down 16 KB (a block's share of SiLU(gate) * up).
std::vector<PStage> persist_steps(const Model& m, int form = 0) {
  auto units = [](std::size_t k, std::size_t n) { return unsigned((k * n / 2 + k * n / 128 * 2 + 1023) / 1024); };
  const unsigned qkv = units(m.hidden, std::size_t(m.q_heads + 2 * m.kv_heads) * m.head_dim);
  const unsigned o = units(std::size_t(m.q_heads) * m.head_dim, m.hidden);
  const unsigned gu = units(m.hidden, 2 * std::size_t(m.inter));
  const unsigned down = units(m.inter, m.hidden);
  std::vector<PStage> s;
  for (int l = 0; l < m.layers; ++l) {
    // form 0: five grid boundaries a layer; 1: down fused to gate/up (scope 2); 2: the
    // cluster-fused layer (attention and o behind cluster all-reduces, down fused).
    s.push_back({nullptr, qkv, 2048, 1, 0});
    s.push_back({nullptr, 0, 1024, 0, form == 2 ? 1u : 0u});
    s.push_back({nullptr, o, 512, 0, form == 2 ? 1u : 0u});
    s.push_back({nullptr, gu, 2048, 1, 0});
    s.push_back({nullptr, down, 1024, 0, form >= 1 ? 2u : 0u});
  }
  s.push_back({nullptr, units(m.hidden, m.vocab), 2048, 1, 0});
  return s;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
  const bool only_persist = argc > 2 && std::string(argv[2]) == "persist";
  Bench b(rounds);
  const Variant base{"pdl, copies before wait", true, 1, false, 1};

  // 1. One kernel over 4 GB: the read rate a dependent chain is measured against.
  double rate_gbs = 0;
  {
    const std::size_t bytes = 4ull << 30;
    for (int bps : {1, 2, 4}) {
      Variant v = base;
      v.blocks_per_sm = bps;
      const auto steps = b.layout({bytes}, v, 1);
      const double us = b.time_graph(steps, v);
      const double gbs = double(bytes) / us * 1e-3;
      rate_gbs = std::max(rate_gbs, gbs);
      std::printf("one kernel, 4 GiB, %d block(s) of %d threads per SM: %.1f us, %.0f GB/s\n", bps, kThreads, us, gbs);
    }
  }

  const Model models[] = {{"tinyllama-1.1b", 22, 2048, 32, 4, 64, 5632, 32000},
                          {"llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256}};
  if (!only_persist) {
  // 2. Empty steps (activation read and write only): the fixed cost of a launch in the chain.
  std::printf("\n200 steps without weights (16 KB read after the wait, one slice written):\n");
  for (bool pdl : {false, true})
    for (int blocks : {1, b.sms(), 2 * b.sms()}) {
      Variant v = base;
      v.pdl = pdl;
      const auto steps = b.layout(std::vector<std::size_t>(200, 0), v, blocks);
      const double us = b.time_graph(steps, v);
      std::printf("  %-4s %4d blocks: %.2f us per launch\n", pdl ? "pdl" : "plain", blocks, us / 200);
    }

  // 3. Uniform chains: 200 steps of one size (the 8B's o projection, its gate/up).
  std::printf("\n200 equal steps, effective rate (share of the one-kernel rate %.0f GB/s):\n", rate_gbs);
  for (std::size_t mb : {2ull, 8ull, 30ull}) {
    for (const Variant& v : k_variants) {
      if (!b.fits(v)) continue;
      const std::size_t bytes = mb << 20;
      const auto steps = b.layout(std::vector<std::size_t>(200, bytes), v, 1);
      const double us = b.time_graph(steps, v);
      const double gbs = double(bytes) * 200 / us * 1e-3;
      std::printf("  %3zu MB  %-32s %7.2f us a step, %5.0f GB/s, %4.1f %%\n", mb, v.name, us / 200, gbs,
                  100 * gbs / rate_gbs);
    }
  }

  // 4. A decode token's skeleton: the real step list, the bytes of 4.0 bpw.
  for (const Model& m : models) {
    const std::vector<std::size_t> bytes = token_steps(m);
    const std::size_t total = std::accumulate(bytes.begin(), bytes.end(), std::size_t(0));
    std::printf("\n%s skeleton: %zu launches, %.1f MB a token, bound at the one-kernel rate %.0f tok/s\n", m.name,
                bytes.size(), total / 1e6, rate_gbs * 1e9 / double(total));
    for (const Variant& v : k_variants) {
      if (!b.fits(v)) continue;
      const auto steps = b.layout(bytes, v, 64);
      const double us = b.time_graph(steps, v);
      const double gbs = double(total) / us * 1e-3;
      std::printf("  %-32s %8.1f us a token, %7.1f tok/s, %5.0f GB/s, %4.1f %% of the one-kernel rate\n", v.name, us,
                  1e6 / us, gbs, 100 * gbs / rate_gbs);
    }
  }
  }

  // 5. The persistent form's skeleton (PERSISTENT_DECODE.md): one launch per token.
  std::printf("\npersistent skeleton (one block per SM, every warp a consumer with a cp.async ring):\n");
  std::printf("  a release's cycles with cp.async copies in flight (one block of 8 warps per SM, median):\n");
  for (int op : {1, 2})
    for (int kb : {1, 16})
      std::printf("    %-16s %2d KB a warp in flight: by a copying thread %lld, by an idle warp %lld, no copies %lld\n",
                  op == 1 ? "__threadfence" : "red.release.gpu", kb, b.fence_probe(kb, 0, op), b.fence_probe(kb, 7, op),
                  b.fence_probe(0, 7, op));
  {
    auto per = [&](const char* name, double us) {
      if (us < 0) std::printf("  %-58s does not fit\n", name);
      else std::printf("  %-58s %.2f us a boundary\n", name, us / 200);
    };
    const std::vector<PStage> norm(200, PStage{nullptr, 0, 2048, 1, 0});
    const std::vector<PStage> light(200, PStage{nullptr, 0, 512, 0, 0});
    const std::vector<PStage> clus(200, PStage{nullptr, 0, 0, 0, 1});
    per("grid boundary, 32 KB norm input, fence + atomic, loads in turn", b.time_persist<16, 8, 7>(norm));
    per("grid boundary, 32 KB norm input, red.release, loads together", b.time_persist<16, 8, 7, 0, true>(norm));
    per("grid boundary, 8 KB input, fence + atomic", b.time_persist<16, 8, 7>(light));
    per("grid boundary, 8 KB input, red.release", b.time_persist<16, 8, 7, 0, true>(light));
    per("cluster all-reduce of 4096 floats, clusters of 8", b.time_persist<16, 8, 7, 8, true>(clus));
    per("cluster all-reduce of 4096 floats, clusters of 16", b.time_persist<16, 8, 7, 16, true>(clus));
    per("grid boundary, 32 KB norm input, red.release, control warp", b.time_persist<16, 8, 7, 0, true, true>(norm));
    per("cluster all-reduce, clusters of 8, control warp", b.time_persist<16, 8, 7, 8, true, true>(clus));
    per("cluster all-reduce, clusters of 16, control warp", b.time_persist<16, 8, 7, 16, true, true>(clus));
    per("cluster all-reduce pushed (stores only), clusters of 8, ctrl", b.time_persist<16, 8, 7, 8, true, true, true>(clus));
    per("cluster all-reduce pushed, clusters of 16, ctrl", b.time_persist<16, 8, 7, 16, true, true, true>(clus));
    per("cluster all-reduce pushed, clusters of 4, ctrl", b.time_persist<16, 8, 7, 4, true, true, true>(clus));
  }
  for (const Model& m : models) {
    const std::vector<PStage> st = persist_steps(m, 0), fused = persist_steps(m, 1), clf = persist_steps(m, 2);
    std::size_t total = 0;
    for (const PStage& x : st) total += std::size_t(x.units) * 1024;
    std::printf("%s: %zu stages, %.1f MB, bound at the one-kernel rate %.0f tok/s\n", m.name, st.size(), total / 1e6,
                rate_gbs * 1e9 / double(total));
    int grid = 0;
    auto row = [&](const char* name, double us) {
      if (us < 0) {
        std::printf("  %-52s does not fit\n", name);
        return;
      }
      const double gbs = double(total) / us * 1e-3;
      std::printf("  %-52s %8.1f us a token, %7.1f tok/s, %4.1f %% of the one-kernel rate (%d blocks)\n", name, us,
                  1e6 / us, 100 * gbs / rate_gbs, grid);
    };
    row("5 grid boundaries a layer, 16 warps x 8 KB, work 7", b.time_persist<16, 8, 7>(st, 1, &grid));
    row("... red.release, input loads together", b.time_persist<16, 8, 7, 0, true>(st, 1, &grid));
    row("4 grid boundaries (down fused to gate/up)", b.time_persist<16, 8, 7, 0, true>(fused, 1, &grid));
    row("cluster-fused layer, clusters of 8", b.time_persist<16, 8, 7, 8, true>(clf, 1, &grid));
    row("cluster-fused layer, clusters of 16", b.time_persist<16, 8, 7, 16, true>(clf, 1, &grid));
    row("cluster-fused layer, clusters of 16, no work", b.time_persist<16, 8, 0, 16, true>(clf, 1, &grid));
    row("cluster-fused layer, clusters of 16, 32 warps x 4 KB", b.time_persist<32, 4, 7, 16, true>(clf, 1, &grid));
    row("cluster-fused layer, clusters of 16, no grid waits", b.time_persist<16, 8, 7, 16, true>(clf, 0, &grid));
    row("5 grid boundaries, control warp", b.time_persist<16, 8, 7, 0, true, true>(st, 1, &grid));
    row("5 grid boundaries, control warp, no work", b.time_persist<16, 8, 0, 0, true, true>(st, 1, &grid));
    row("4 grid boundaries (down fused), control warp", b.time_persist<16, 8, 7, 0, true, true>(fused, 1, &grid));
    row("cluster-fused, clusters of 8, control warp", b.time_persist<16, 8, 7, 8, true, true>(clf, 1, &grid));
    row("cluster-fused, clusters of 16, control warp", b.time_persist<16, 8, 7, 16, true, true>(clf, 1, &grid));
    row("cluster-fused, all-reduce pushed, clusters of 8", b.time_persist<16, 8, 7, 8, true, true, true>(clf, 1, &grid));
    row("cluster-fused, all-reduce pushed, clusters of 16", b.time_persist<16, 8, 7, 16, true, true, true>(clf, 1, &grid));
    row("cluster-fused, all-reduce pushed, clusters of 4", b.time_persist<16, 8, 7, 4, true, true, true>(clf, 1, &grid));
    row("cluster-fused, pushed, clusters of 8, no work", b.time_persist<16, 8, 0, 8, true, true, true>(clf, 1, &grid));
    row("5 grid boundaries, control warp, no waits", b.time_persist<16, 8, 7, 0, true, true>(st, 0, &grid));
    const std::vector<PStage> one{PStage{nullptr, unsigned(total / 1024), 0, 0, 0}};
    row("one stage (streaming alone), 16 warps x 8 KB, work 7", b.time_persist<16, 8, 7>(one, 1, &grid));
  }
  std::printf("launch floor done\n");
  return 0;
}

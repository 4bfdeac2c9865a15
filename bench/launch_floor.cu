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
// Standalone (no module, no engine): exl_launch_floor [ROUNDS]. Every CUDA call checked.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    for (std::size_t j = threadIdx.x; j < in_smem; j += kThreads) {
      const unsigned sa = unsigned(__cvta_generic_to_shared(pre_smem + j));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(w + begin + j) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
#else  // Turing: plain loads into shared memory (no asynchronous copy)
    for (std::size_t j = threadIdx.x; j < in_smem; j += kThreads) pre_smem[j] = ld_stream(w + begin + j);
#endif
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
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
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

  // Median µs of one replay of the steps captured as a graph.
  double time_graph(const std::vector<Step>& steps, const Variant& v) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st_, cudaStreamCaptureModeThreadLocal));
    for (std::size_t k = 0; k < steps.size(); ++k) launch(steps[k], v, k);
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

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
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
  const Model models[] = {{"tinyllama-1.1b", 22, 2048, 32, 4, 64, 5632, 32000},
                          {"llama3-8b", 32, 4096, 32, 8, 128, 14336, 128256}};
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
  std::printf("launch floor done\n");
  return 0;
}

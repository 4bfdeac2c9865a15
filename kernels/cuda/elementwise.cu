// Element-wise kernels of the forward pass: SiLU-gated product, embedding gather (which, as
// the step's first kernel, also fills the RoPE table and clears the first layer's
// accumulators), output initialisation (zero / bias / residual + bias) and device-side random
// fills for synthetic benchmark models.
// Memory layout: flat arrays; embedding table fp16 [vocab, dim], out fp32 [n, dim].
// Launch shape: grid-stride loops, 256 threads per block (SiLU: four elements a thread where the
// arrays allow 16-byte loads).
// Precision: silu(g) * u in fp32, rounded once to fp16; the rest are exact copies/conversions.
#include <algorithm>

#include "cuda_check.h"
#include "exl2_common.cuh"
#include "kernels.h"
#include "launch.cuh"
#include "rope_common.cuh"

namespace exl::cuda {
namespace {

struct GemvInits {
  GemvInit r[k_gemv_max_inits];
  int count = 0;
};

int blocks_for(std::int64_t n) { return int(std::min<std::int64_t>((n + 255) / 256, 65535)); }

__global__ void silu_mul_kernel(AccIn g, AccIn u, std::int64_t n, __half* __restrict__ out) {
  pdl_trigger();
  pdl_wait();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    out[i] = __float2half_rn(silu_times(acc_at(g, i), acc_at(u, i)));
  }
}

// Four elements a thread per iteration (16-byte loads, one 8-byte store): n4 groups of four.
__global__ void silu_mul4_kernel(AccIn g, AccIn u, std::int64_t n4, __half* __restrict__ out) {
  pdl_trigger();
  pdl_wait();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n4; i += std::int64_t(gridDim.x) * blockDim.x) {
    const float4 a = load4(g, 0, std::size_t(i)), b = load4(u, 0, std::size_t(i));
    store4(out, std::size_t(i), silu_times(a.x, b.x), silu_times(a.y, b.y), silu_times(a.z, b.z), silu_times(a.w, b.w));
  }
}

__global__ void embedding_kernel(const __half* __restrict__ table, int dim, const std::int32_t* __restrict__ ids,
                                 int n, float* __restrict__ out, long long* __restrict__ outq, RopeParams rope,
                                 GemvInits inits) {
  pdl_trigger();
  pdl_wait();
  // No table: a later layer segment, `out` holds its input (converted to outq when that is set).
  if (int(blockIdx.x) < n && (table || outq)) {
    const __half* row = table ? table + std::size_t(ids[blockIdx.x]) * dim : nullptr;
    float* o = out + std::size_t(blockIdx.x) * dim;
    long long* oq = outq ? outq + std::size_t(blockIdx.x) * dim : nullptr;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
      const float v = row ? __half2float(row[i]) : o[i];
      if (oq) oq[i] = to_exact(v);
      else o[i] = v;
    }
  }
  const int stride = int(gridDim.x * blockDim.x);
  const int tid = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (rope.cs) {
    const int half = rope.d / 2;
    for (int j = tid; j < n * half; j += stride) rope.cs[j] = rope_cos_sin(*rope.past + j / half, rope, j % half);
  }
  write_inits(inits.r, inits.count, tid, stride);
}

// y += bias for an exact accumulator (rows [rows, ldy]).
__global__ void bias_exact_kernel(long long* y, int rows, int n, int ldy, const float* bias) {
  pdl_trigger();
  pdl_wait();
  const std::int64_t total = std::int64_t(rows) * n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total; i += std::int64_t(gridDim.x) * blockDim.x) {
    const int r = int(i / n), c = int(i - std::int64_t(r) * n);
    y[std::size_t(r) * ldy + c] += to_exact(bias[c]);
  }
}

__global__ void exact_to_float_kernel(const long long* __restrict__ q, std::int64_t n, float* __restrict__ out) {
  pdl_trigger();
  pdl_wait();
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = from_exact(q[i]);
}

__global__ void prepare_kernel(float* y, int rows, int n, int ldy, const float* bias, bool accumulate) {
  pdl_trigger();
  pdl_wait();
  const std::int64_t total = std::int64_t(rows) * n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total; i += std::int64_t(gridDim.x) * blockDim.x) {
    const int r = int(i / n), c = int(i - std::int64_t(r) * n);
    float& dst = y[std::size_t(r) * ldy + c];
    const float b = bias ? bias[c] : 0.0f;
    dst = accumulate ? dst + b : b;
  }
}

__device__ __forceinline__ std::uint32_t hash32(std::uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return std::uint32_t(x);
}

__global__ void fill_u32_kernel(std::uint32_t* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = hash32(seed * 0x9e3779b97f4a7c15ull + i);
}

__global__ void fill_half_kernel(__half* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half_rn(lo + (hi - lo) * float(hash32(seed * 0x9e3779b97f4a7c15ull + i) >> 8) * (1.0f / 16777216.0f));
}

}  // namespace

void silu_mul(const float* gate, const float* up, std::int64_t n, __half* out, cudaStream_t s) {
  silu_mul(AccIn{gate}, AccIn{up}, n, out, s);
}

void silu_mul(AccIn gate, AccIn up, std::int64_t n, __half* out, cudaStream_t s) {
  if (n <= 0) return;
  if (n % 4 == 0 && aligned_to(out, 8) && load4_ok(gate) && load4_ok(up))
    launch(silu_mul4_kernel, dim3(blocks_for(n / 4)), dim3(256), 0, s, gate, up, n / 4, out);
  else
    launch(silu_mul_kernel, dim3(blocks_for(n)), dim3(256), 0, s, gate, up, n, out);
}

void embedding_step(const __half* table, int dim, const std::int32_t* ids, int n, float* out, const RopeParams& rope,
                    const GemvInit* inits, int ninits, cudaStream_t s, long long* outq) {
  if (n <= 0) return;
  if (ninits > k_gemv_max_inits) throw_status(EXL_CUDA_ERR_INVALID, "embedding: at most 6 init regions");
  GemvInits in;
  in.count = ninits;
  for (int i = 0; i < ninits; ++i) in.r[i] = inits[i];
  // The first kernel of a step follows host copies: a plain launch.
  launch_ex(false, embedding_kernel, dim3(std::max(n, 32)), dim3(256), 0, s, table, dim, ids, n, out, outq, rope, in);
}

void embedding(const __half* table, int dim, const std::int32_t* ids, int n, float* out, cudaStream_t s) {
  embedding_step(table, dim, ids, n, out, RopeParams{}, nullptr, 0, s);
}

void add_bias_exact(long long* y, int rows, int n, int ldy, const float* bias, cudaStream_t s) {
  if (rows <= 0 || !bias) return;
  launch(bias_exact_kernel, dim3(blocks_for(std::int64_t(rows) * n)), dim3(256), 0, s, y, rows, n, ldy, bias);
}

void exact_to_float(const long long* q, std::int64_t n, float* out, cudaStream_t s) {
  if (n <= 0) return;
  launch(exact_to_float_kernel, dim3(blocks_for(n)), dim3(256), 0, s, q, n, out);
}

void prepare_output(float* y, int rows, int n, int ldy, const float* bias, bool accumulate, cudaStream_t s) {
  if (rows <= 0 || (accumulate && !bias)) return;
  launch(prepare_kernel, dim3(blocks_for(std::int64_t(rows) * n)), dim3(256), 0, s, y, rows, n, ldy, bias, accumulate);
}

void fill_random_u32(std::uint32_t* p, std::size_t n, std::uint64_t seed, cudaStream_t s) {
  if (!n) return;
  launch_ex(false, fill_u32_kernel, dim3(blocks_for(std::int64_t(n))), dim3(256), 0, s, p, n, seed);
}

void fill_random_half(__half* p, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t s) {
  if (!n) return;
  launch_ex(false, fill_half_kernel, dim3(blocks_for(std::int64_t(n))), dim3(256), 0, s, p, n, seed, lo, hi);
}

}  // namespace exl::cuda

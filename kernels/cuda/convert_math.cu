// The converter's per-block math on the device (convert_math.h). Layout conventions: activations
// and weights row-major as in the engine ([tokens, features], weights [out, in]); cuBLAS sees
// them column-major, so y = x W^T is gemm(op T, op N) with the weight as the first operand. The
// Hessian steps work on symmetric matrices and read and write only the lower triangle of the
// column-major view; the column-major lower factor of the inverse's Cholesky, read row-major, is
// exactly the upper U that GPTQ needs.
#include "convert_math.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "cuda_check.h"
#include "kernels.h"
#include "launch.cuh"

namespace exl::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxGroupRows = 128;
constexpr int kSweepColumns = 64;
constexpr int kCholBlock = 64;
constexpr int kScaleSteps = 97;

int grid_for(std::int64_t n, int threads = kThreads) {
  return int(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 65535));
}

__device__ __forceinline__ float round_half(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ float pow35(float x) { return x * x * x * sqrtf(x); }

// Block-wide reductions (blockDim.x a multiple of 32, at most 1024).
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
  EXL_SHARED_ARRAY(T, part, [32]);
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = part[0];
  for (int w = 1; w < warps; ++w) v = op(v, part[w]);
  return v;
}
struct Sum {
  template <class T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// ---- the FP block ----

__global__ void rms_norm_f32_kernel(const float* __restrict__ x, int dim, const float* __restrict__ w, float eps,
                                    float* __restrict__ y) {
  const float* row = x + std::size_t(blockIdx.x) * dim;
  float* out = y + std::size_t(blockIdx.x) * dim;
  double ss = 0.0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += double(row[i]) * double(row[i]);
  ss = block_reduce(ss, Sum{});
  const float r = float(1.0 / ::sqrt(ss / dim + double(eps)));
  for (int i = threadIdx.x; i < dim; i += blockDim.x) out[i] = row[i] * r * w[i];
}

__global__ void bias_add_kernel(float* __restrict__ y, std::int64_t count, int n, const float* __restrict__ b) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] += b[i % n];
}

__global__ void silu_mul_f32_kernel(float* __restrict__ g, const float* __restrict__ u, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const float v = g[i];
    g[i] = v / (1.0f + expf(-v)) * u[i];
  }
}

// Rows of T key scores (already scaled); row b is query b % T: keys past it are masked.
__global__ void causal_softmax_kernel(float* __restrict__ s, int T) {
  float* row = s + std::size_t(blockIdx.x) * T;
  const int q = int(blockIdx.x % unsigned(T));
  float m = -INFINITY;
  for (int j = threadIdx.x; j <= q; j += blockDim.x) m = fmaxf(m, row[j]);
  m = block_reduce(m, Max{});
  float sum = 0.0f;
  for (int j = threadIdx.x; j <= q; j += blockDim.x) sum += expf(row[j] - m);
  sum = block_reduce(sum, Sum{});
  const float inv = 1.0f / sum;
  for (int j = threadIdx.x; j < T; j += blockDim.x) row[j] = j <= q ? expf(row[j] - m) * inv : 0.0f;
}

// ---- Hessians ----

__global__ void add_f64_kernel(double* __restrict__ h, const float* __restrict__ p, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    h[i] += double(p[i]);
}

__global__ void scale_f64_kernel(double* __restrict__ h, std::int64_t count, double s) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    h[i] *= s;
}

__global__ void diag_kernel(const double* __restrict__ h, int k, double* __restrict__ d) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x)
    d[i] = h[std::size_t(i) * k + i];
}

__global__ void permute_sym_kernel(const double* __restrict__ h, const int* __restrict__ perm, int k,
                                   double* __restrict__ out) {
  const std::int64_t count = std::int64_t(k) * k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int r = int(i / k), c = int(i % k);
    out[i] = h[std::size_t(perm[r]) * k + perm[c]];
  }
}

__global__ void add_diag_kernel(double* __restrict__ a, int k, double v) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x)
    a[std::size_t(i) * k + i] += v;
}

// Column-major: element (r, c) at a[c * k + r]; clears r < c (the strict upper triangle).
__global__ void zero_upper_kernel(double* __restrict__ a, int k) {
  const std::int64_t count = std::int64_t(k) * k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    if (i % k < i / k) a[i] = 0.0;
}

__global__ void identity_kernel(double* __restrict__ a, int k) {
  const std::int64_t count = std::int64_t(k) * k;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    a[i] = (i % k == i / k) ? 1.0 : 0.0;
}

__global__ void to_f32_kernel(const double* __restrict__ a, std::int64_t count, float* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = float(a[i]);
}

// Unblocked Cholesky (lower, column-major, leading dimension lda) of one nb x nb diagonal block
// in shared memory; sets *fail when a pivot is not positive and finite.
__global__ void chol_diag_kernel(double* __restrict__ a, int lda, int nb, int* __restrict__ fail) {
  EXL_SHARED_ARRAY(double, s, [kCholBlock * kCholBlock]);
  for (int i = threadIdx.x; i < nb * nb; i += blockDim.x) {
    const int r = i % nb, c = i / nb;
    s[c * kCholBlock + r] = r >= c ? a[std::size_t(c) * lda + r] : 0.0;
  }
  __syncthreads();
  for (int j = 0; j < nb; ++j) {
    if (threadIdx.x == 0) {
      double d = s[j * kCholBlock + j];
      if (!(d > 0.0) || !isfinite(d)) {
        *fail = 1;
        d = 1.0;
      }
      s[j * kCholBlock + j] = sqrt(d);
    }
    __syncthreads();
    const double l = s[j * kCholBlock + j];
    for (int r = j + 1 + threadIdx.x; r < nb; r += blockDim.x) s[j * kCholBlock + r] /= l;
    __syncthreads();
    const int m = nb - j - 1;  // trailing block m x m, lower part
    for (int i = threadIdx.x; i < m * m; i += blockDim.x) {
      const int r = j + 1 + i % m, c = j + 1 + i / m;
      if (r >= c) s[c * kCholBlock + r] -= s[j * kCholBlock + r] * s[j * kCholBlock + c];
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < nb * nb; i += blockDim.x) {
    const int r = i % nb, c = i / nb;
    if (r >= c) a[std::size_t(c) * lda + r] = s[c * kCholBlock + r];
  }
}

// ---- GPTQ ----

// W [k, np] in stored row order from w [n, k] (HF layout); padding columns are zero.
__global__ void gptq_load_kernel(const float* __restrict__ w, int n, int k, int np, const int* __restrict__ perm,
                                 float* __restrict__ W) {
  const std::int64_t count = std::int64_t(k) * np;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int j = int(i / np), c = int(i % np);
    W[i] = c < n ? w[std::size_t(c) * k + perm[j]] : 0.0f;
  }
}

// Per column: base = (max |W| over the group's rows + 1e-12) / (maxq / 2); per block: its max.
__global__ void group_max_kernel(const float* __restrict__ W, int np, int a, int e, int maxq,
                                 float* __restrict__ base, float* __restrict__ block_max) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  float b = 0.0f;
  if (c < np) {
    float xmax = 0.0f;
    for (int j = a; j < e; ++j) xmax = fmaxf(xmax, fabsf(W[std::size_t(j) * np + c]));
    b = (xmax + 1e-12f) / (float(maxq) / 2.0f);
    base[c] = b;
  }
  b = block_reduce(b, Max{});
  if (threadIdx.x == 0) block_max[blockIdx.x] = b;
}

__device__ float max_of(const float* __restrict__ v, int n) {
  float m = 0.0f;
  for (int i = 0; i < n; ++i) m = fmaxf(m, v[i]);
  return m;
}

__device__ __forceinline__ int scale_code(float base, float M) {
  return min(max(int(rintf(16.0f * sqrtf(base / M))), 1), 16);
}

// grid (column blocks, 97 multipliers): the error norm sum |q s - w|^3.5 of one multiplier over
// the block's columns and the group's rows, one partial per (multiplier, column block).
__global__ void group_search_kernel(const float* __restrict__ W, int np, int a, int e, int maxq, int z,
                                    const float* __restrict__ base, const float* __restrict__ block_max, int nbm,
                                    double* __restrict__ partial) {
  EXL_BLOCK_SHARED(float, M_s);
  if (threadIdx.x == 0) M_s = max_of(block_max, nbm);
  __syncthreads();
  const float M = M_s;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const float p = 0.70f + 0.50f * float(blockIdx.y) / 96.0f;
  double acc = 0.0;
  if (c < np) {
    const int code = scale_code(base[c], M);
    const float s = float(code * code) / 256.0f * M * p;
    float racc = 0.0f;
    for (int j = a; j < e; ++j) {
      const float w = W[std::size_t(j) * np + c];
      const float qv = fminf(fmaxf(rintf(w / s), float(-z)), float(maxq - z));
      racc += pow35(fabsf(qv * s - w));
    }
    acc = racc;
  }
  acc = block_reduce(acc, Sum{});
  if (threadIdx.x == 0) partial[std::size_t(blockIdx.y) * gridDim.x + blockIdx.x] = acc;
}

// One block: the best multiplier (lowest error, first on ties), the group's fp16 scale_max, and
// every column's code and exact fp16 scale.
__global__ void group_scale_kernel(const double* __restrict__ partial, int nsb, const float* __restrict__ base,
                                   const float* __restrict__ block_max, int nbm, int np, int g,
                                   float* __restrict__ scale, std::uint8_t* __restrict__ codes,
                                   __half* __restrict__ scale_max) {
  EXL_SHARED_ARRAY(double, perr, [kScaleSteps]);
  EXL_BLOCK_SHARED(float, M_s);
  EXL_BLOCK_SHARED(float, m_s);
  for (int i = threadIdx.x; i < kScaleSteps; i += blockDim.x) {
    double s = 0.0;
    for (int b = 0; b < nsb; ++b) s += partial[std::size_t(i) * nsb + b];
    perr[i] = s;
  }
  if (threadIdx.x == 0) M_s = max_of(block_max, nbm);
  __syncthreads();
  if (threadIdx.x == 0) {
    int best = 0;
    for (int i = 1; i < kScaleSteps; ++i)
      if (perr[i] < perr[best]) best = i;
    const float pbest = 0.70f + 0.50f * float(best) / 96.0f;
    const __half smax = __float2half_rn(M_s * pbest);
    scale_max[g] = smax;
    m_s = round_half(__half2float(smax) * (1.0f / 256.0f));
  }
  __syncthreads();
  const float M = M_s, m = m_s;
  for (int c = threadIdx.x; c < np; c += blockDim.x) {
    const int code = scale_code(base[c], M);
    scale[c] = round_half(float(code * code) * m);
    codes[std::size_t(g) * np + c] = std::uint8_t(code - 1);
  }
}

// The column sweep of one group: each thread owns one column (its rows in shared memory), rounds
// row by row and feeds the error forward into the group's later rows; E keeps the scaled errors
// for the lazy update of the rows after the group.
__global__ void group_sweep_kernel(const float* __restrict__ W, int np, int a, int rows, int maxq, int z,
                                   const float* __restrict__ scale, const float* __restrict__ U, int k, int rtn,
                                   std::uint8_t* __restrict__ Q, float* __restrict__ deq, float* __restrict__ E) {
  EXL_SHARED_ARRAY(float, s, [kMaxGroupRows][kSweepColumns]);
  const int t = threadIdx.x, c = blockIdx.x * kSweepColumns + t;
  if (c >= np) return;
  for (int r = 0; r < rows; ++r) s[r][t] = W[std::size_t(a + r) * np + c];
  const float sc = scale[c];
  for (int j = 0; j < rows; ++j) {
    const float w = s[j][t];
    int q = z;
    if (sc > 0.0f) q = min(max(int(rintf(w / sc)) + z, 0), maxq);
    const float wq = round_half(float(q - z) * sc);
    const std::size_t o = std::size_t(a + j) * np + c;
    Q[o] = std::uint8_t(q);
    deq[o] = wq;
    if (rtn) continue;
    const float* urow = U + std::size_t(a + j) * k + a;
    const float err = (w - wq) / urow[j];
    E[std::size_t(j) * np + c] = err;
    for (int jj = j + 1; jj < rows; ++jj) s[jj][t] -= urow[jj] * err;
  }
}

// dequant [n, k] (HF layout) from deq [k, np] (stored rows); fp32, or fp16 (the values are fp16-exact).
__device__ __forceinline__ void store_value(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_value(__half* p, float v) { *p = __float2half_rn(v); }
template <class T>
__global__ void gptq_store_kernel(const float* __restrict__ deq, int n, int k, int np, const int* __restrict__ perm,
                                  T* __restrict__ out) {
  const std::int64_t count = std::int64_t(k) * n;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int j = int(i / n), c = int(i % n);
    store_value(out + std::size_t(c) * k + perm[j], deq[std::size_t(j) * np + c]);
  }
}

__global__ void half_to_f32_kernel(const __half* __restrict__ a, std::int64_t count, float* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = __half2float(a[i]);
}

// Per block: sum (clamp(y) - clamp(ref))^2 and sum clamp(ref)^2 in fp64 (clamped to the fp16 range;
// NaN stays NaN, as std::clamp leaves it on the CPU).
__device__ __forceinline__ double clamp_f16_range(double v) { return v < -65504.0 ? -65504.0 : (65504.0 < v ? 65504.0 : v); }
__global__ void rfn_partial_kernel(const float* __restrict__ y, const float* __restrict__ ref, std::int64_t count,
                                   double* __restrict__ out) {
  double num = 0.0, den = 0.0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const double a = clamp_f16_range(y[i]), b = clamp_f16_range(ref[i]);
    num += (a - b) * (a - b);
    den += b * b;
  }
  num = block_reduce(num, Sum{});
  den = block_reduce(den, Sum{});
  if (threadIdx.x == 0) {
    out[blockIdx.x * 2] = num;
    out[blockIdx.x * 2 + 1] = den;
  }
}

template <class T>
void upload(DeviceBuffer& b, Allocator* a, const T* src, std::size_t n, const char* what, cudaStream_t s) {
  if (b.bytes() < n * sizeof(T)) b.allocate(a, n * sizeof(T), what);
  if (n) EXL_CUDA_CHECK(cudaMemcpyAsync(b.get(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}

template <class T>
void download(T* dst, const DeviceBuffer& b, std::size_t n, cudaStream_t s) {
  if (n) EXL_CUDA_CHECK(cudaMemcpyAsync(dst, b.get(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
}

const char* slot_name(int slot) {
  static const char* names[] = {"norm", "q_proj", "k_proj", "v_proj", "o_proj", "q_proj bias", "k_proj bias",
                                "v_proj bias", "o_proj bias", "gate_proj", "up_proj", "down_proj"};
  return slot >= 0 && slot < EXL_CUDA_CONV_SLOTS ? names[slot] : "?";
}

}  // namespace

ConvertMath::ConvertMath(int device, std::uint64_t vram_limit) : device_(device) {
  use_device(device);
  alloc_.limit = vram_limit;
  EXL_CUBLAS_CHECK(cublasSetStream(blas_.get(), stream_.get()));
  EXL_CUBLAS_CHECK(cublasSetMathMode(blas_.get(), CUBLAS_DEFAULT_MATH));  // fp32 stays fp32 (no TF32)
  zero_.allocate(&alloc_, sizeof(int), "convert: zero position");
  EXL_CUDA_CHECK(cudaMemsetAsync(zero_.get(), 0, sizeof(int), stream_.get()));
  fail_.allocate(&alloc_, sizeof(int), "convert: Cholesky flag");
}

void* ConvertMath::scratch(DeviceBuffer& b, std::size_t bytes, const char* what) {
  if (b.bytes() < bytes) {
    b.reset();
    b.allocate(&alloc_, bytes, what);
  }
  return b.get();
}

void ConvertMath::set_tensor(int slot, const float* data, std::int64_t count) {
  EXL_CUDA_REQUIRE(slot >= 0 && slot < EXL_CUDA_CONV_SLOTS, "convert_set_tensor: slot " + std::to_string(slot));
  EXL_CUDA_REQUIRE(count >= 0 && (count == 0 || data), "convert_set_tensor: no data");
  use_device(device_);
  counts_[slot] = count;
  if (count == 0) return;
  scratch(tensors_[slot], std::size_t(count) * sizeof(float), slot_name(slot));
  EXL_CUDA_CHECK(cudaMemcpyAsync(tensors_[slot].get(), data, std::size_t(count) * sizeof(float),
                                 cudaMemcpyHostToDevice, stream_.get()));
}

void ConvertMath::linear(const float* x, int m, int k, int slot, int n, int bias_slot, float* y, bool accumulate) {
  EXL_CUDA_REQUIRE(counts_[slot] == std::int64_t(n) * k,
                   std::string("convert: ") + slot_name(slot) + " holds " + std::to_string(counts_[slot]) +
                       " values, the block needs " + std::to_string(std::int64_t(n) * k));
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  EXL_CUBLAS_CHECK(cublasSgemm(blas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, tensors_[slot].get<float>(), k,
                               x, k, &beta, y, n));
  if (bias_slot >= 0 && counts_[bias_slot] > 0) {
    EXL_CUDA_REQUIRE(counts_[bias_slot] >= n, std::string("convert: short ") + slot_name(bias_slot));
    launch_ex(false, bias_add_kernel, dim3(grid_for(std::int64_t(m) * n)), dim3(kThreads), 0, stream_.get(), y,
              std::int64_t(m) * n, n, tensors_[bias_slot].get<float>());
  }
}

void ConvertMath::run_block(const exl_cuda_block_shape& sh, bool attention, float* x, int T, bool collect) {
  use_device(device_);
  EXL_CUDA_REQUIRE(T > 0 && sh.hidden > 0 && x, "convert_run_block: empty input");
  const cudaStream_t s = stream_.get();
  const std::size_t bytes = std::size_t(T) * sh.hidden * sizeof(float);
  float* dx = static_cast<float*>(scratch(x_, bytes, "convert: block input"));
  EXL_CUDA_CHECK(cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, s));
  run_device(sh, attention, dx, T, collect);
  EXL_CUDA_CHECK(cudaMemcpyAsync(x, dx, bytes, cudaMemcpyDeviceToHost, s));
  stream_.sync();
}

void ConvertMath::run_device(const exl_cuda_block_shape& sh, bool attention, float* dx, int T, bool collect) {
  const cudaStream_t s = stream_.get();
  const int H = sh.hidden;
  EXL_CUDA_REQUIRE(counts_[EXL_CUDA_CONV_NORM] == H, "convert_run_block: the norm weight is not [hidden]");
  float* a = static_cast<float*>(scratch(a_, std::size_t(T) * H * sizeof(float), "convert: normed input"));
  launch_ex(false, rms_norm_f32_kernel, dim3(T), dim3(kThreads), 0, s, dx, H, tensors_[EXL_CUDA_CONV_NORM].get<float>(),
            sh.norm_eps, a);
  if (collect) add_device(hessian(0), a, T);
  if (attention) {
    const int nh = sh.heads, nkv = sh.kv_heads, d = sh.head_dim;
    EXL_CUDA_REQUIRE(nh > 0 && nkv > 0 && nh % nkv == 0 && d > 0 && d % 2 == 0 && sh.rope_inv_freq,
                     "convert_run_block: bad attention shape");
    const int qd = nh * d, kd = nkv * d, r = nh / nkv;
    float* q = static_cast<float*>(scratch(q_, std::size_t(T) * qd * sizeof(float), "convert: q"));
    float* k = static_cast<float*>(scratch(k_, std::size_t(T) * kd * sizeof(float), "convert: k"));
    float* v = static_cast<float*>(scratch(v_, std::size_t(T) * kd * sizeof(float), "convert: v"));
    float* att = static_cast<float*>(scratch(att_, std::size_t(T) * qd * sizeof(float), "convert: attention"));
    float* sc = static_cast<float*>(scratch(scores_, std::size_t(r) * T * T * sizeof(float), "convert: scores"));
    auto* cs = static_cast<float2*>(scratch(cs_, std::size_t(T) * (d / 2) * sizeof(float2), "convert: rope table"));
    upload(inv_freq_, &alloc_, sh.rope_inv_freq, std::size_t(d / 2), "convert: rope frequencies", s);
    linear(a, T, H, EXL_CUDA_CONV_Q, qd, EXL_CUDA_CONV_Q_BIAS, q, false);
    linear(a, T, H, EXL_CUDA_CONV_K, kd, EXL_CUDA_CONV_K_BIAS, k, false);
    linear(a, T, H, EXL_CUDA_CONV_V, kd, EXL_CUDA_CONV_V_BIAS, v, false);
    RopeParams rp;
    rp.inv_freq = inv_freq_.get<float>();
    rp.mscale = sh.rope_mscale;
    rp.divisor = sh.rope_position_divisor;
    rp.d = d;
    rp.past = zero_.get<int>();
    rp.cs = cs;
    rope_table(rp, T, s);
    rope_inplace(q, T, nh, d, cs, sh.rope_style, s);
    rope_inplace(k, T, nkv, d, cs, sh.rope_style, s);
    const float scale = 1.0f / std::sqrt(float(d)), one = 1.0f, zero = 0.0f;
    for (int g = 0; g < nkv; ++g) {
      // scores of the group's r query heads: S_h [query, key] = scale q_h . k_g
      EXL_CUBLAS_CHECK(cublasSgemmStridedBatched(blas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, T, T, d, &scale, k + g * d,
                                                 kd, 0, q + std::size_t(g) * r * d, qd, d, &zero, sc, T,
                                                 std::int64_t(T) * T, r));
      launch_ex(false, causal_softmax_kernel, dim3(r * T), dim3(kThreads), 0, s, sc, T);
      EXL_CUBLAS_CHECK(cublasSgemmStridedBatched(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, T, T, &one, v + g * d, kd,
                                                 0, sc, T, std::int64_t(T) * T, &zero,
                                                 att + std::size_t(g) * r * d, qd, d, r));
    }
    if (collect) add_device(hessian(1), att, T);
    linear(att, T, qd, EXL_CUDA_CONV_O, H, EXL_CUDA_CONV_O_BIAS, dx, true);
  } else {
    const int I = sh.intermediate;
    EXL_CUDA_REQUIRE(I > 0, "convert_run_block: bad MLP shape");
    float* g = static_cast<float*>(scratch(g_, std::size_t(T) * I * sizeof(float), "convert: gate"));
    float* u = static_cast<float*>(scratch(u_, std::size_t(T) * I * sizeof(float), "convert: up"));
    linear(a, T, H, EXL_CUDA_CONV_GATE, I, -1, g, false);
    linear(a, T, H, EXL_CUDA_CONV_UP, I, -1, u, false);
    launch_ex(false, silu_mul_f32_kernel, dim3(grid_for(std::int64_t(T) * I)), dim3(kThreads), 0, s, g, u,
              std::int64_t(T) * I);
    if (collect) add_device(hessian(1), g, T);
    linear(g, T, I, EXL_CUDA_CONV_DOWN, H, -1, dx, true);
  }
}

ConvertMath::Hessian& ConvertMath::hessian(int slot) {
  EXL_CUDA_REQUIRE(slot >= 0 && slot < 3, "convert: Hessian slot " + std::to_string(slot));
  EXL_CUDA_REQUIRE(hess_[slot].k > 0, "convert: Hessian slot " + std::to_string(slot) + " not reset");
  return hess_[slot];
}

void ConvertMath::hessian_reset(int slot, int k) {
  EXL_CUDA_REQUIRE(slot >= 0 && slot < 3 && k > 0, "convert_hessian_reset: slot " + std::to_string(slot));
  use_device(device_);
  Hessian& h = hess_[slot];
  const std::size_t bytes = std::size_t(k) * k * sizeof(double);
  if (h.h.bytes() != bytes) {
    h.h.reset();
    h.u.reset();
    h.h.allocate(&alloc_, bytes, "convert: Hessian");
  }
  h.k = k;
  h.prepared = false;
  EXL_CUDA_CHECK(cudaMemsetAsync(h.h.get(), 0, bytes, stream_.get()));
}

void ConvertMath::add_device(Hessian& h, const float* x, int T) {
  const int k = h.k;
  float* p = static_cast<float*>(scratch(work_[3], std::size_t(k) * k * sizeof(float), "convert: x^T x"));
  const float one = 1.0f, zero = 0.0f;
  // column-major x is [k, T]: x x^T = sum over tokens of the outer products
  EXL_CUBLAS_CHECK(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, k, k, T, &one, x, k, x, k, &zero, p, k));
  launch_ex(false, add_f64_kernel, dim3(grid_for(std::int64_t(k) * k)), dim3(kThreads), 0, stream_.get(),
            h.h.get<double>(), p, std::int64_t(k) * k);
  h.prepared = false;
}

void ConvertMath::hessian_add(int slot, const float* x, int tokens) {
  use_device(device_);
  Hessian& h = hessian(slot);
  EXL_CUDA_REQUIRE(x && tokens > 0, "convert_hessian_add: empty input");
  upload(x_, &alloc_, x, std::size_t(tokens) * h.k, "convert: Hessian input", stream_.get());
  add_device(h, x_.get<float>(), tokens);
  stream_.sync();
}

bool ConvertMath::cholesky(double* a, int k) {
  const cudaStream_t s = stream_.get();
  int* fail = fail_.get<int>();
  EXL_CUDA_CHECK(cudaMemsetAsync(fail, 0, sizeof(int), s));
  const double one = 1.0, minus = -1.0;
  for (int kb = 0; kb < k; kb += kCholBlock) {
    const int nb = std::min(kCholBlock, k - kb), rest = k - kb - nb;
    double* a11 = a + std::size_t(kb) * k + kb;
    launch_ex(false, chol_diag_kernel, dim3(1), dim3(kThreads), 0, s, a11, k, nb, fail);
    if (rest == 0) break;
    double* a21 = a11 + nb;
    EXL_CUBLAS_CHECK(cublasDtrsm(blas_.get(), CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                 CUBLAS_DIAG_NON_UNIT, rest, nb, &one, a11, k, a21, k));
    EXL_CUBLAS_CHECK(cublasDsyrk(blas_.get(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, rest, nb, &minus, a21, k, &one,
                                 a + std::size_t(kb + nb) * k + kb + nb, k));
  }
  int failed = 0;
  EXL_CUDA_CHECK(cudaMemcpyAsync(&failed, fail, sizeof(int), cudaMemcpyDeviceToHost, s));
  stream_.sync();
  return failed == 0;
}

void ConvertMath::hessian_prepare(int slot, double scale, std::int32_t* perm) {
  use_device(device_);
  Hessian& h = hessian(slot);
  EXL_CUDA_REQUIRE(perm, "convert_hessian_prepare: null");
  const int k = h.k;
  const std::int64_t kk = std::int64_t(k) * k;
  const cudaStream_t s = stream_.get();
  launch_ex(false, scale_f64_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, h.h.get<double>(), kk, scale);
  DeviceBuffer diag(&alloc_, std::size_t(k) * sizeof(double), "convert: Hessian diagonal");
  launch_ex(false, diag_kernel, dim3(grid_for(k)), dim3(kThreads), 0, s, h.h.get<double>(), k, diag.get<double>());
  std::vector<double> d(static_cast<std::size_t>(k));
  download(d.data(), diag, d.size(), s);
  stream_.sync();
  // act order: descending diagonal, stable (as the CPU path)
  std::vector<std::int32_t> order(static_cast<std::size_t>(k));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return d[std::size_t(x)] > d[std::size_t(y)]; });
  const double mean_diag = std::accumulate(d.begin(), d.end(), 0.0) / k;
  upload(h.perm, &alloc_, order.data(), order.size(), "convert: act-order permutation", s);
  double* P = static_cast<double*>(scratch(work_[0], std::size_t(kk) * sizeof(double), "convert: permuted Hessian"));
  double* L = static_cast<double*>(scratch(work_[1], std::size_t(kk) * sizeof(double), "convert: Cholesky factor"));
  double* X = static_cast<double*>(scratch(work_[2], std::size_t(kk) * sizeof(double), "convert: inverse factor"));
  launch_ex(false, permute_sym_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, h.h.get<double>(), h.perm.get<int>(),
            k, P);
  const double damp = std::max(0.12 * mean_diag, 1e-5), one = 1.0, zero = 0.0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    launch_ex(false, add_diag_kernel, dim3(grid_for(k)), dim3(kThreads), 0, s, P, k, damp);
    EXL_CUDA_CHECK(cudaMemcpyAsync(L, P, std::size_t(kk) * sizeof(double), cudaMemcpyDeviceToDevice, s));
    if (!cholesky(L, k)) continue;
    launch_ex(false, zero_upper_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, L, k);
    launch_ex(false, identity_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, X, k);
    EXL_CUBLAS_CHECK(cublasDtrsm(blas_.get(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                 CUBLAS_DIAG_NON_UNIT, k, k, &one, L, k, X, k));  // X = L^-1
    // H^-1 = X^T X (lower triangle), into L's buffer
    EXL_CUBLAS_CHECK(cublasDsyrk(blas_.get(), CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, k, k, &one, X, k, &zero, L, k));
    if (!cholesky(L, k)) continue;
    launch_ex(false, zero_upper_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, L, k);
    if (h.u.bytes() != std::size_t(kk) * sizeof(float)) {
      h.u.reset();
      h.u.allocate(&alloc_, std::size_t(kk) * sizeof(float), "convert: GPTQ factor");
    }
    launch_ex(false, to_f32_kernel, dim3(grid_for(kk)), dim3(kThreads), 0, s, L, kk, h.u.get<float>());
    stream_.sync();
    std::copy(order.begin(), order.end(), perm);
    h.prepared = true;
    return;
  }
  throw_status(EXL_CUDA_ERR_INVALID, "the Hessian is not positive definite even after damping");
}

void ConvertMath::hessian_factor(int slot, float* u) {
  use_device(device_);
  Hessian& h = hessian(slot);
  EXL_CUDA_REQUIRE(h.prepared && u, "convert_hessian_factor: not prepared");
  download(u, h.u, std::size_t(h.k) * h.k, stream_.get());
  stream_.sync();
}

void ConvertMath::gptq(int slot, const float* w, int n, int k, int groups, const int* bits, const int* rows,
                       bool rtn, std::uint8_t* q, std::uint8_t* codes, std::uint16_t* scale_max, float* dequant) {
  use_device(device_);
  Hessian& h = hessian(slot);
  EXL_CUDA_REQUIRE(w && n > 0 && q && codes && scale_max && dequant, "convert_gptq: null");
  const cudaStream_t s = stream_.get();
  const int np = (n + 31) / 32 * 32;
  upload(gq_[0], &alloc_, w, std::size_t(n) * k, "convert: GPTQ weight", s);
  const __half* smax = gptq_device(h, gq_[0].get<float>(), n, k, groups, bits, rows, rtn);
  launch_ex(false, gptq_store_kernel<float>, dim3(grid_for(std::int64_t(k) * n)), dim3(kThreads), 0, s,
            gq_[2].get<float>(), n, k, np, h.perm.get<int>(), gq_[0].get<float>());
  download(q, gq_[4], std::size_t(k) * np, s);
  download(codes, gq_[5], std::size_t(groups) * np, s);
  EXL_CUDA_CHECK(cudaMemcpyAsync(scale_max, smax, std::size_t(groups) * sizeof(__half), cudaMemcpyDeviceToHost, s));
  download(dequant, gq_[0], std::size_t(n) * k, s);
  stream_.sync();
}

__half* ConvertMath::gptq_device(Hessian& h, const float* w, int n, int k, int groups, const int* bits,
                                 const int* rows, bool rtn) {
  EXL_CUDA_REQUIRE(h.prepared, "convert_gptq: the Hessian is not prepared");
  EXL_CUDA_REQUIRE(h.k == k, "convert_gptq: the Hessian has " + std::to_string(h.k) + " rows, the weight " +
                                 std::to_string(k) + " inputs");
  EXL_CUDA_REQUIRE(w && n > 0 && groups > 0 && bits && rows, "convert_gptq: null");
  int total = 0;
  for (int g = 0; g < groups; ++g) {
    EXL_CUDA_REQUIRE(rows[g] > 0 && rows[g] <= kMaxGroupRows && bits[g] >= 2 && bits[g] <= 8,
                     "convert_gptq: group " + std::to_string(g) + " has " + std::to_string(rows[g]) + " rows of " +
                         std::to_string(bits[g]) + " bits");
    total += rows[g];
  }
  EXL_CUDA_REQUIRE(total == k, "convert_gptq: the groups cover " + std::to_string(total) + " of " +
                                   std::to_string(k) + " rows");
  const cudaStream_t s = stream_.get();
  const int np = (n + 31) / 32 * 32;
  const std::int64_t kn = std::int64_t(k) * np;
  const int nbm = (np + kThreads - 1) / kThreads;   // column blocks of group_max
  const int nsb = (np + 127) / 128;                 // column blocks of group_search
  float* W = static_cast<float*>(scratch(gq_[1], std::size_t(kn) * sizeof(float), "convert: GPTQ rows"));
  float* deq = static_cast<float*>(scratch(gq_[2], std::size_t(kn) * sizeof(float), "convert: GPTQ dequant"));
  float* E = static_cast<float*>(scratch(gq_[3], std::size_t(kMaxGroupRows) * np * sizeof(float), "convert: GPTQ errors"));
  auto* Q = static_cast<std::uint8_t*>(scratch(gq_[4], std::size_t(kn), "convert: GPTQ integers"));
  auto* C = static_cast<std::uint8_t*>(scratch(gq_[5], std::size_t(groups) * np, "convert: GPTQ codes"));
  float* base = static_cast<float*>(scratch(gq_[6], std::size_t(2 * np + nbm) * sizeof(float), "convert: GPTQ scales"));
  float* scale = base + np;
  float* block_max = scale + np;
  auto* partial = static_cast<double*>(scratch(gq_[7], std::size_t(kScaleSteps) * nsb * sizeof(double) +
                                                           std::size_t(groups) * sizeof(__half),
                                               "convert: GPTQ search"));
  auto* smax = reinterpret_cast<__half*>(partial + std::size_t(kScaleSteps) * nsb);
  launch_ex(false, gptq_load_kernel, dim3(grid_for(kn)), dim3(kThreads), 0, s, w, n, k, np, h.perm.get<int>(), W);
  const float minus = -1.0f, one = 1.0f;
  int a = 0;
  for (int g = 0; g < groups; ++g) {
    const int b = bits[g], e = a + rows[g], maxq = (1 << b) - 1, z = 1 << (b - 1);
    launch_ex(false, group_max_kernel, dim3(nbm), dim3(kThreads), 0, s, W, np, a, e, maxq, base, block_max);
    launch_ex(false, group_search_kernel, dim3(nsb, kScaleSteps), dim3(128), 0, s, W, np, a, e, maxq, z, base,
              block_max, nbm, partial);
    launch_ex(false, group_scale_kernel, dim3(1), dim3(kThreads), 0, s, partial, nsb, base, block_max, nbm, np, g, scale,
              C, smax);
    launch_ex(false, group_sweep_kernel, dim3((np + kSweepColumns - 1) / kSweepColumns), dim3(kSweepColumns), 0, s, W,
              np, a, rows[g], maxq, z, scale, h.u.get<float>(), k, rtn ? 1 : 0, Q, deq, E);
    if (!rtn && e < k)  // W[e:, :] -= U[a:e, e:]^T E
      EXL_CUBLAS_CHECK(cublasSgemm(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_T, np, k - e, rows[g], &minus, E, np,
                                   h.u.get<float>() + std::size_t(a) * k + e, k, &one, W + std::size_t(e) * np, np));
    a = e;
  }
  return smax;
}

// ---- the measurement pass ----

void ConvertMath::candidate(int id, int hessian_slot, int weight_slot, int n, int k, int groups, const int* bits,
                            const int* rows) {
  use_device(device_);
  EXL_CUDA_REQUIRE(weight_slot >= 0 && weight_slot < EXL_CUDA_CONV_SLOTS && n > 0 && k > 0,
                   "convert_candidate: slot " + std::to_string(weight_slot));
  EXL_CUDA_REQUIRE(counts_[weight_slot] == std::int64_t(n) * k,
                   std::string("convert_candidate: ") + slot_name(weight_slot) + " holds " +
                       std::to_string(counts_[weight_slot]) + " values, not " + std::to_string(std::int64_t(n) * k));
  Hessian& h = hessian(hessian_slot);
  const cudaStream_t s = stream_.get();
  const std::size_t bytes = std::size_t(n) * k * sizeof(__half);
  // Keep room for the rest of the measurement (scratch grows with the largest projection): a
  // candidate that would leave less than 1 GiB + a quarter of the device free is refused.
  std::size_t free_b = 0, total_b = 0;
  EXL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (free_b < bytes + (std::size_t(1) << 30) + total_b / 4)
    throw_status(EXL_CUDA_ERR_OUT_OF_MEMORY, "convert_candidate: " + std::to_string(free_b >> 20) +
                                                 " MiB free on the device, too little to keep another candidate");
  Candidate c;
  c.n = n;
  c.k = k;
  c.w.allocate(&alloc_, bytes, "convert: measurement candidate");
  const int np = (n + 31) / 32 * 32;
  gptq_device(h, tensors_[weight_slot].get<float>(), n, k, groups, bits, rows, false);
  launch_ex(false, gptq_store_kernel<__half>, dim3(grid_for(std::int64_t(k) * n)), dim3(kThreads), 0, s,
            gq_[2].get<float>(), n, k, np, h.perm.get<int>(), c.w.get<__half>());
  for (auto& [cid, cand] : candidates_)
    if (cid == id) {
      cand = std::move(c);
      return;
    }
  candidates_.emplace_back(id, std::move(c));
}

void ConvertMath::candidate_use(int weight_slot, int id) {
  use_device(device_);
  EXL_CUDA_REQUIRE(weight_slot >= 0 && weight_slot < EXL_CUDA_CONV_SLOTS,
                   "convert_candidate_use: slot " + std::to_string(weight_slot));
  for (auto& [cid, c] : candidates_) {
    if (cid != id) continue;
    const std::int64_t count = std::int64_t(c.n) * c.k;
    float* dst = static_cast<float*>(scratch(tensors_[weight_slot], std::size_t(count) * sizeof(float),
                                             slot_name(weight_slot)));
    launch_ex(false, half_to_f32_kernel, dim3(grid_for(count)), dim3(kThreads), 0, stream_.get(), c.w.get<__half>(),
              count, dst);
    counts_[weight_slot] = count;
    return;
  }
  throw_status(EXL_CUDA_ERR_INVALID, "convert_candidate_use: no candidate " + std::to_string(id));
}

void ConvertMath::candidates_clear() {
  use_device(device_);
  stream_.sync();
  candidates_.clear();
}

void ConvertMath::set_row(int which, int row, int rows, const float* x, int T, int H) {
  use_device(device_);
  EXL_CUDA_REQUIRE(which >= 0 && which < 2 && rows > 0 && row >= 0 && row < rows && x && T > 0 && H > 0,
                   "convert_rows: row " + std::to_string(row) + " of " + std::to_string(rows));
  if (int(rows_[0].size()) != rows || T != row_tokens_ || H != row_hidden_) {
    stream_.sync();
    for (auto& v : rows_) {
      v.clear();
      v.resize(std::size_t(rows));
    }
    row_tokens_ = T;
    row_hidden_ = H;
  }
  const std::size_t count = std::size_t(T) * H;
  upload(rows_[which][std::size_t(row)], &alloc_, x, count, which ? "convert: reference rows" : "convert: input rows",
         stream_.get());
}

double ConvertMath::evaluate(const exl_cuda_block_shape& sh, bool attention) {
  use_device(device_);
  const int R = int(rows_[0].size()), T = row_tokens_, H = row_hidden_;
  EXL_CUDA_REQUIRE(R > 0 && H == sh.hidden, "convert_evaluate: no rows of this block's width");
  const std::size_t count = std::size_t(T) * H;
  for (int r = 0; r < R; ++r)
    EXL_CUDA_REQUIRE(rows_[0][r].bytes() >= count * sizeof(float) && rows_[1][r].bytes() >= count * sizeof(float),
                     "convert_evaluate: row " + std::to_string(r) + " not set");
  const cudaStream_t s = stream_.get();
  float* y = static_cast<float*>(scratch(x_, count * sizeof(float), "convert: block input"));
  const int blocks = std::min(grid_for(std::int64_t(count)), 1024);
  auto* part = static_cast<double*>(scratch(rfn_, std::size_t(R) * blocks * 2 * sizeof(double), "convert: errors"));
  for (int r = 0; r < R; ++r) {
    EXL_CUDA_CHECK(cudaMemcpyAsync(y, rows_[0][r].get(), count * sizeof(float), cudaMemcpyDeviceToDevice, s));
    run_device(sh, attention, y, T, false);
    // The row's first token is left out (first_token_skip, engine/src/convert/block_math.h).
    const std::size_t skip = T > 1 ? std::size_t(H) : 0;
    launch_ex(false, rfn_partial_kernel, dim3(blocks), dim3(kThreads), 0, s, y + skip, rows_[1][r].get<float>() + skip,
                                                    std::int64_t(count - skip), part + std::size_t(r) * blocks * 2);
  }
  std::vector<double> host(std::size_t(R) * blocks * 2);
  download(host.data(), rfn_, host.size(), s);
  stream_.sync();
  double sum = 0.0;
  for (int r = 0; r < R; ++r) {
    double num = 0.0, den = 0.0;
    for (int b = 0; b < blocks; ++b) {
      num += host[(std::size_t(r) * blocks + b) * 2];
      den += host[(std::size_t(r) * blocks + b) * 2 + 1];
    }
    if (!std::isfinite(num) || !std::isfinite(den))
      throw_status(EXL_CUDA_ERR_INVALID, "convert_evaluate: NaN/inf in the block output (row " + std::to_string(r) + ")");
    sum += den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
  }
  return sum / double(R);
}

}  // namespace exl::cuda

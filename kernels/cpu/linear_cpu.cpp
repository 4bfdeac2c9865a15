// Fast CPU dense linear layer y[m, n] = x[m, k] * w[n, k]^T (+ bias) for fp16 / bf16 / fp32
// weights, and the embedding lookup. Threads split the output features in blocks of 16 weight
// rows; inside a block, up to 4 activation rows share each weight load (so a weight row is
// read once per 4 rows of x and stays in L1 while x streams from L2). fp32 accumulation; the
// AVX2 path widens fp16 with F16C and bf16 with a shift.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../reference/elem.h"
#include "exl/kernels/linear.h"
#include "exl/kernels/threads.h"
#include "simd.h"

namespace exl {

namespace {

constexpr int k_nblock = 16;
constexpr int k_mblock = 4;

// Portable: dot products of M activation rows with one weight row.
void dot_rows_scalar(const float* x, int M, int k, const void* w, DType dt, std::int64_t wrow, float* out) {
  float acc[k_mblock] = {0, 0, 0, 0};
  for (int i = 0; i < k; ++i) {
    const float wv = detail::load_elem(w, dt, wrow * k + i);
    for (int r = 0; r < M; ++r) acc[r] += x[std::int64_t(r) * k + i] * wv;
  }
  for (int r = 0; r < M; ++r) out[r] = acc[r];
}

#if EXL_X86
template <DType DT>
EXL_AVX2 inline __m256 load8(const void* w, std::int64_t i) {
  if constexpr (DT == DType::f16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(w) + i)));
  } else if constexpr (DT == DType::bf16) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(w) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(w) + i);
  }
}

EXL_AVX2 inline float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

template <DType DT, int M>
EXL_AVX2 void dot_rows_avx2_t(const float* x, int k, const void* w, std::int64_t wrow, float* out) {
  // Two accumulators per row (even and odd 8-element steps) so that one row does not wait on
  // the FMA latency; loops over rows unrolled so the accumulators stay in registers.
  __m256 acc[M][2];
#pragma GCC unroll 4
  for (int r = 0; r < M; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  const std::int64_t base = wrow * k;
  int i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m256 w0 = load8<DT>(w, base + i), w1 = load8<DT>(w, base + i + 8);
#pragma GCC unroll 4
    for (int r = 0; r < M; ++r) {
      acc[r][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + std::int64_t(r) * k + i), acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + std::int64_t(r) * k + i + 8), acc[r][1]);
    }
  }
  for (; i + 8 <= k; i += 8) {
    const __m256 wv = load8<DT>(w, base + i);
#pragma GCC unroll 4
    for (int r = 0; r < M; ++r) acc[r][0] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + std::int64_t(r) * k + i), acc[r][0]);
  }
  for (int r = 0; r < M; ++r) {
    float s = hsum(_mm256_add_ps(acc[r][0], acc[r][1]));
    for (int j = i; j < k; ++j) s += x[std::int64_t(r) * k + j] * detail::load_elem(w, DT, base + j);
    out[r] = s;
  }
}

template <DType DT>
EXL_AVX2 void dot_rows_avx2(const float* x, int M, int k, const void* w, std::int64_t wrow, float* out) {
  switch (M) {
    case 1: dot_rows_avx2_t<DT, 1>(x, k, w, wrow, out); break;
    case 2: dot_rows_avx2_t<DT, 2>(x, k, w, wrow, out); break;
    case 3: dot_rows_avx2_t<DT, 3>(x, k, w, wrow, out); break;
    default: dot_rows_avx2_t<DT, 4>(x, k, w, wrow, out); break;
  }
}
#endif

void dot_rows(bool simd, const float* x, int M, int k, const void* w, DType dt, std::int64_t wrow, float* out) {
#if EXL_X86
  if (simd) {
    switch (dt) {
      case DType::f16: dot_rows_avx2<DType::f16>(x, M, k, w, wrow, out); return;
      case DType::bf16: dot_rows_avx2<DType::bf16>(x, M, k, w, wrow, out); return;
      case DType::f32: dot_rows_avx2<DType::f32>(x, M, k, w, wrow, out); return;
      default: break;
    }
  }
#endif
  dot_rows_scalar(x, M, k, w, dt, wrow, out);
}

}  // namespace

void linear_cpu(const float* x, int m, int k, const void* w, DType w_dtype, int n, const float* bias,
                float* y) {
  if (m <= 0 || n <= 0) return;
  if (detail::float_dtype_size(w_dtype) == 0) {  // unsupported weight dtype: defined zero output
    for (std::int64_t i = 0; i < std::int64_t(m) * n; ++i) y[i] = 0.0f;
    return;
  }
  const bool simd = cpu_simd_active();
  const std::int64_t blocks = (n + k_nblock - 1) / k_nblock;
  parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    float out[k_mblock];
    for (std::int64_t b = b0; b < b1; ++b) {
      const int j0 = int(b) * k_nblock, j1 = std::min(n, j0 + k_nblock);
      for (int r0 = 0; r0 < m; r0 += k_mblock) {
        const int M = std::min(k_mblock, m - r0);
        for (int j = j0; j < j1; ++j) {
          dot_rows(simd, x + std::int64_t(r0) * k, M, k, w, w_dtype, j, out);
          for (int r = 0; r < M; ++r) y[std::int64_t(r0 + r) * n + j] = out[r] + (bias ? bias[j] : 0.0f);
        }
      }
    }
  });
}

void embedding_cpu(const void* table, DType dtype, int vocab, int dim, const std::int32_t* ids, int n,
                   float* out) {
  parallel_for(n, 4, [&](std::int64_t t0, std::int64_t t1) {
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int32_t id = ids[t];
      float* o = out + t * dim;
      if (id < 0 || id >= vocab) {
        std::fill(o, o + dim, 0.0f);
      } else if (dtype == DType::f16) {
        half_to_float_n(static_cast<const half_bits*>(table) + std::int64_t(id) * dim, o, std::size_t(dim));
      } else if (dtype == DType::f32) {
        std::memcpy(o, static_cast<const float*>(table) + std::int64_t(id) * dim, sizeof(float) * dim);
      } else {
        for (int i = 0; i < dim; ++i) o[i] = detail::load_elem(table, dtype, std::int64_t(id) * dim + i);
      }
    }
  });
}

}  // namespace exl

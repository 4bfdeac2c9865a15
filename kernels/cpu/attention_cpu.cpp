// Fast CPU causal GQA attention over an fp32 or fp16 KV cache, and the cache write.
// Layout: q/out [t, n_heads, d]; cache [capacity, n_kv_heads, d]. Threads split the
// (token, head) pairs; each pair computes its scores in one pass (fp32 dot products, AVX2 +
// F16C when available), a max-subtracted softmax in fp32 and the weighted sum of values in fp32.
// Masking is causal bottom-right with an optional sliding window, as in attention_ref.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../reference/elem.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/threads.h"
#include "simd.h"

namespace exl {

namespace {

#if EXL_X86
EXL_AVX2 inline __m256 load8(const void* p, bool f16, std::int64_t i) {
  if (f16) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(p) + i)));
  return _mm256_loadu_ps(static_cast<const float*>(p) + i);
}

EXL_AVX2 float dot_avx2(const float* q, const void* k, bool f16, std::int64_t base, int d) {
  __m256 acc = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= d; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), load8(k, f16, base + i), acc);
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  float r = _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
  for (; i < d; ++i) r += q[i] * detail::load_elem(k, f16 ? DType::f16 : DType::f32, base + i);
  return r;
}

EXL_AVX2 void axpy_avx2(float a, const void* v, bool f16, std::int64_t base, int d, float* acc) {
  const __m256 av = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= d; i += 8)
    _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(av, load8(v, f16, base + i), _mm256_loadu_ps(acc + i)));
  for (; i < d; ++i) acc[i] += a * detail::load_elem(v, f16 ? DType::f16 : DType::f32, base + i);
}
#endif

float dot_scalar(const float* q, const void* k, DType dt, std::int64_t base, int d) {
  float r = 0.0f;
  for (int i = 0; i < d; ++i) r += q[i] * detail::load_elem(k, dt, base + i);
  return r;
}

void axpy_scalar(float a, const void* v, DType dt, std::int64_t base, int d, float* acc) {
  for (int i = 0; i < d; ++i) acc[i] += a * detail::load_elem(v, dt, base + i);
}

}  // namespace

void attention_cpu(const AttentionParams& p, const float* q, const void* k_cache, const void* v_cache,
                   float* out) {
  const int d = p.head_dim;
  if (p.tokens <= 0 || p.n_heads <= 0 || p.n_kv_heads <= 0 || d <= 0) return;
  const int group = p.n_heads / p.n_kv_heads;
  const bool f16 = p.cache_dtype == DType::f16;
  const bool simd = cpu_simd_active();
  const std::int64_t pairs = std::int64_t(p.tokens) * p.n_heads;
  parallel_for(pairs, 1, [&](std::int64_t b, std::int64_t e) {
    std::vector<float> scores;
    for (std::int64_t pr = b; pr < e; ++pr) {
      const int t = int(pr / p.n_heads), h = int(pr % p.n_heads);
      const int kvh = h / group;
      const int last = p.past + t;
      const int first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
      const float* qv = q + pr * d;
      scores.resize(std::size_t(last - first + 1));
      float mx = -INFINITY;
      for (int j = first; j <= last; ++j) {
        const std::int64_t base = (kv_row(p, j) * p.n_kv_heads + kvh) * d;
#if EXL_X86
        const float s = (simd ? dot_avx2(qv, k_cache, f16, base, d) : dot_scalar(qv, k_cache, p.cache_dtype, base, d)) * p.scale;
#else
        const float s = dot_scalar(qv, k_cache, p.cache_dtype, base, d) * p.scale;
#endif
        scores[j - first] = s;
        mx = std::max(mx, s);
      }
      float denom = 0.0f;
      for (float& s : scores) {
        s = std::exp(s - mx);
        denom += s;
      }
      const float inv = 1.0f / denom;
      float* o = out + pr * d;
      std::fill(o, o + d, 0.0f);
      for (int j = first; j <= last; ++j) {
        const std::int64_t base = (kv_row(p, j) * p.n_kv_heads + kvh) * d;
        const float wgt = scores[j - first] * inv;
#if EXL_X86
        if (simd) {
          axpy_avx2(wgt, v_cache, f16, base, d, o);
          continue;
        }
#endif
        axpy_scalar(wgt, v_cache, p.cache_dtype, base, d, o);
      }
    }
  });
}

void kv_cache_write_cpu(const float* k, const float* v, int tokens, int past, int n_kv_heads, int head_dim,
                        DType cache_dtype, void* k_cache, void* v_cache) {
  const std::int64_t row = std::int64_t(n_kv_heads) * head_dim;
  const std::int64_t n = std::int64_t(tokens) * row;
  const std::int64_t off = std::int64_t(past) * row;
  if (cache_dtype == DType::f16) {
    float_to_half_n(k, static_cast<half_bits*>(k_cache) + off, std::size_t(n));
    float_to_half_n(v, static_cast<half_bits*>(v_cache) + off, std::size_t(n));
  } else if (cache_dtype == DType::f32) {
    std::copy(k, k + n, static_cast<float*>(k_cache) + off);
    std::copy(v, v + n, static_cast<float*>(v_cache) + off);
  }
}

}  // namespace exl

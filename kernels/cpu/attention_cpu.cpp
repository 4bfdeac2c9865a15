// Fast CPU causal GQA attention over an fp32 or fp16 KV cache, and the cache write.
// Layout: q/out [t, n_heads, d]; cache [capacity, n_kv_heads, d]. With AVX2, threads split the
// (token, KV head) pairs and each takes the query heads of its KV head together (attend_group_avx2:
// keys and values converted to fp32 once per block of 64 for the whole group); the portable path
// splits (token, head) pairs. Both: scores as fp32 dot products, a max-subtracted softmax in fp32,
// the weighted sum of values in fp32, in the same order per head.
// Masking is causal bottom-right with an optional sliding window, as in attention_ref; scores are
// soft-capped (cap * tanh(s / cap)) after scaling when softcap > 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../reference/elem.h"
#include "exl/kernels/attention.h"
#include "exl/kernels/ops.h"
#include "exl/kernels/threads.h"
#include "simd.h"

namespace exl {

namespace {

#if EXL_X86
EXL_AVX2 inline __m256 load8(const void* p, bool f16, std::int64_t i) {
  if (f16) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(p) + i)));
  return _mm256_loadu_ps(static_cast<const float*>(p) + i);
}

EXL_AVX2 inline float hsum8(__m256 acc) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

constexpr int k_key_block = 64;  // keys (and values) staged as fp32 at a time

// Cache rows j0 .. j0 + nb - 1 of KV head kvh as fp32 rows of head_dim in dst.
EXL_AVX2 void stage_rows(const AttentionParams& p, const void* cache, bool f16, int kvh, int j0, int nb, float* dst) {
  const int d = p.head_dim;
  for (int r = 0; r < nb; ++r, dst += d) {
    const std::int64_t base = (kv_row(p, j0 + r) * p.n_kv_heads + kvh) * d;
    int i = 0;
    for (; i + 8 <= d; i += 8) _mm256_storeu_ps(dst + i, load8(cache, f16, base + i));
    for (; i < d; ++i) dst[i] = detail::load_elem(cache, f16 ? DType::f16 : DType::f32, base + i);
  }
}

// o[c .. c + 8 * nv) += sum over the block's keys (in order) of w_j * v_j, in registers (nv <= 8;
// NV > 0 fixes it at compile time so that the loop unrolls, 0 takes nv).
template <int NV>
EXL_AVX2 void add_weighted_rows(const float* w, const float* v, int nb, int d, int c, int nv, float* o) {
  const int cnt = NV > 0 ? NV : nv;
  __m256 acc[8]{};  // (entries at and past cnt unused)
#pragma GCC unroll 8
  for (int u = 0; u < cnt; ++u) acc[u] = _mm256_loadu_ps(o + c + 8 * u);
  for (int j = 0; j < nb; ++j) {
    const __m256 a = _mm256_set1_ps(w[j]);
    const float* vr = v + std::size_t(j) * d + c;
#pragma GCC unroll 8
    for (int u = 0; u < cnt; ++u) acc[u] = _mm256_fmadd_ps(a, _mm256_loadu_ps(vr + 8 * u), acc[u]);
  }
#pragma GCC unroll 8
  for (int u = 0; u < cnt; ++u) _mm256_storeu_ps(o + c + 8 * u, acc[u]);
}

// One (query token, KV head) task with all `group` query heads of that KV head together: each
// block of keys (and then of values) is converted to fp32 once into `kv` and used by every head of
// the group, instead of each head reading the cache again. Scores four keys at a time (four FMA
// chains), each key's sum formed as a one-key loop would (one 8-lane accumulator over the 8-element
// steps, reduced, then the tail dimensions); outputs 64 dimensions at a time in registers. Per head
// the order of every operation is that of a plain one-head, key-by-key loop (fp16 -> fp32 is
// exact), so grouping changes no result bit.
EXL_AVX2 void attend_group_avx2(const AttentionParams& p, const float* q, const void* k_cache, const void* v_cache,
                                bool f16, int kvh, int group, int first, int last, float* out,
                                std::vector<float>& kv, std::vector<float>& w) {
  const int d = p.head_dim, d8 = d / 8 * 8;
  const int n = last - first + 1;
  kv.resize(std::size_t(k_key_block) * d);
  w.resize(std::size_t(group) * n);
  // Scores of every head, four keys at a time from the staged block.
  for (int j0 = first; j0 <= last; j0 += k_key_block) {
    const int nb = std::min(k_key_block, last - j0 + 1);
    stage_rows(p, k_cache, f16, kvh, j0, nb, kv.data());
    for (int h = 0; h < group; ++h) {
      const float* qh = q + std::size_t(h) * d;
      float* sc = w.data() + std::size_t(h) * n + (j0 - first);
      auto tail = [&](float r, const float* kr) {
        for (int i = d8; i < d; ++i) r += qh[i] * kr[i];
        return r * p.scale;
      };
      int j = 0;
      for (; j + 4 <= nb; j += 4) {
        const float* k0 = kv.data() + std::size_t(j) * d;
        const float *k1 = k0 + d, *k2 = k1 + d, *k3 = k2 + d;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int i = 0; i < d8; i += 8) {
          const __m256 qv = _mm256_loadu_ps(qh + i);
          a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + i), a0);
          a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k1 + i), a1);
          a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k2 + i), a2);
          a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k3 + i), a3);
        }
        sc[j] = tail(hsum8(a0), k0);
        sc[j + 1] = tail(hsum8(a1), k1);
        sc[j + 2] = tail(hsum8(a2), k2);
        sc[j + 3] = tail(hsum8(a3), k3);
      }
      for (; j < nb; ++j) {
        const float* kr = kv.data() + std::size_t(j) * d;
        __m256 a = _mm256_setzero_ps();
        for (int i = 0; i < d8; i += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(qh + i), _mm256_loadu_ps(kr + i), a);
        sc[j] = tail(hsum8(a), kr);
      }
    }
  }
  // Soft-capping (Gemma 2), then the softmax per head (max-subtracted, fp32), as the one-head form.
  for (int h = 0; h < group; ++h) {
    float* sc = w.data() + std::size_t(h) * n;
    if (p.softcap > 0.0f) softcap_inplace_cpu(sc, n, p.softcap);
    float mx = -INFINITY;
    for (int j = 0; j < n; ++j) mx = std::max(mx, sc[j]);
    float denom = 0.0f;
    for (int j = 0; j < n; ++j) {
      sc[j] = std::exp(sc[j] - mx);
      denom += sc[j];
    }
    const float inv = 1.0f / denom;
    for (int j = 0; j < n; ++j) sc[j] *= inv;
    std::fill(out + std::size_t(h) * d, out + std::size_t(h + 1) * d, 0.0f);
  }
  // Weighted sums: each head's output accumulated block by block (64 dimensions at a time in
  // registers, loaded and stored around each block: the same FMA sequence as one long run).
  for (int j0 = first; j0 <= last; j0 += k_key_block) {
    const int nb = std::min(k_key_block, last - j0 + 1);
    stage_rows(p, v_cache, f16, kvh, j0, nb, kv.data());
    for (int h = 0; h < group; ++h) {
      const float* wh = w.data() + std::size_t(h) * n + (j0 - first);
      float* o = out + std::size_t(h) * d;
      for (int c = 0; c < d8; c += 64) {
        const int nv = std::min(64, d8 - c) / 8;
        if (nv == 8) add_weighted_rows<8>(wh, kv.data(), nb, d, c, nv, o);
        else add_weighted_rows<0>(wh, kv.data(), nb, d, c, nv, o);
      }
      for (int i = d8; i < d; ++i) {
        float r = o[i];
        for (int j = 0; j < nb; ++j) r += wh[j] * kv[std::size_t(j) * d + i];
        o[i] = r;
      }
    }
  }
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
#if EXL_X86
  if (simd) {  // a task per (token, KV head), its query heads together
    const std::int64_t tasks = std::int64_t(p.tokens) * p.n_kv_heads;
    parallel_for(tasks, 1, [&](std::int64_t b, std::int64_t e) {
      std::vector<float> kv, w;
      for (std::int64_t tk = b; tk < e; ++tk) {
        const int t = int(tk / p.n_kv_heads), kvh = int(tk % p.n_kv_heads);
        const int last = p.past + t;
        const int first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
        const std::int64_t h0 = std::int64_t(t) * p.n_heads + std::int64_t(kvh) * group;
        attend_group_avx2(p, q + h0 * d, k_cache, v_cache, f16, kvh, group, first, last, out + h0 * d, kv, w);
      }
    });
    return;
  }
#else
  (void)f16;
  (void)simd;
#endif
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
        float sc = dot_scalar(qv, k_cache, p.cache_dtype, base, d) * p.scale;
        if (p.softcap > 0.0f) sc = p.softcap * std::tanh(sc / p.softcap);
        scores[j - first] = sc;
        mx = std::max(mx, sc);
      }
      float denom = 0.0f;
      for (float& s : scores) {
        s = std::exp(s - mx);
        denom += s;
      }
      const float inv = 1.0f / denom;
      for (float& s : scores) s *= inv;  // the weights
      float* o = out + pr * d;
      std::fill(o, o + d, 0.0f);
      for (int j = first; j <= last; ++j) {
        const std::int64_t base = (kv_row(p, j) * p.n_kv_heads + kvh) * d;
        axpy_scalar(scores[j - first], v_cache, p.cache_dtype, base, d, o);
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

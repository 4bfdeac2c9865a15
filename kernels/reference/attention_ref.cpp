// Reference causal GQA attention over a KV cache (spec §4.5). q/out: [t, n_heads, d] fp32;
// cache k/v: [capacity, n_kv_heads, d] fp32 or fp16. Query i (absolute position past + i) sees
// keys j <= past + i; with a sliding window W > 0 only the last W of those (j > past + i - W).
// Soft-capping (softcap > 0): s = cap * tanh(s / cap) after scaling, before the mask's softmax.
// Scores, softmax and the weighted sum in double. Single-threaded.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "elem.h"
#include "exl/kernels/attention.h"

namespace exl {

void attention_ref(const AttentionParams& p, const float* q, const void* k_cache, const void* v_cache,
                   float* out) {
  const int d = p.head_dim;
  const int group = p.n_kv_heads > 0 ? p.n_heads / p.n_kv_heads : 1;
  std::vector<double> scores;
  std::vector<double> acc(std::size_t(std::max(d, 0)));
  for (int t = 0; t < p.tokens; ++t) {
    const int last = p.past + t;
    const int first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
    for (int h = 0; h < p.n_heads; ++h) {
      const int kvh = h / group;
      const float* qv = q + (std::int64_t(t) * p.n_heads + h) * d;
      scores.assign(std::size_t(last - first + 1), 0.0);
      double mx = -INFINITY;
      for (int j = first; j <= last; ++j) {
        const std::int64_t base = (kv_row(p, j) * p.n_kv_heads + kvh) * d;
        double s = 0.0;
        for (int i = 0; i < d; ++i) s += double(qv[i]) * double(detail::load_elem(k_cache, p.cache_dtype, base + i));
        s *= double(p.scale);
        if (p.softcap > 0.0f) s = double(p.softcap) * std::tanh(s / double(p.softcap));
        scores[j - first] = s;
        mx = std::max(mx, s);
      }
      double denom = 0.0;
      for (double& s : scores) {
        s = std::exp(s - mx);
        denom += s;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int j = first; j <= last; ++j) {
        const std::int64_t base = (kv_row(p, j) * p.n_kv_heads + kvh) * d;
        const double wgt = scores[j - first] / denom;
        for (int i = 0; i < d; ++i) acc[i] += wgt * double(detail::load_elem(v_cache, p.cache_dtype, base + i));
      }
      float* o = out + (std::int64_t(t) * p.n_heads + h) * d;
      for (int i = 0; i < d; ++i) o[i] = float(acc[i]);
    }
  }
}

}  // namespace exl

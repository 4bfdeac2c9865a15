// Fast CPU attention over a quantized (or fp8/fp16) KV cache. Keys/values are streamed through a
// staging tile of `kTile` tokens (dequantized once per tile for all heads, never a full-size copy
// of the cache) and each (query token, head) pair keeps an online softmax: running max, running
// denominator and an fp32 accumulator of head_dim values. Threads split the pairs inside a tile.
// Positions >= past come from the chunk's own fp32 K/V rounded to fp16, as in the reference.
#include <algorithm>
#include <cmath>
#include <vector>

#include "exl/kernels/kv_quant.h"
#include "exl/kernels/threads.h"

namespace exl {
namespace {

constexpr int kTile = 256;

struct PairState {
  float max = -INFINITY;
  float denom = 0.0f;
};

}  // namespace

void attention_kvstore_cpu(const AttentionParams& p, const float* q, const KvStore& k, const KvStore& v,
                           const float* k_new, const float* v_new, float* out) {
  const int d = p.head_dim;
  if (p.tokens <= 0 || p.n_heads <= 0 || p.n_kv_heads <= 0 || d <= 0) return;
  const int group = p.n_heads / p.n_kv_heads;
  const std::size_t row = std::size_t(p.n_kv_heads) * std::size_t(d);
  const int total = p.past + p.tokens;
  const std::int64_t pairs = std::int64_t(p.tokens) * p.n_heads;
  std::vector<PairState> state(static_cast<std::size_t>(pairs));
  std::fill(out, out + pairs * d, 0.0f);
  std::vector<float> kt(std::size_t(kTile) * row), vt(std::size_t(kTile) * row);

  for (int t0 = 0; t0 < total; t0 += kTile) {
    const int t1 = std::min(total, t0 + kTile);
    // Stage keys/values of tokens [t0, t1): the cached prefix from the stores, the chunk from k_new/v_new.
    const int cached_end = std::min(t1, p.past);
    if (t0 < cached_end) {
      kv_read_positions(k, p, t0, cached_end, kt.data());
      kv_read_positions(v, p, t0, cached_end, vt.data());
    }
    for (int t = std::max(t0, p.past); t < t1; ++t) {
      const std::size_t src = std::size_t(t - p.past) * row, dst = std::size_t(t - t0) * row;
      for (std::size_t i = 0; i < row; ++i) {
        kt[dst + i] = round_to_half(k_new[src + i]);
        vt[dst + i] = round_to_half(v_new[src + i]);
      }
    }
    parallel_for(pairs, 1, [&](std::int64_t b, std::int64_t e) {
      float scores[kTile];
      for (std::int64_t pr = b; pr < e; ++pr) {
        const int t = int(pr / p.n_heads), h = int(pr % p.n_heads), kvh = h / group;
        const int last = p.past + t;
        const int first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
        const int j0 = std::max(t0, first), j1 = std::min(t1 - 1, last);
        if (j0 > j1) continue;
        const float* qv = q + pr * d;
        float mx = -INFINITY;
        for (int j = j0; j <= j1; ++j) {
          const float* kr = kt.data() + std::size_t(j - t0) * row + std::size_t(kvh) * std::size_t(d);
          float s = 0.0f;
          for (int i = 0; i < d; ++i) s += qv[i] * kr[i];
          s *= p.scale;
          if (p.softcap > 0.0f) s = p.softcap * std::tanh(s / p.softcap);
          scores[j - j0] = s;
          mx = std::max(mx, s);
        }
        PairState& st = state[std::size_t(pr)];
        float* o = out + pr * d;
        const float new_max = std::max(st.max, mx);
        const float correction = std::exp(st.max - new_max);  // 0 on the first tile (max = -inf)
        st.denom *= correction;
        for (int i = 0; i < d; ++i) o[i] *= correction;
        for (int j = j0; j <= j1; ++j) {
          const float w = std::exp(scores[j - j0] - new_max);
          st.denom += w;
          const float* vr = vt.data() + std::size_t(j - t0) * row + std::size_t(kvh) * std::size_t(d);
          for (int i = 0; i < d; ++i) o[i] += w * vr[i];
        }
        st.max = new_max;
      }
    });
  }
  for (std::int64_t pr = 0; pr < pairs; ++pr) {
    const float inv = 1.0f / state[std::size_t(pr)].denom;
    for (int i = 0; i < d; ++i) out[pr * d + i] *= inv;
  }
}

}  // namespace exl

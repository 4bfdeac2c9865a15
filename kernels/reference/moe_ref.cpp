// Mixture-of-experts routing: softmax over the router's logits, top-k by a partial selection sort
// (k is at most a few dozen), optional renormalisation over the chosen k.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "exl/kernels/moe.h"

namespace exl {

void moe_route_ref(const float* logits, int tokens, int num_experts, int top_k, bool renormalize, std::int32_t* experts,
                   float* weights) {
  std::vector<float> p(static_cast<std::size_t>(num_experts));
  std::vector<char> taken(static_cast<std::size_t>(num_experts));
  for (int t = 0; t < tokens; ++t) {
    const float* row = logits + std::int64_t(t) * num_experts;
    float mx = -std::numeric_limits<float>::infinity();
    for (int e = 0; e < num_experts; ++e)
      if (row[e] > mx) mx = row[e];
    float sum = 0.0f;
    for (int e = 0; e < num_experts; ++e) {
      p[std::size_t(e)] = std::isnan(row[e]) ? -1.0f : std::exp(row[e] - mx);
      sum += std::isnan(row[e]) ? 0.0f : p[std::size_t(e)];
    }
    for (int e = 0; e < num_experts; ++e)
      if (p[std::size_t(e)] >= 0.0f) p[std::size_t(e)] /= sum;
    std::fill(taken.begin(), taken.end(), 0);
    std::int32_t* ex = experts + std::int64_t(t) * top_k;
    float* w = weights + std::int64_t(t) * top_k;
    float chosen = 0.0f;
    for (int j = 0; j < top_k; ++j) {
      int best = -1;
      for (int e = 0; e < num_experts; ++e)  // strict >: among equal values the lowest index wins
        if (!taken[std::size_t(e)] && (best < 0 || p[std::size_t(e)] > p[std::size_t(best)])) best = e;
      taken[std::size_t(best)] = 1;
      ex[j] = best;
      w[j] = std::max(p[std::size_t(best)], 0.0f);
      chosen += w[j];
    }
    if (renormalize && chosen > 0.0f)
      for (int j = 0; j < top_k; ++j) w[j] /= chosen;
  }
}

}  // namespace exl

// Perplexity over non-overlapping windows, as the fixtures define it: each window is evaluated
// from position 0 with a fresh cache and no BOS; the NLL of tokens 1..w-1 of each window given
// the earlier tokens of the same window; ppl = exp(mean NLL).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "exl/backend.h"

namespace exl {

struct PerplexityResult {
  double ppl = 0;
  double mean_nll = 0;
  std::int64_t n_predictions = 0;
  std::vector<double> window_mean_nll;
};

// Uses floor(ids.size() / window) full windows (a shorter tail window is evaluated too when it
// has at least 2 tokens). `max_chunk` bounds each forward. `token_by_token` feeds each token
// alone through the cache (each forward's logits predict the next id), which is how quantized
// caches are measured: a single-chunk forward never reads the quantized cache back.
PerplexityResult perplexity(Backend& backend, std::span<const std::int32_t> ids, int window, int max_chunk,
                            bool token_by_token = false);

// log-softmax of one logits row at `target` (computed in double).
double token_nll(std::span<const float> logits, std::int32_t target);

}  // namespace exl

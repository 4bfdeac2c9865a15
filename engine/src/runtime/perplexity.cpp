#include "exl/perplexity.h"

#include <cmath>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {

double token_nll(std::span<const float> logits, std::int32_t target) {
  double mx = -INFINITY;
  for (float l : logits) mx = std::max(mx, double(l));
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - mx);
  return -(double(logits[std::size_t(target)]) - mx - std::log(sum));
}

PerplexityResult perplexity(Backend& backend, std::span<const std::int32_t> ids, int window, int max_chunk,
                            bool token_by_token) {
  if (window < 2) throw Error(ErrorKind::invalid_argument, "perplexity window must be at least 2 tokens");
  if (window > backend.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "perplexity window " + std::to_string(window) +
                                                 " exceeds the cache length " + std::to_string(backend.cache_capacity()));
  PerplexityResult r;
  const std::size_t vocab = std::size_t(backend.vocab_size());
  std::vector<float> logits;
  double total = 0;
  for (std::size_t start = 0; start + 2 <= ids.size(); start += std::size_t(window)) {
    const std::size_t n = std::min<std::size_t>(std::size_t(window), ids.size() - start);
    backend.truncate_cache(0);
    auto chunk = ids.subspan(start, n);
    double sum = 0;
    if (token_by_token) {
      for (std::size_t t = 0; t + 1 < n; ++t) {
        backend.forward(chunk.subspan(t, 1), LogitsWanted::last, logits);
        sum += token_nll(std::span<const float>(logits.data(), vocab), chunk[t + 1]);
      }
    } else {
      prefill(backend, chunk, max_chunk, LogitsWanted::all, logits);
      for (std::size_t t = 0; t + 1 < n; ++t)
        sum += token_nll(std::span<const float>(logits.data() + t * vocab, vocab), chunk[t + 1]);
    }
    r.window_mean_nll.push_back(sum / double(n - 1));
    total += sum;
    r.n_predictions += std::int64_t(n - 1);
  }
  if (r.n_predictions == 0) throw Error(ErrorKind::invalid_argument, "too few tokens for perplexity");
  r.mean_nll = total / double(r.n_predictions);
  r.ppl = std::exp(r.mean_nll);
  return r;
}

}  // namespace exl

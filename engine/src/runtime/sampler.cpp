// Host-side sampler: temperature, top-k, top-p, min-p over one row of fp32 logits.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exl/generator.h"

namespace exl {

std::int32_t argmax(std::span<const float> logits) {
  std::int32_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[std::size_t(best)]) best = std::int32_t(i);
  return best;
}

Sampler::Sampler(SamplerSettings s) : s_(s), rng_(s.seed) {}

std::int32_t Sampler::sample(std::span<const float> logits) {
  if (s_.greedy || s_.temperature <= 0.0f || s_.top_k == 1) return argmax(logits);
  work_.clear();
  work_.reserve(logits.size());
  const float inv_t = 1.0f / s_.temperature;
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (std::isfinite(logits[i])) work_.emplace_back(logits[i] * inv_t, std::int32_t(i));
  if (work_.empty()) return argmax(logits);
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  std::size_t keep = work_.size();
  if (s_.top_k > 0 && std::size_t(s_.top_k) < keep) {
    keep = std::size_t(s_.top_k);
    std::partial_sort(work_.begin(), work_.begin() + std::ptrdiff_t(keep), work_.end(), by_logit);
  } else {
    std::sort(work_.begin(), work_.end(), by_logit);
  }
  work_.resize(keep);
  // softmax over the kept candidates (sorted descending)
  const float mx = work_.front().first;
  double total = 0;
  for (auto& [l, id] : work_) {
    l = std::exp(l - mx);
    total += l;
  }
  for (auto& [p, id] : work_) p = float(p / total);
  if (s_.top_p < 1.0f) {
    double cum = 0;
    std::size_t n = 0;
    while (n < work_.size()) {
      cum += work_[n].first;
      ++n;
      if (cum >= s_.top_p) break;
    }
    work_.resize(std::max<std::size_t>(n, 1));
  }
  if (s_.min_p > 0.0f) {
    const float floor = work_.front().first * s_.min_p;
    std::size_t n = 1;
    while (n < work_.size() && work_[n].first >= floor) ++n;
    work_.resize(n);
  }
  double sum = 0;
  for (const auto& [p, id] : work_) sum += p;
  std::uniform_real_distribution<double> u(0.0, sum);
  double r = u(rng_);
  for (const auto& [p, id] : work_) {
    r -= p;
    if (r <= 0) return id;
  }
  return work_.back().second;
}

}  // namespace exl

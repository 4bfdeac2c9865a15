// Packs a Sampler's settings and one step's context into the flat form a device sampler takes
// (exl_cuda_sampler in kernels/cuda/module_api.h): the distinct ids of the penalty window with
// their occurrence counts, the banned ids, the bias entries sorted by id (stable, so duplicates
// keep their order). Header-only and CUDA-free: the proxy uses it, CPU tests check it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {

struct DeviceSamplerPack {
  bool greedy = false;
  float temperature = 1.0f;
  int top_k = 0;
  float top_p = 1.0f, min_p = 0.0f, typical = 0.0f;
  float repetition_penalty = 1.0f, frequency_penalty = 0.0f, presence_penalty = 0.0f;
  int vocab_limit = 0;
  std::vector<std::int32_t> penalty_ids, penalty_counts;  // distinct ids, newest first
  std::vector<std::int32_t> banned;
  std::vector<std::int32_t> bias_ids;  // sorted by id, stable
  std::vector<float> bias_values;
};

class DeviceSamplerPacker {
 public:
  // Fills `out` for `s` and `context` (prompt + output so far) on a vocabulary of `vocab` ids.
  // Throws Error(invalid_argument) for a bias id >= vocab, as the host sampler does.
  void pack(const SamplerSettings& s, std::span<const std::int32_t> context, int vocab, DeviceSamplerPack& out) {
    out.greedy = s.is_greedy();
    out.temperature = s.temperature;
    out.top_k = s.top_k;
    out.top_p = s.top_p;
    out.min_p = s.min_p;
    out.typical = s.typical;
    out.repetition_penalty = s.repetition_penalty;
    out.frequency_penalty = s.frequency_penalty;
    out.presence_penalty = s.presence_penalty;
    out.vocab_limit = s.vocab_limit;
    out.penalty_ids.clear();
    out.penalty_counts.clear();
    const bool pen = s.penalty_range != 0 &&
                     (s.repetition_penalty != 1.0f || s.frequency_penalty != 0.0f || s.presence_penalty != 0.0f);
    if (pen && !context.empty()) {
      const std::size_t n = s.penalty_range < 0 ? context.size()
                                                : std::min(context.size(), std::size_t(s.penalty_range));
      const auto window = context.subspan(context.size() - n);
      slot_.resize(std::size_t(vocab), -1);
      for (auto it = window.rbegin(); it != window.rend(); ++it) {
        const std::int32_t id = *it;
        if (id < 0 || id >= vocab) continue;
        std::int32_t& k = slot_[std::size_t(id)];
        if (k < 0) {
          k = std::int32_t(out.penalty_ids.size());
          out.penalty_ids.push_back(id);
          out.penalty_counts.push_back(0);
        }
        ++out.penalty_counts[std::size_t(k)];
      }
      for (std::int32_t id : out.penalty_ids) slot_[std::size_t(id)] = -1;
    }
    out.banned.clear();
    for (std::int32_t id : s.banned_tokens)
      if (id >= 0 && id < vocab) out.banned.push_back(id);
    order_.resize(s.logit_bias.size());
    std::iota(order_.begin(), order_.end(), std::size_t(0));
    for (const auto& [id, b] : s.logit_bias)
      if (id < 0 || id >= vocab)
        throw Error(ErrorKind::invalid_argument, "sampler setting logit_bias names token " + std::to_string(id) +
                                                     " beyond the vocabulary of " + std::to_string(vocab));
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return s.logit_bias[a].first < s.logit_bias[b].first; });
    out.bias_ids.clear();
    out.bias_values.clear();
    for (std::size_t i : order_) {
      out.bias_ids.push_back(s.logit_bias[i].first);
      out.bias_values.push_back(s.logit_bias[i].second);
    }
  }

 private:
  std::vector<std::int32_t> slot_;  // id -> index in penalty_ids during a pack (-1 = none)
  std::vector<std::size_t> order_;
};

// Whether EXL_CUDA_DEVICE_SAMPLER leaves device sampling on (unset or anything but "0").
inline bool device_sampler_enabled(const char* env_value) {
  return !(env_value && std::string(env_value) == "0");
}

}  // namespace exl

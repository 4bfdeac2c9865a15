// Generation over a Backend: chunked prefill, the decode loop, sampling and stop conditions.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "exl/backend.h"
#include "exl/tokenizer.h"

namespace exl {

// Sampling settings. Order of application (fixed): temperature -> top-k -> top-p -> min-p ->
// draw. `greedy` (or temperature 0) takes the arg-max and ignores the rest.
struct SamplerSettings {
  bool greedy = false;
  float temperature = 1.0f;
  int top_k = 0;         // 0 = off
  float top_p = 1.0f;    // 1 = off
  float min_p = 0.0f;    // 0 = off
  std::uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(SamplerSettings s);
  // Picks the next id from one row of logits (vocab entries). Ties in greedy mode go to the lowest id.
  std::int32_t sample(std::span<const float> logits);
  const SamplerSettings& settings() const { return s_; }

 private:
  SamplerSettings s_;
  std::mt19937_64 rng_;
  std::vector<std::pair<float, std::int32_t>> work_;
};

std::int32_t argmax(std::span<const float> logits);

struct GenerateOptions {
  int max_new_tokens = 128;
  bool ignore_eos = false;          // keep generating past EOS
  std::vector<std::int32_t> stop_ids;  // in addition to the tokenizer's EOS ids
  SamplerSettings sampler;
  int max_chunk_size = 2048;
};

enum class StopReason { max_tokens, eos, cancelled, cache_full };

struct GenerateResult {
  std::vector<std::int32_t> ids;  // new ids (an EOS that stopped generation is not included)
  std::string text;
  int prompt_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  int decoded_tokens = 0;          // tokens produced by decode steps (excludes the first, from prefill)
  StopReason stop = StopReason::max_tokens;
  double prefill_tokens_per_s() const { return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0; }
  double decode_tokens_per_s() const { return decode_seconds > 0 ? decoded_tokens / decode_seconds : 0; }
};

// Runs `ids` through the backend in chunks of at most `max_chunk`, returning the logits asked
// for by `wanted` of the last chunk (`all`: every position of every chunk, concatenated).
void prefill(Backend& backend, std::span<const std::int32_t> ids, int max_chunk, LogitsWanted wanted,
             std::vector<float>& logits);

// Generates from a fresh cache (the backend's cache is reset to length 0 first).
// `on_token` receives each new id as it is produced; `stop` cancels between steps.
GenerateResult generate(Backend& backend, const Tokenizer* tokenizer, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options,
                        const std::function<void(std::int32_t)>& on_token = {}, std::stop_token stop = {});

}  // namespace exl

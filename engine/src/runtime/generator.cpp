// Chunked prefill and the decode loop over any Backend.
#include "exl/generator.h"

#include <algorithm>
#include <chrono>

#include "exl/error.h"

namespace exl {

void prefill(Backend& backend, std::span<const std::int32_t> ids, int max_chunk, LogitsWanted wanted,
             std::vector<float>& logits) {
  if (max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "max_chunk_size must be positive");
  std::vector<float> chunk_logits;
  logits.clear();
  for (std::size_t start = 0; start < ids.size(); start += std::size_t(max_chunk)) {
    const std::size_t n = std::min<std::size_t>(std::size_t(max_chunk), ids.size() - start);
    const bool last = start + n == ids.size();
    const LogitsWanted w = wanted == LogitsWanted::all ? LogitsWanted::all : (last ? wanted : LogitsWanted::none);
    backend.forward(ids.subspan(start, n), w, chunk_logits);
    if (w == LogitsWanted::all)
      logits.insert(logits.end(), chunk_logits.begin(), chunk_logits.end());
    else if (w == LogitsWanted::last)
      logits = chunk_logits;
  }
}

GenerateResult generate(Backend& backend, const Tokenizer* tokenizer, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options, const std::function<void(std::int32_t)>& on_token,
                        std::stop_token stop) {
  using clock = std::chrono::steady_clock;
  if (prompt.empty()) throw Error(ErrorKind::invalid_argument, "the prompt is empty (no tokens)");
  GenerateResult r;
  r.prompt_tokens = int(prompt.size());
  backend.truncate_cache(0);
  if (int(prompt.size()) + options.max_new_tokens > backend.cache_capacity() + 1 &&
      int(prompt.size()) >= backend.cache_capacity())
    throw Error(ErrorKind::invalid_argument, "the prompt (" + std::to_string(prompt.size()) +
                                                 " tokens) does not fit the context of " +
                                                 std::to_string(backend.cache_capacity()));
  std::vector<std::int32_t> stops = options.stop_ids;
  if (tokenizer && !options.ignore_eos)
    for (std::int32_t e : tokenizer->eos_ids()) stops.push_back(e);

  Sampler sampler(options.sampler);
  std::vector<float> logits;
  const auto t0 = clock::now();
  prefill(backend, prompt, options.max_chunk_size, LogitsWanted::last, logits);
  const auto t1 = clock::now();
  r.prefill_seconds = std::chrono::duration<double>(t1 - t0).count();

  const int vocab = backend.vocab_size();
  auto t_decode = clock::now();
  for (int i = 0; i < options.max_new_tokens; ++i) {
    if (stop.stop_requested()) {
      r.stop = StopReason::cancelled;
      break;
    }
    const std::int32_t id = sampler.sample(std::span<const float>(logits.data(), std::size_t(vocab)));
    if (std::find(stops.begin(), stops.end(), id) != stops.end()) {
      r.stop = StopReason::eos;
      break;
    }
    r.ids.push_back(id);
    if (on_token) on_token(id);
    if (i + 1 == options.max_new_tokens) break;
    if (backend.cache_length() >= backend.cache_capacity()) {
      r.stop = StopReason::cache_full;
      break;
    }
    if (r.decoded_tokens == 0) t_decode = clock::now();
    backend.forward(std::span<const std::int32_t>(&r.ids.back(), 1), LogitsWanted::last, logits);
    ++r.decoded_tokens;
  }
  if (r.decoded_tokens > 0) r.decode_seconds = std::chrono::duration<double>(clock::now() - t_decode).count();
  if (tokenizer) r.text = tokenizer->decode(r.ids, false);
  return r;
}

}  // namespace exl

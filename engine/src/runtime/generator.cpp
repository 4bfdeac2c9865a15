// Chunked prefill and the entry points of generation (the decode loop is in speculative.cpp).
#include "exl/generator.h"

#include <algorithm>

#include "exl/error.h"

namespace exl {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::max_tokens: return "max_new_tokens";
    case StopReason::eos: return "stop_token";
    case StopReason::cancelled: return "cancelled";
    case StopReason::cache_full: return "cache_full";
    case StopReason::stop_string: return "stop_string";
  }
  return "unknown";
}

std::size_t prefill(Backend& backend, std::span<const std::int32_t> ids, int max_chunk, LogitsWanted wanted,
                    std::vector<float>& logits, std::stop_token stop) {
  if (max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "max_chunk_size must be positive");
  std::vector<float> chunk_logits;
  logits.clear();
  for (std::size_t start = 0; start < ids.size(); start += std::size_t(max_chunk)) {
    if (stop.stop_requested()) return start;
    const std::size_t n = std::min<std::size_t>(std::size_t(max_chunk), ids.size() - start);
    const bool last = start + n == ids.size();
    const LogitsWanted w = wanted == LogitsWanted::all ? LogitsWanted::all : (last ? wanted : LogitsWanted::none);
    backend.forward(ids.subspan(start, n), w, chunk_logits);
    if (w == LogitsWanted::all)
      logits.insert(logits.end(), chunk_logits.begin(), chunk_logits.end());
    else if (w == LogitsWanted::last)
      logits = chunk_logits;
  }
  return ids.size();
}

GenerateResult generate(Backend& backend, const Tokenizer* tokenizer, std::span<const std::int32_t> prompt,
                        const GenerateOptions& options, const std::function<void(std::int32_t)>& on_token,
                        std::stop_token stop) {
  // Non-owning shared_ptr: the caller keeps the tokenizer alive for the call.
  std::shared_ptr<const Tokenizer> tok(tokenizer, [](const Tokenizer*) {});
  if (!tokenizer) tok.reset();
  TokenCallback cb;
  if (on_token) cb = [&on_token](const TokenEvent& e) {
    if (e.id >= 0) on_token(e.id);
  };
  return generate_stream(backend, tok, prompt, options, cb, stop);
}

}  // namespace exl

// Streamed text with stop strings matched across token boundaries (spec §9.5, steps 4 and 6).
#include <algorithm>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {

std::size_t partial_match_tail(std::string_view text, std::string_view s) {
  const std::size_t longest = std::min(text.size(), s.size() - (s.empty() ? 0 : 1));
  for (std::size_t n = longest; n > 0; --n)
    if (text.substr(text.size() - n) == s.substr(0, n)) return n;
  return 0;
}

TextStream::TextStream(std::shared_ptr<const Tokenizer> tokenizer, std::vector<std::string> stop_strings,
                       bool skip_special)
    : decoder_((tokenizer ? tokenizer : throw Error(ErrorKind::invalid_argument, "stop strings need a tokenizer")),
               skip_special),
      stops_(std::move(stop_strings)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string TextStream::release() {
  // A full match of any stop string: emit what precedes the earliest one and stop.
  std::size_t cut = std::string::npos;
  for (const auto& s : stops_) {
    const std::size_t at = held_.find(s);
    if (at != std::string::npos && at < cut) {
      cut = at;
      matched_ = s;
    }
  }
  if (cut != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, cut);
    held_.clear();
    return out;
  }
  // Hold the longest tail that may still grow into a stop string.
  std::size_t hold = 0;
  for (const auto& s : stops_) hold = std::max(hold, partial_match_tail(held_, s));
  std::string out = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return out;
}

std::string TextStream::push(std::int32_t id) {
  if (stopped_) return {};
  held_ += decoder_.push(id);
  return release();
}

std::string TextStream::flush() {
  if (stopped_) return {};
  held_ += decoder_.flush();
  std::string out = release();
  if (stopped_) return out;
  out += held_;
  held_.clear();
  return out;
}

}  // namespace exl

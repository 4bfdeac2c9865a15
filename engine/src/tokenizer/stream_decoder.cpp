// Streaming decode for chat output. Windowed diff decoding (as in HF text-generation-inference):
// the text of ids_[prefix_, end) minus the text of ids_[prefix_, read_) is the new text. Starting
// the window one emitted token back keeps decoders that treat the first token specially
// (Metaspace drops its leading space) correct, and text ending in U+FFFD is held back because the
// next id may complete the character.
#include "exl/error.h"
#include "exl/tokenizer.h"
#include "tokenizer/utf8.h"

namespace exl {

namespace {
// A UTF-8 character spans at most 4 bytes and every byte-carrying token has at least one, so once
// this many ids are held, all but the last 3 can be emitted without changing the result.
constexpr std::size_t kMaxHeld = 16;
constexpr std::size_t kCompactAt = 64;
}  // namespace

StreamDecoder::StreamDecoder(std::shared_ptr<const Tokenizer> tok, bool skip_special)
    : tok_(std::move(tok)), skip_special_(skip_special) {
  if (!tok_) throw Error(ErrorKind::invalid_argument, "StreamDecoder needs a tokenizer");
}

std::string StreamDecoder::decode_range(std::size_t begin, std::size_t end) const {
  return tok_->decode(std::span<const std::int32_t>(ids_.data() + begin, end - begin), skip_special_);
}

void StreamDecoder::advance(std::size_t new_read) {
  prefix_ = read_;
  read_ = new_read;
  if (prefix_ >= kCompactAt) {  // drop ids that no window will look at again
    ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_));
    read_ -= prefix_;
    prefix_ = 0;
  }
}

std::string StreamDecoder::push(std::int32_t id) {
  ids_.push_back(id);
  const std::string prev = decode_range(prefix_, read_);
  const std::string full = decode_range(prefix_, ids_.size());
  if (full.size() > prev.size() && full.compare(0, prev.size(), prev) == 0 && !tok::ends_with_replacement(full)) {
    std::string out = full.substr(prev.size());
    advance(ids_.size());
    return out;
  }
  if (held() > kMaxHeld) {
    const std::size_t cut = ids_.size() - 3;
    const std::string part = decode_range(prefix_, cut);
    std::string out;
    if (part.size() >= prev.size() && part.compare(0, prev.size(), prev) == 0) out = part.substr(prev.size());
    else out = tok::utf8_lossy(part.substr(std::min(prev.size(), part.size())));
    advance(cut);
    return out;
  }
  return {};
}

std::string StreamDecoder::flush() {
  if (read_ == ids_.size()) return {};
  const std::string prev = decode_range(prefix_, read_);
  const std::string full = decode_range(prefix_, ids_.size());
  std::string out;
  if (full.size() >= prev.size() && full.compare(0, prev.size(), prev) == 0) out = full.substr(prev.size());
  else out = tok::utf8_lossy(full.substr(std::min(prev.size(), full.size())));
  advance(ids_.size());
  return out;
}

}  // namespace exl

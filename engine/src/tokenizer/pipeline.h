// The text-processing stages of tokenizer.json around the BPE model: normalizers (on each text
// segment between added tokens), pre-tokenizers (split a segment into words) and decoders (turn
// token strings back into text). Each stage is parsed once from JSON; unknown or unsupported
// types are rejected with Error(tokenizer) naming the field.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_util.h"

namespace exl::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void apply(std::string& text) const = 0;
};

// A word produced by pre-tokenization. at_start: the word begins at offset 0 of the original
// input (Metaspace's prepend_scheme "first" only prepends there).
struct Piece {
  std::string text;
  bool at_start = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void apply(std::vector<Piece>& pieces) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // HF decode_chain: token strings in, text chunks out (joined by the caller).
  virtual void apply(std::vector<std::string>& tokens) const = 0;
};

// Null JSON gives nullptr (stage absent). `path` is the field name, e.g. "normalizer".
std::unique_ptr<Normalizer> parse_normalizer(const JsonCtx& c, const json& j, const std::string& path);
std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const JsonCtx& c, const json& j, const std::string& path);
std::unique_ptr<Decoder> parse_decoder(const JsonCtx& c, const json& j, const std::string& path);

// Shared by Split-like stages: how matched delimiters are kept (HF SplitDelimiterBehavior).
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };
struct Segment {
  std::size_t begin, end;
  bool is_match;
};
// Applies the behaviour to segments covering a piece; appends the resulting non-empty pieces.
void split_segments(const Piece& piece, const std::vector<Segment>& segs, SplitBehavior behavior,
                    std::vector<Piece>& out);

}  // namespace exl::tok

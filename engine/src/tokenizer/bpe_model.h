// The BPE model of tokenizer.json: vocabulary, ranked merges, byte fallback (<0xNN> pieces,
// SentencePiece style), unk handling, continuing_subword_prefix / end_of_word_suffix and
// ignore_merges. Words are merged by rank (lowest first, leftmost on ties) with a heap, as HF
// `tokenizers` does; results are cached per word.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/json_util.h"

namespace exl::tok {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using VocabMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // Parses the "model" object (path "model"). Throws Error(tokenizer) on malformed input.
  BpeModel(const JsonCtx& c, const json& model);

  // Appends the ids of one pre-tokenized word.
  void tokenize(std::string_view word, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // Empty view for ids outside the vocabulary.
  std::string_view id_to_token(std::int32_t id) const;
  // 1 + the largest vocabulary id.
  std::int32_t size() const { return static_cast<std::int32_t>(id_to_token_.size()); }
  bool byte_fallback() const { return byte_fallback_; }
  std::optional<std::int32_t> unk_id() const { return unk_id_; }

 private:
  void tokenize_piece(std::string_view word, std::vector<std::int32_t>& out) const;
  void merge_word(std::string_view word, std::vector<std::int32_t>& out) const;
  std::uint64_t pair_key(std::int32_t a, std::int32_t b) const {
    return (std::uint64_t(std::uint32_t(a)) << 32) | std::uint32_t(b);
  }
  struct Merge { std::int32_t rank; std::int32_t new_id; };

  VocabMap vocab_;
  std::vector<std::string> id_to_token_;
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::optional<std::int32_t> unk_id_;
  std::string continuing_prefix_, end_suffix_;
  bool byte_fallback_ = false, fuse_unk_ = false, ignore_merges_ = false;
  // SentencePiece-style vocabularies keep "▁" only at the start of a piece (or in runs of "▁"),
  // so no merge crosses the point before a "▁" that follows another character: long words (the
  // whole text, when there is no pre-tokenizer) are then merged piecewise, with the same result.
  bool split_at_metaspace_ = false;
  std::int32_t byte_ids_[256];  // <0xNN> ids for byte fallback, -1 if missing

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace exl::tok

// The tokenizer.json implementation of exl::Tokenizer: added tokens (special and not), the
// normalizer / pre-tokenizer / BPE model / decoder pipeline, and the control ids gathered from
// the model folder's config files (spec §10.3).
#pragma once
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exl/tokenizer.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/pipeline.h"

namespace exl::tok {

struct AddedToken {
  std::string content;
  std::string pattern;  // text matched in the input: content, or normalizer(content) when normalized
  std::int32_t id = 0;
  bool special = false, lstrip = false, rstrip = false, single_word = false, normalized = false;
};

// Finds added tokens in text, leftmost-longest (HF uses Aho-Corasick LeftmostLongest).
class AddedMatcher {
 public:
  void add(const AddedToken* t);
  void finish();
  struct Span {
    std::size_t begin, end;
    const AddedToken* token;  // nullptr: plain text
  };
  // Splits text into plain spans and added-token spans. Special tokens are only split out when
  // parse_special; otherwise their text is skipped over and stays plain (as HF does).
  std::vector<Span> split(std::string_view text, bool parse_special) const;
  bool empty() const { return count_ == 0; }

 private:
  std::array<std::vector<const AddedToken*>, 256> by_first_{};  // longest first
  std::size_t count_ = 0;
};

struct ControlIds {
  std::optional<std::int32_t> bos, pad;
  std::vector<std::int32_t> eos;
  bool add_bos = false;
  std::string chat_template;
};

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(const JsonCtx& c, const json& root);
  void set_controls(ControlIds ids) { ctl_ = std::move(ids); }
  // Post-processor view: the special token ids the single-sequence template puts before $A.
  const std::vector<std::int32_t>& template_prefix() const { return template_prefix_; }
  std::optional<std::int32_t> added_id(std::string_view content) const;

  std::vector<std::int32_t> encode(std::string_view text, bool parse_special, bool add_bos) const override;
  std::string decode(std::span<const std::int32_t> ids, bool skip_special) const override;
  std::string piece(std::int32_t id) const override;
  std::optional<std::int32_t> piece_to_id(std::string_view piece) const override;
  bool is_special(std::int32_t id) const override;
  int vocab_size() const override { return vocab_size_; }
  std::optional<std::int32_t> bos_id() const override { return ctl_.bos; }
  std::vector<std::int32_t> eos_ids() const override { return ctl_.eos; }
  std::optional<std::int32_t> pad_id() const override { return ctl_.pad; }
  bool add_bos_by_default() const override { return ctl_.add_bos; }
  std::string chat_template() const override { return ctl_.chat_template; }

 private:
  void parse_added_tokens(const JsonCtx& c, const json& root);
  void parse_post_processor(const JsonCtx& c, const json& j, const std::string& path);
  void encode_plain(std::string_view text, bool at_start, bool parse_special, std::vector<std::int32_t>& out) const;

  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<std::unique_ptr<AddedToken>> added_;
  std::unordered_map<std::int32_t, const AddedToken*> added_by_id_;
  VocabMap added_by_content_;
  AddedMatcher raw_matcher_, normalized_matcher_;
  std::vector<std::int32_t> template_prefix_;
  int vocab_size_ = 0;
  ControlIds ctl_;
};

}  // namespace exl::tok

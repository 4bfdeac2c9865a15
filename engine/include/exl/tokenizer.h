// Tokenizer from tokenizer.json (HF `tokenizers` format): byte-level BPE (GPT-2 / Llama-3 style,
// pre-tokenizer regex through PCRE2) and SentencePiece-style BPE (Metaspace, byte fallback).
// Control ids come from config.json / tokenizer_config.json / generation_config.json (spec §10).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace exl {

class Tokenizer {
 public:
  // Reads dir/tokenizer.json (required) and, when present, tokenizer_config.json, config.json and
  // generation_config.json. Throws Error(tokenizer/io/config) naming the file and field.
  static std::shared_ptr<const Tokenizer> from_dir(const std::filesystem::path& dir);
  // From in-memory JSON texts (config texts may be empty). Used by tests and the fuzzer.
  static std::shared_ptr<const Tokenizer> from_json(std::string_view tokenizer_json,
                                                    std::string_view tokenizer_config_json = {},
                                                    std::string_view config_json = {},
                                                    std::string_view generation_config_json = {},
                                                    const std::string& display_name = "tokenizer.json");
  virtual ~Tokenizer() = default;

  // parse_special: special tokens written in the text become their ids; otherwise they are
  // encoded as plain text. add_bos: prepend BOS (if the tokenizer has one).
  virtual std::vector<std::int32_t> encode(std::string_view text, bool parse_special = false,
                                           bool add_bos = false) const = 0;
  // skip_special: special tokens vanish; otherwise rendered as their text.
  virtual std::string decode(std::span<const std::int32_t> ids, bool skip_special = false) const = 0;
  // Token string as stored in the vocabulary (e.g. "Ġthe"); empty for unknown ids.
  virtual std::string piece(std::int32_t id) const = 0;
  virtual std::optional<std::int32_t> piece_to_id(std::string_view piece) const = 0;
  virtual bool is_special(std::int32_t id) const = 0;

  virtual int vocab_size() const = 0;  // 1 + the largest id of the vocabulary and added tokens
  virtual std::optional<std::int32_t> bos_id() const = 0;
  virtual std::vector<std::int32_t> eos_ids() const = 0;  // every EOS the model declares
  virtual std::optional<std::int32_t> pad_id() const = 0;
  // Whether the model's own config asks for BOS at the start of a prompt.
  virtual bool add_bos_by_default() const = 0;
  // Chat template string from tokenizer_config.json ("" if none).
  virtual std::string chat_template() const = 0;
};

// Incremental decoder for streaming: push ids one by one and get the new text; never emits half
// a UTF-8 character (incomplete sequences are held until completed or flushed). The text pushed
// out, concatenated, equals decode() of all ids. Each push decodes only a short window of recent
// ids (the last emitted token for context plus those held), so the cost per id is O(1) amortised.
class StreamDecoder {
 public:
  explicit StreamDecoder(std::shared_ptr<const Tokenizer> tok, bool skip_special = true);
  std::string push(std::int32_t id);
  std::string flush();  // whatever is held, with invalid bytes as U+FFFD
  // Ids pushed but whose text has not been emitted yet.
  std::size_t held() const { return ids_.size() - read_; }

 private:
  std::string decode_range(std::size_t begin, std::size_t end) const;
  void advance(std::size_t new_read);

  std::shared_ptr<const Tokenizer> tok_;
  bool skip_special_;
  std::vector<std::int32_t> ids_;  // window: ids_[prefix_, read_) emitted context, [read_, end) held
  std::size_t prefix_ = 0;
  std::size_t read_ = 0;
};

}  // namespace exl

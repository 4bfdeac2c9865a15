// A conversation turned into prompt ids with the model's chat template, the way transformers'
// apply_chat_template(tokenize=True) does it: render with bos_token / eos_token set to the
// tokenizer's pieces, then encode the text with special tokens recognised and no extra BOS (the
// template writes BOS itself where the model wants it). Used by `exl generate --chat`, `exl chat`
// and the server's /v1/chat/completions.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exl/chat_template.h"
#include "exl/tokenizer.h"

namespace exl {

struct ChatPromptOptions {
  // A model without a chat template gets ChatML (as the app and `exl chat` do) instead of an error.
  bool chatml_fallback = false;
  // Put BOS first when the model asks for it by default and the template did not write it.
  bool ensure_bos = false;
};

class ChatPrompt {
 public:
  // `template_source` empty: the tokenizer's own chat template. Throws Error(unsupported) when
  // there is none (and no fallback is asked for), Error(format) when the template does not compile.
  explicit ChatPrompt(std::shared_ptr<const Tokenizer> tokenizer, std::string template_source = {},
                      ChatPromptOptions options = {});

  // The built-in ChatML template.
  static const char* chatml();
  const std::string& source() const { return source_; }
  bool uses_fallback() const { return fallback_; }
  // Special end-of-turn tokens the template writes (<|im_end|>, <|eot_id|>, ...): a reply stops at
  // them as at EOS.
  std::vector<std::int32_t> end_of_turn_ids() const;

  // `messages`: [{"role": ..., "content": ...}, ...]. Throws TemplateRaised / Error(format) as
  // ChatTemplate::render_chat does.
  std::string text(const nlohmann::ordered_json& messages, bool add_generation_prompt = true) const;
  std::vector<std::int32_t> ids(const nlohmann::ordered_json& messages, bool add_generation_prompt = true) const;

  // One user turn (after an optional system prompt) as a messages array.
  static nlohmann::ordered_json single_turn(const std::string& user, const std::string& system = {});

 private:
  std::shared_ptr<const Tokenizer> tokenizer_;
  ChatPromptOptions options_;
  bool fallback_ = false;
  std::string source_;
  ChatTemplate template_;
  std::optional<std::string> bos_, eos_;
};

}  // namespace exl

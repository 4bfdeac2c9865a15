// Chat templates: the Jinja template a model ships (tokenizer_config.json "chat_template", GGUF
// metadata) rendered exactly as Python's Jinja2 renders it in transformers' environment
// (trim_blocks, lstrip_blocks, loop controls, {% generation %}, tojson without HTML escaping,
// raise_exception, strftime_now). Qt-free; compile once, render many times (const, thread-safe).
#pragma once
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "exl/error.h"

namespace exl {

// raise_exception("...") called by the template (e.g. "Conversation roles must alternate
// user/assistant/user/assistant/..."): what() is exactly the template's message, so it can be
// shown to the user as is. Kind: invalid_argument (the conversation did not suit the template).
class TemplateRaised : public Error {
 public:
  explicit TemplateRaised(const std::string& message, int line = 0, int column = 0)
      : Error(ErrorKind::invalid_argument, message), line_(line), column_(column) {}
  // Where in the template raise_exception was called (1-based; 0 when unknown).
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_ = 0, column_ = 0;
};

struct ChatTemplateOptions {
  // The time strftime_now() reads (naive local time); unset: the current local time.
  std::optional<std::tm> now;
  size_t max_output_bytes = size_t(64) << 20;  // rendered text and any string built on the way
  uint64_t max_steps = 20'000'000;             // evaluated nodes + loop iterations per render
  int max_call_depth = 100;                    // nested macro calls
};

class ChatTemplate {
 public:
  // Compiles the template. Throws exl::Error(ErrorKind::format) "template syntax error at line L,
  // column C: ..." for malformed templates (also for nesting deeper than the parser accepts).
  explicit ChatTemplate(const std::string& source, ChatTemplateOptions options = {});
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // Renders with `context`'s keys as template variables (objects keep their key order).
  // Throws TemplateRaised for raise_exception, exl::Error(ErrorKind::format) "template error at
  // line L, column C: ..." for other failures (undefined.attr, type errors, limits reached).
  std::string render(const nlohmann::ordered_json& context) const;
  // Same; nlohmann::json objects are sorted by key, so prefer ordered_json when order matters.
  std::string render(const nlohmann::json& context) const;

  // transformers' apply_chat_template scope: messages, tools = none, documents = none,
  // add_generation_prompt, bos_token/eos_token (left undefined when nullopt), then `extra`'s keys
  // (tools, documents, enable_thinking, date_string, ...).
  std::string render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                          const std::optional<std::string>& bos_token,
                          const std::optional<std::string>& eos_token,
                          const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;

  const ChatTemplateOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace exl

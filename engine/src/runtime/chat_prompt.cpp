#include "exl/chat_prompt.h"

#include "exl/error.h"

namespace exl {
namespace {

const char* const kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// End-of-turn markers of common templates.
const char* const kEndOfTurn[] = {"<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"};

}  // namespace

const char* ChatPrompt::chatml() { return kChatMl; }

ChatPrompt::ChatPrompt(std::shared_ptr<const Tokenizer> tokenizer, std::string template_source, ChatPromptOptions options)
    : tokenizer_(std::move(tokenizer)),
      options_(options),
      fallback_(template_source.empty() && tokenizer_->chat_template().empty()),
      source_([&] {
        if (!template_source.empty()) return template_source;
        if (!fallback_) return tokenizer_->chat_template();
        if (!options.chatml_fallback)
          throw Error(ErrorKind::unsupported,
                      "the model has no chat template (tokenizer_config.json \"chat_template\" or GGUF metadata)");
        return std::string(kChatMl);
      }()),
      template_(source_) {
  if (auto id = tokenizer_->bos_id()) bos_ = tokenizer_->piece(*id);
  if (auto eos = tokenizer_->eos_ids(); !eos.empty()) eos_ = tokenizer_->piece(eos.front());
}

std::string ChatPrompt::text(const nlohmann::ordered_json& messages, bool add_generation_prompt) const {
  return template_.render_chat(messages, add_generation_prompt, bos_, eos_);
}

std::vector<std::int32_t> ChatPrompt::ids(const nlohmann::ordered_json& messages, bool add_generation_prompt) const {
  std::vector<std::int32_t> ids = tokenizer_->encode(text(messages, add_generation_prompt), true, false);
  const auto bos = tokenizer_->bos_id();
  if (options_.ensure_bos && bos && tokenizer_->add_bos_by_default() && (ids.empty() || ids.front() != *bos))
    ids.insert(ids.begin(), *bos);
  return ids;
}

std::vector<std::int32_t> ChatPrompt::end_of_turn_ids() const {
  std::vector<std::int32_t> out;
  for (const char* marker : kEndOfTurn)
    if (auto id = tokenizer_->piece_to_id(marker); id && tokenizer_->is_special(*id) && source_.find(marker) != std::string::npos)
      out.push_back(*id);
  return out;
}

nlohmann::ordered_json ChatPrompt::single_turn(const std::string& user, const std::string& system) {
  nlohmann::ordered_json m = nlohmann::ordered_json::array();
  if (!system.empty()) m.push_back({{"role", "system"}, {"content", system}});
  m.push_back({{"role", "user"}, {"content", user}});
  return m;
}

}  // namespace exl

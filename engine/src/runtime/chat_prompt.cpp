#include "exl/chat_prompt.h"

#include "exl/error.h"

namespace exl {
namespace {

std::string template_of(const Tokenizer& tokenizer, std::string source) {
  if (source.empty()) source = tokenizer.chat_template();
  if (source.empty())
    throw Error(ErrorKind::unsupported,
                "the model has no chat template (tokenizer_config.json \"chat_template\" or GGUF metadata)");
  return source;
}

}  // namespace

ChatPrompt::ChatPrompt(std::shared_ptr<const Tokenizer> tokenizer, std::string template_source)
    : tokenizer_(std::move(tokenizer)),
      template_(template_of(*tokenizer_, std::move(template_source))) {
  if (auto id = tokenizer_->bos_id()) bos_ = tokenizer_->piece(*id);
  if (auto eos = tokenizer_->eos_ids(); !eos.empty()) eos_ = tokenizer_->piece(eos.front());
}

std::string ChatPrompt::text(const nlohmann::ordered_json& messages, bool add_generation_prompt) const {
  return template_.render_chat(messages, add_generation_prompt, bos_, eos_);
}

std::vector<std::int32_t> ChatPrompt::ids(const nlohmann::ordered_json& messages, bool add_generation_prompt) const {
  return tokenizer_->encode(text(messages, add_generation_prompt), true, false);
}

nlohmann::ordered_json ChatPrompt::single_turn(const std::string& user, const std::string& system) {
  nlohmann::ordered_json m = nlohmann::ordered_json::array();
  if (!system.empty()) m.push_back({{"role", "system"}, {"content", system}});
  m.push_back({{"role", "user"}, {"content", user}});
  return m;
}

}  // namespace exl

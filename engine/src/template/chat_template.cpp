// Public entry of the template interpreter: compile (lex + parse) once, render per request.
#include "exl/chat_template.h"

#include "template/errors.h"
#include "template/interpreter.h"
#include "template/parser.h"

namespace exl {

struct ChatTemplate::Impl {
  tpl::Body body;
  ChatTemplateOptions options;
};

ChatTemplate::ChatTemplate(const std::string& source, ChatTemplateOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->body = tpl::parse(tpl::tokenize(source));
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

const ChatTemplateOptions& ChatTemplate::options() const { return impl_->options; }

std::string ChatTemplate::render(const nlohmann::ordered_json& context) const {
  tpl::Limits limits;
  limits.max_output = impl_->options.max_output_bytes;
  limits.max_steps = impl_->options.max_steps;
  limits.max_call_depth = impl_->options.max_call_depth;
  tpl::Interpreter in(limits, impl_->options.now);
  try {
    tpl::Value ctx = context.is_object() ? tpl::from_json(context) : tpl::Value::make_dict();
    return in.render(impl_->body, ctx);
  } catch (const tpl::RaisedByTemplate& e) {
    throw TemplateRaised(e.message, in.line, in.col);
  } catch (const tpl::RenderFailure& e) {
    throw Error(ErrorKind::format, "template error at line " + std::to_string(in.line) + ", column " +
                                       std::to_string(in.col) + ": " + e.message,
                {}, "chat_template");
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::out_of_memory, "out of memory while rendering the chat template", {}, "chat_template");
  }
}

std::string ChatTemplate::render(const nlohmann::json& context) const {
  return render(nlohmann::ordered_json::parse(context.dump()));
}

std::string ChatTemplate::render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                      const std::optional<std::string>& bos_token,
                                      const std::optional<std::string>& eos_token,
                                      const nlohmann::ordered_json& extra) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = messages;
  ctx["tools"] = nullptr;
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = add_generation_prompt;
  if (bos_token) ctx["bos_token"] = *bos_token;
  if (eos_token) ctx["eos_token"] = *eos_token;
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) ctx[it.key()] = it.value();
  return render(ctx);
}

}  // namespace exl

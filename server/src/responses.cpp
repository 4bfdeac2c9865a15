#include "responses.h"

namespace exl::server {

using nlohmann::json;

json usageJson(const GenerationJob::Outcome& o) {
  return json{{"prompt_tokens", o.promptTokens},
              {"completion_tokens", o.completionTokens},
              {"total_tokens", o.promptTokens + o.completionTokens},
              {"prompt_tokens_details", {{"cached_tokens", o.cachedTokens}}}};
}

static json base(const ResponseContext& c, const char* chatObject, const char* textObject) {
  return json{{"id", c.id},
              {"object", c.endpoint == Endpoint::chat ? chatObject : textObject},
              {"created", c.created},
              {"model", c.model}};
}

json completionJson(const ResponseContext& c, const std::string& text, const GenerationJob::Outcome& o) {
  json j = base(c, "chat.completion", "text_completion");
  json choice = {{"index", 0}, {"finish_reason", o.finishReason}, {"logprobs", nullptr}};
  if (c.endpoint == Endpoint::chat) choice["message"] = {{"role", "assistant"}, {"content", text}};
  else choice["text"] = text;
  j["choices"] = json::array({choice});
  j["usage"] = usageJson(o);
  j["system_fingerprint"] = "exl-studio";
  return j;
}

json chunkJson(const ResponseContext& c, const std::string& text, bool first, const std::string& finish,
               bool includeUsage) {
  json j = base(c, "chat.completion.chunk", "text_completion");
  json choice = {{"index", 0}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish.empty() ? json(nullptr) : json(finish);
  if (c.endpoint == Endpoint::chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || (first && finish.empty())) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  j["choices"] = json::array({choice});
  if (includeUsage) j["usage"] = nullptr;
  return j;
}

json usageChunkJson(const ResponseContext& c, const GenerationJob::Outcome& o) {
  json j = base(c, "chat.completion.chunk", "text_completion");
  j["choices"] = json::array();
  j["usage"] = usageJson(o);
  return j;
}

std::string sseEvent(const json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace exl::server

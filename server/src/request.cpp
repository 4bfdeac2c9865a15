#include "exl/server/request.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace exl::server {

using nlohmann::json;

json errorBody(const ApiError& e) {
  json err = {{"message", e.message}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return json{{"error", err}};
}

namespace {

[[noreturn]] void bad(const std::string& param, const std::string& message, int status = 400,
                      const std::string& code = {}) {
  ApiError e;
  e.status = status;
  e.message = message;
  e.param = param;
  e.code = code.empty() && !param.empty() ? std::string("invalid_value") : code;
  throw RequestError(std::move(e));
}

// A bound as people write it: 0, 1, 0.5, -2 (not 0.000000).
std::string shortNumber(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", d);
  return buf;
}

double number(const json& body, const char* key, double lo, double hi) {
  const json& v = body.at(key);
  if (!v.is_number()) bad(key, std::string("'") + key + "' must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    bad(key, std::string("'") + key + "' must be between " + shortNumber(lo) + " and " + shortNumber(hi));
  return d;
}

std::int64_t integer(const json& body, const char* key, std::int64_t lo, std::int64_t hi) {
  const json& v = body.at(key);
  std::int64_t i = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      bad(key, std::string("'") + key + "' is out of range");
    i = v.get<std::int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() &&
             std::fabs(v.get<double>()) < 9.0e15) {
    i = static_cast<std::int64_t>(v.get<double>());
  } else {
    bad(key, std::string("'") + key + "' must be an integer");
  }
  if (i < lo || i > hi)
    bad(key, std::string("'") + key + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return i;
}

bool present(const json& body, const char* key) {
  auto it = body.find(key);
  return it != body.end() && !it->is_null();
}

// Message content: a string, or an array of {"type": "text", "text": ...} parts joined.
std::string messageContent(const json& content, std::size_t index) {
  const std::string param = "messages[" + std::to_string(index) + "].content";
  if (content.is_null()) return {};
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) bad(param, "message content must be a string or an array of text parts");
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string())
      bad(param, "content parts must be objects with a 'type'");
    if (part["type"].get<std::string>() != "text")
      bad(param, "only text content parts are supported", 400, "unsupported_content");
    if (!part.contains("text") || !part["text"].is_string()) bad(param, "a text part needs a string 'text'");
    text += part["text"].get<std::string>();
  }
  return text;
}

void parseMessages(const json& body, const RequestLimits& limits, GenerationRequest& r) {
  if (!present(body, "messages")) bad("messages", "'messages' is required", 400, "missing_required_parameter");
  const json& msgs = body["messages"];
  if (!msgs.is_array() || msgs.empty()) bad("messages", "'messages' must be a non-empty array");
  if (msgs.size() > limits.maxMessages) bad("messages", "too many messages");
  r.messages = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const json& m = msgs[i];
    const std::string p = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) bad(p, "each message must be an object");
    if (!m.contains("role") || !m["role"].is_string()) bad(p + ".role", "each message needs a string 'role'");
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant" && role != "developer" && role != "tool")
      bad(p + ".role", "unknown role '" + role + "'");
    nlohmann::ordered_json out;
    out["role"] = role == "developer" ? std::string("system") : role;
    const bool hasContent = m.contains("content") && !m["content"].is_null();
    // Only an assistant turn that called tools may come without content (OpenAI's rule).
    const bool callsTools = role == "assistant" && ((m.contains("tool_calls") && m["tool_calls"].is_array() &&
                                                     !m["tool_calls"].empty()) ||
                                                    (m.contains("function_call") && m["function_call"].is_object()));
    if (!hasContent && !callsTools)
      bad(p + ".content", "a " + role + " message needs 'content' (a string or text parts); null is allowed only "
                          "in an assistant message with tool_calls", 400, "missing_required_parameter");
    out["content"] = messageContent(hasContent ? m["content"] : json(), i);
    if (m.contains("name") && m["name"].is_string()) out["name"] = m["name"];
    r.messages.push_back(std::move(out));
  }
}

void parsePrompt(const json& body, const RequestLimits& limits, int vocabSize, GenerationRequest& r) {
  if (!present(body, "prompt")) bad("prompt", "'prompt' is required", 400, "missing_required_parameter");
  const json& p = body["prompt"];
  if (p.is_string()) {
    r.prompt = p.get<std::string>();
    return;
  }
  if (!p.is_array() || p.empty()) bad("prompt", "'prompt' must be a string, one string in an array, or token ids");
  if (p.size() == 1 && p[0].is_string()) {
    r.prompt = p[0].get<std::string>();
    return;
  }
  if (p[0].is_string() || p[0].is_array()) bad("prompt", "only one prompt per request is supported");
  if (p.size() > limits.maxPromptIds) bad("prompt", "too many prompt tokens");
  r.hasPromptIds = true;
  for (const json& v : p) {
    if (!v.is_number_integer()) bad("prompt", "token ids must be integers");
    const std::int64_t id = v.get<std::int64_t>();
    if (id < 0 || (vocabSize > 0 && id >= vocabSize) || id > std::numeric_limits<std::int32_t>::max())
      bad("prompt", "token id " + std::to_string(id) + " is out of range");
    r.promptIds.push_back(static_cast<std::int32_t>(id));
  }
}

void parseStop(const json& body, const RequestLimits& limits, GenerationRequest& r) {
  if (!present(body, "stop")) return;
  const json& s = body["stop"];
  auto add = [&](const json& v) {
    if (!v.is_string()) bad("stop", "'stop' must be a string or an array of strings");
    std::string text = v.get<std::string>();
    if (text.empty()) bad("stop", "stop strings must not be empty");
    if (text.size() > limits.maxStopBytes) bad("stop", "a stop string is too long");
    r.stop.push_back(std::move(text));
  };
  if (s.is_array()) {
    if (s.size() > limits.maxStopStrings)
      bad("stop", "at most " + std::to_string(limits.maxStopStrings) + " stop strings");
    for (const json& v : s) add(v);
  } else {
    add(s);
  }
}

void parseLogitBias(const json& body, const RequestLimits& limits, int vocabSize, GenerationRequest& r) {
  if (!present(body, "logit_bias")) return;
  const json& b = body["logit_bias"];
  if (!b.is_object()) bad("logit_bias", "'logit_bias' must be an object of token id -> bias");
  if (b.size() > limits.maxLogitBias) bad("logit_bias", "too many logit_bias entries");
  for (auto it = b.begin(); it != b.end(); ++it) {
    const std::string& key = it.key();
    if (key.empty() || key.size() > 10 || key.find_first_not_of("0123456789") != std::string::npos)
      bad("logit_bias", "logit_bias keys must be token ids");
    const long long id = std::stoll(key);
    if (id > std::numeric_limits<std::int32_t>::max() || (vocabSize > 0 && id >= vocabSize))
      bad("logit_bias", "token id " + key + " is out of range");
    if (!it.value().is_number()) bad("logit_bias", "logit_bias values must be numbers");
    const double v = it.value().get<double>();
    if (!std::isfinite(v) || v < -100 || v > 100) bad("logit_bias", "logit_bias values must be between -100 and 100");
    r.logitBias.emplace_back(static_cast<std::int32_t>(id), static_cast<float>(v));
  }
}

}  // namespace

bool jsonDepthExceeds(std::string_view text, int maxDepth) {
  int depth = 0;
  bool inString = false, escape = false;
  for (char c : text) {
    if (inString) {
      if (escape) escape = false;
      else if (c == '\\') escape = true;
      else if (c == '"') inString = false;
      continue;
    }
    if (c == '"') inString = true;
    else if (c == '[' || c == '{') {
      if (++depth > maxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

GenerationRequest parseGenerationRequest(std::string_view body, Endpoint endpoint, const RequestLimits& limits,
                                         int vocabSize) {
  if (body.size() > limits.maxBodyBytes)
    bad({}, "request body is larger than " + std::to_string(limits.maxBodyBytes) + " bytes", 413,
        "request_too_large");
  if (jsonDepthExceeds(body, limits.maxJsonDepth))
    bad({}, "JSON nests deeper than " + std::to_string(limits.maxJsonDepth) + " levels", 400, "json_too_deep");
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) bad({}, "the request body is not valid JSON", 400, "invalid_json");
  if (!doc.is_object()) bad({}, "the request body must be a JSON object", 400, "invalid_json");

  GenerationRequest r;
  r.endpoint = endpoint;
  if (!present(doc, "model") || !doc["model"].is_string())
    bad("model", "'model' is required and must be a string", 400, "missing_required_parameter");
  r.model = doc["model"].get<std::string>();
  if (endpoint == Endpoint::chat) parseMessages(doc, limits, r);
  else parsePrompt(doc, limits, vocabSize, r);

  if (present(doc, "n") && integer(doc, "n", std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max()) != 1)
    bad("n", "only n = 1 is supported: this server generates one choice per request", 400, "unsupported_value");
  if (present(doc, "best_of") && integer(doc, "best_of", 1, 1) != 1) bad("best_of", "only best_of = 1 is supported");
  if (present(doc, "stream")) {
    if (!doc["stream"].is_boolean()) bad("stream", "'stream' must be a boolean");
    r.stream = doc["stream"].get<bool>();
  }
  if (present(doc, "stream_options")) {
    const json& so = doc["stream_options"];
    if (!so.is_object()) bad("stream_options", "'stream_options' must be an object");
    if (!r.stream) bad("stream_options", "'stream_options' is only allowed when 'stream' is true");
    if (so.contains("include_usage") && !so["include_usage"].is_null()) {
      if (!so["include_usage"].is_boolean()) bad("stream_options.include_usage", "'include_usage' must be a boolean");
      r.includeUsage = so["include_usage"].get<bool>();
    }
  }
  const char* maxKey = present(doc, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  if (present(doc, maxKey)) r.maxTokens = static_cast<int>(integer(doc, maxKey, 1, 1 << 24));
  if (present(doc, "temperature")) r.temperature = static_cast<float>(number(doc, "temperature", 0.0, 2.0));
  if (present(doc, "top_p")) r.topP = static_cast<float>(number(doc, "top_p", 0.0, 1.0));
  if (present(doc, "top_p") && r.topP <= 0.0f) bad("top_p", "'top_p' must be greater than 0");
  if (present(doc, "top_k")) {
    const std::int64_t k = integer(doc, "top_k", -1, 1 << 24);
    r.topK = k < 0 ? 0 : static_cast<int>(k);
  }
  if (present(doc, "min_p")) r.minP = static_cast<float>(number(doc, "min_p", 0.0, 1.0));
  if (present(doc, "seed"))
    r.seed = integer(doc, "seed", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  if (present(doc, "presence_penalty"))
    r.presencePenalty = static_cast<float>(number(doc, "presence_penalty", -2.0, 2.0));
  if (present(doc, "frequency_penalty"))
    r.frequencyPenalty = static_cast<float>(number(doc, "frequency_penalty", -2.0, 2.0));
  parseStop(doc, limits, r);
  parseLogitBias(doc, limits, vocabSize, r);
  if (present(doc, "logprobs") && doc["logprobs"].is_boolean() && doc["logprobs"].get<bool>())
    bad("logprobs", "logprobs are not supported", 400, "unsupported_parameter");
  if (present(doc, "tools") && doc["tools"].is_array() && !doc["tools"].empty())
    bad("tools", "tool calls are not supported", 400, "unsupported_parameter");
  return r;
}

}  // namespace exl::server

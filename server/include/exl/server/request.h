// Request parsing and validation for the OpenAI-compatible routes. No HTTP and no engine state:
// the body text goes in, a validated GenerationRequest (or a RequestError carrying the OpenAI
// error shape and status) comes out. Nothing in a request names a file: the model field is only
// compared against the served model's id.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace exl::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // empty: null
  std::string code;   // empty: null
};

class RequestError : public std::runtime_error {
 public:
  explicit RequestError(ApiError e) : std::runtime_error(e.message), m_error(std::move(e)) {}
  const ApiError& error() const noexcept { return m_error; }

 private:
  ApiError m_error;
};

// {"error": {"message", "type", "param", "code"}}
nlohmann::json errorBody(const ApiError& e);

struct RequestLimits {
  std::size_t maxBodyBytes = std::size_t(4) << 20;
  int maxJsonDepth = 32;
  std::size_t maxMessages = 4096;
  std::size_t maxStopStrings = 4;
  std::size_t maxStopBytes = 256;
  std::size_t maxLogitBias = 1024;
  std::size_t maxPromptIds = 1 << 20;
};

enum class Endpoint { chat, completion };

struct GenerationRequest {
  Endpoint endpoint = Endpoint::chat;
  std::string model;
  nlohmann::ordered_json messages;        // chat: [{role, content: string}], parts joined
  std::string prompt;                     // completion: text prompt
  std::vector<std::int32_t> promptIds;    // completion: token-id prompt (when hasPromptIds)
  bool hasPromptIds = false;
  bool stream = false;
  bool includeUsage = false;
  std::optional<int> maxTokens;
  float temperature = 1.0f;
  float topP = 1.0f;
  int topK = 0;
  float minP = 0.0f;
  std::optional<std::int64_t> seed;
  std::vector<std::string> stop;
  float presencePenalty = 0.0f;
  float frequencyPenalty = 0.0f;
  std::vector<std::pair<std::int32_t, float>> logitBias;
};

// True when brackets nest deeper than maxDepth (strings and escapes are skipped). Linear, no
// allocation: runs before the JSON parser so that deep input never reaches its recursion.
bool jsonDepthExceeds(std::string_view text, int maxDepth);

// Parses and validates a request body. `vocabSize` bounds logit_bias keys and prompt ids
// (0: not checked). Throws RequestError (status 400, or 413 for an oversize body).
GenerationRequest parseGenerationRequest(std::string_view body, Endpoint endpoint, const RequestLimits& limits,
                                         int vocabSize);

}  // namespace exl::server

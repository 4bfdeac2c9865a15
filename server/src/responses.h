// JSON bodies of the OpenAI responses (non-streamed objects and SSE chunks).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "exl/server/request.h"
#include "exl/server/scheduler.h"

namespace exl::server {

struct ResponseContext {
  Endpoint endpoint = Endpoint::chat;
  std::string id;        // "chatcmpl-..." / "cmpl-..."
  std::int64_t created = 0;
  std::string model;
};

nlohmann::json usageJson(const GenerationJob::Outcome& o);
nlohmann::json completionJson(const ResponseContext& c, const std::string& text, const GenerationJob::Outcome& o);
// A streamed chunk carrying `text` (chat: with the assistant role when `first`); `finish`
// non-empty ends the choice.
nlohmann::json chunkJson(const ResponseContext& c, const std::string& text, bool first, const std::string& finish,
                         bool includeUsage);
nlohmann::json usageChunkJson(const ResponseContext& c, const GenerationJob::Outcome& o);
std::string sseEvent(const nlohmann::json& j);

}  // namespace exl::server

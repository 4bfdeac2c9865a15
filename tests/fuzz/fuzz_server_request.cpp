// libFuzzer target: the server's request parser/validator (exl::server::parseGenerationRequest)
// on arbitrary bodies, for both endpoints. A parse either throws RequestError with a 4xx status
// and a non-empty message, or returns a request whose fields are within the documented ranges.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "exl/server/request.h"

namespace {

void require(bool cond) {
  if (!cond) std::abort();  // the fuzzer reports this as a finding
}

void runOne(std::string_view body, exl::server::Endpoint endpoint) {
  exl::server::RequestLimits limits;
  limits.maxBodyBytes = 1 << 16;
  try {
    const auto r = exl::server::parseGenerationRequest(body, endpoint, limits, 5000);
    require(!r.maxTokens || *r.maxTokens >= 1);
    require(r.temperature >= 0.0f && r.temperature <= 2.0f);
    require(r.topP > 0.0f && r.topP <= 1.0f);
    require(r.topK >= 0);
    require(r.minP >= 0.0f && r.minP <= 1.0f);
    require(r.stop.size() <= limits.maxStopStrings);
    for (const auto& s : r.stop) require(!s.empty() && s.size() <= limits.maxStopBytes);
    for (const auto& [id, bias] : r.logitBias) require(id >= 0 && id < 5000 && bias >= -100 && bias <= 100);
    for (auto id : r.promptIds) require(id >= 0 && id < 5000);
    if (endpoint == exl::server::Endpoint::chat) require(r.messages.is_array() && !r.messages.empty());
    (void)exl::server::errorBody({}).dump();
  } catch (const exl::server::RequestError& e) {
    require(e.error().status == 400 || e.error().status == 413);
    require(!e.error().message.empty());
    (void)exl::server::errorBody(e.error()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  runOne(body, exl::server::Endpoint::chat);
  runOne(body, exl::server::Endpoint::completion);
  return 0;
}

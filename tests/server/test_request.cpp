// Request parsing and validation: the OpenAI fields, their ranges, and the limits.
#include <string>

#include "exl/server/apiserver.h"
#include "exl/server/request.h"
#include "exl_test.h"

using namespace exl::server;

namespace {

int statusOf(const std::string& body, Endpoint e = Endpoint::chat, RequestLimits limits = {}) {
  try {
    parseGenerationRequest(body, e, limits, 1000);
    return 200;
  } catch (const RequestError& err) {
    return err.error().status;
  }
}

std::string paramOf(const std::string& body, Endpoint e = Endpoint::chat) {
  try {
    parseGenerationRequest(body, e, {}, 1000);
    return "(none)";
  } catch (const RequestError& err) {
    return err.error().param;
  }
}

const char* kChat = R"({"model":"m","messages":[{"role":"user","content":"hi"}])";

std::string chatWith(const std::string& extra) { return std::string(kChat) + "," + extra + "}"; }

}  // namespace

EXL_TEST(server_request, parses_all_chat_fields) {
  const GenerationRequest r = parseGenerationRequest(
      chatWith(R"("stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":7,
               "temperature":0.5,"top_p":0.9,"top_k":40,"min_p":0.05,"seed":-3,"stop":["a","bc"],
               "presence_penalty":0.5,"frequency_penalty":-1,"logit_bias":{"5":-100,"17":2.5},"n":1)"),
      Endpoint::chat, {}, 1000);
  CHECK_EQ(r.model, std::string("m"));
  CHECK_EQ(r.messages.size(), std::size_t(1));
  CHECK_EQ(r.messages[0]["content"].get<std::string>(), std::string("hi"));
  CHECK(r.stream && r.includeUsage);
  CHECK_EQ(*r.maxTokens, 7);
  CHECK_NEAR(r.temperature, 0.5f, 1e-6);
  CHECK_NEAR(r.topP, 0.9f, 1e-6);
  CHECK_EQ(r.topK, 40);
  CHECK_NEAR(r.minP, 0.05f, 1e-6);
  CHECK_EQ(*r.seed, std::int64_t(-3));
  CHECK_EQ(r.stop.size(), std::size_t(2));
  CHECK_EQ(r.stop[1], std::string("bc"));
  CHECK_NEAR(r.frequencyPenalty, -1.0f, 1e-6);
  CHECK_EQ(r.logitBias.size(), std::size_t(2));
  CHECK_EQ(r.logitBias[0].first, 17);  // nlohmann::json orders keys
  CHECK_NEAR(r.logitBias[1].second, -100.0f, 1e-6);
}

EXL_TEST(server_request, content_parts_are_joined_and_developer_maps_to_system) {
  const GenerationRequest r = parseGenerationRequest(
      R"({"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]})",
      Endpoint::chat, {}, 0);
  CHECK_EQ(r.messages[0]["role"].get<std::string>(), std::string("system"));
  CHECK_EQ(r.messages[0]["content"].get<std::string>(), std::string("ab"));
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]})"), 400);
}

EXL_TEST(server_request, max_tokens_alias_and_stop_string) {
  const GenerationRequest r = parseGenerationRequest(R"({"model":"m","prompt":"x","max_tokens":3,"stop":"\n"})",
                                                     Endpoint::completion, {}, 0);
  CHECK_EQ(*r.maxTokens, 3);
  CHECK_EQ(r.stop.size(), std::size_t(1));
  CHECK_EQ(r.prompt, std::string("x"));
}

EXL_TEST(server_request, completion_prompt_forms) {
  CHECK_EQ(parseGenerationRequest(R"({"model":"m","prompt":["one"]})", Endpoint::completion, {}, 0).prompt,
           std::string("one"));
  const GenerationRequest ids = parseGenerationRequest(R"({"model":"m","prompt":[1,2,999]})", Endpoint::completion, {}, 1000);
  CHECK(ids.hasPromptIds);
  CHECK_EQ(ids.promptIds.size(), std::size_t(3));
  CHECK_EQ(statusOf(R"({"model":"m","prompt":[1,2,1000]})", Endpoint::completion), 400);
  CHECK_EQ(statusOf(R"({"model":"m","prompt":["a","b"]})", Endpoint::completion), 400);
  CHECK_EQ(statusOf(R"({"model":"m","prompt":[-1]})", Endpoint::completion), 400);
  CHECK_EQ(statusOf(R"({"model":"m"})", Endpoint::completion), 400);
}

EXL_TEST(server_request, malformed_bodies_are_400) {
  CHECK_EQ(statusOf("{"), 400);
  CHECK_EQ(statusOf(""), 400);
  CHECK_EQ(statusOf("[1,2]"), 400);
  CHECK_EQ(statusOf(R"({"messages":[{"role":"user","content":"x"}]})"), 400);  // no model
  CHECK_EQ(statusOf(R"({"model":"m","messages":[]})"), 400);
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"wizard","content":"x"}]})"), 400);
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"content":"x"}]})"), 400);
  CHECK_EQ(statusOf(R"({"model":7,"messages":[{"role":"user","content":"x"}]})"), 400);
}

EXL_TEST(server_request, out_of_range_parameters_name_the_field) {
  CHECK_EQ(paramOf(chatWith(R"("temperature":2.5)")), std::string("temperature"));
  CHECK_EQ(paramOf(chatWith(R"("temperature":"hot")")), std::string("temperature"));
  CHECK_EQ(paramOf(chatWith(R"("top_p":0)")), std::string("top_p"));
  CHECK_EQ(paramOf(chatWith(R"("top_p":1.5)")), std::string("top_p"));
  CHECK_EQ(paramOf(chatWith(R"("min_p":-0.1)")), std::string("min_p"));
  CHECK_EQ(paramOf(chatWith(R"("max_tokens":0)")), std::string("max_tokens"));
  CHECK_EQ(paramOf(chatWith(R"("max_tokens":1.5)")), std::string("max_tokens"));
  CHECK_EQ(paramOf(chatWith(R"("presence_penalty":3)")), std::string("presence_penalty"));
  CHECK_EQ(paramOf(chatWith(R"("frequency_penalty":-2.01)")), std::string("frequency_penalty"));
  CHECK_EQ(paramOf(chatWith(R"("stop":["a","b","c","d","e"])")), std::string("stop"));
  CHECK_EQ(paramOf(chatWith(R"("stop":[""])")), std::string("stop"));
  CHECK_EQ(paramOf(chatWith(R"("stop":5)")), std::string("stop"));
  CHECK_EQ(paramOf(chatWith(R"("logit_bias":{"x":1})")), std::string("logit_bias"));
  CHECK_EQ(paramOf(chatWith(R"("logit_bias":{"1000":1})")), std::string("logit_bias"));
  CHECK_EQ(paramOf(chatWith(R"("logit_bias":{"5":101})")), std::string("logit_bias"));
  CHECK_EQ(paramOf(chatWith(R"("stream":"yes")")), std::string("stream"));
  CHECK_EQ(paramOf(chatWith(R"("stream_options":{"include_usage":true})")), std::string("stream_options"));
  CHECK_EQ(paramOf(chatWith(R"("seed":1e300)")), std::string("seed"));
}

namespace {
std::string messageOf(const std::string& body) {
  try {
    parseGenerationRequest(body, Endpoint::chat, {}, 1000);
    return "(none)";
  } catch (const RequestError& err) {
    return err.error().message;
  }
}
}  // namespace

EXL_TEST(server_request, range_errors_print_short_numbers) {
  CHECK_EQ(messageOf(chatWith(R"("top_p":1.5)")), std::string("'top_p' must be between 0 and 1"));
  CHECK_EQ(messageOf(chatWith(R"("temperature":3)")), std::string("'temperature' must be between 0 and 2"));
  CHECK_EQ(messageOf(chatWith(R"("frequency_penalty":-2.5)")),
           std::string("'frequency_penalty' must be between -2 and 2"));
}

EXL_TEST(server_request, null_content_only_in_an_assistant_turn_with_tool_calls) {
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"user","content":null}]})"), 400);
  CHECK_EQ(paramOf(R"({"model":"m","messages":[{"role":"user","content":null}]})"), std::string("messages[0].content"));
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"system"}]})"), 400);
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null}]})"),
           400);
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"tool","content":null,"tool_call_id":"c"}]})"), 400);
  const GenerationRequest r = parseGenerationRequest(
      R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":null,
          "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
      Endpoint::chat, {}, 1000);
  CHECK_EQ(r.messages.size(), std::size_t(2));
  CHECK_EQ(r.messages[1]["content"].get<std::string>(), std::string());
  CHECK_EQ(statusOf(R"({"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c"}]}]})"), 200);
}

EXL_TEST(server_request, n_other_than_one_is_a_clear_error) {
  try {
    parseGenerationRequest(chatWith(R"("n":2)"), Endpoint::chat, {}, 0);
    CHECK_MSG(false, "n=2 was accepted");
  } catch (const RequestError& e) {
    CHECK_EQ(e.error().status, 400);
    CHECK_EQ(e.error().param, std::string("n"));
    CHECK(e.error().message.find("n = 1") != std::string::npos);
  }
  CHECK_EQ(statusOf(chatWith(R"("n":1)")), 200);
}

EXL_TEST(server_request, body_size_and_depth_limits) {
  RequestLimits small;
  small.maxBodyBytes = 64;
  CHECK_EQ(statusOf(chatWith(R"("user":")" + std::string(100, 'x') + "\""), Endpoint::chat, small), 413);
  std::string deep = R"({"model":"m","messages":[{"role":"user","content":"x"}],"extra":)";
  deep += std::string(100, '[') + std::string(100, ']') + "}";
  CHECK_EQ(statusOf(deep), 400);
  CHECK(jsonDepthExceeds(std::string(33, '['), 32));
  CHECK(!jsonDepthExceeds(std::string(32, '['), 32));
  CHECK(!jsonDepthExceeds(R"({"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"[[["})", 4));
}

EXL_TEST(server_request, error_body_has_openai_shape) {
  ApiError e;
  e.status = 404;
  e.message = "nope";
  e.code = "model_not_found";
  const nlohmann::json j = errorBody(e);
  CHECK_EQ(j["error"]["message"].get<std::string>(), std::string("nope"));
  CHECK_EQ(j["error"]["type"].get<std::string>(), std::string("invalid_request_error"));
  CHECK(j["error"]["param"].is_null());
  CHECK_EQ(j["error"]["code"].get<std::string>(), std::string("model_not_found"));
}

EXL_TEST(server_request, api_key_compare_and_loopback) {
  CHECK(constantTimeEquals("Bearer abc", "Bearer abc"));
  CHECK(!constantTimeEquals("Bearer abc", "Bearer abd"));
  CHECK(!constantTimeEquals("Bearer abc", "Bearer abc0"));
  CHECK(!constantTimeEquals("", "Bearer abc"));
  CHECK(isLoopbackHost("127.0.0.1"));
  CHECK(isLoopbackHost("::1"));
  CHECK(!isLoopbackHost("0.0.0.0"));
  CHECK(!isLoopbackHost("192.168.1.2"));
}

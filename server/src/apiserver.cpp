#include "exl/server/apiserver.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <random>

#ifndef _WIN32
#include <sys/socket.h>
#endif

#include "exl/chat_prompt.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/log.h"
#include "exl/server/scheduler.h"
#include "responses.h"

namespace exl::server {

using nlohmann::json;

bool isLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool constantTimeEquals(const std::string& a, const std::string& b) {
  const std::size_t n = std::max(a.size(), b.size());
  unsigned diff = static_cast<unsigned>(a.size() ^ b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

namespace {

std::string dumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void sendError(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dumpJson(errorBody(e)), "application/json");
}

ApiError apiError(int status, std::string type, std::string message, std::string code = {}, std::string param = {}) {
  ApiError e;
  e.status = status;
  e.type = std::move(type);
  e.message = std::move(message);
  e.code = std::move(code);
  e.param = std::move(param);
  return e;
}

std::string statusText(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such route";
    case 405: return "method not allowed";
    case 413: return "request body too large";
    case 414: return "request URI too long";
    default: return "HTTP error " + std::to_string(status);
  }
}

std::int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct ApiServer::Impl {
  const ServerOptions& options;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::optional<ChatPrompt> chatPrompt;  // empty: the model has no chat template
  std::unique_ptr<Scheduler> scheduler;
  httplib::Server http;
  // The socket httplib last created for bind(): httplib listens with a backlog of 5, which under a
  // burst of connections overflows and makes the kernel reset some of them; bind() enlarges it.
  std::atomic<socket_t> listenSocket{INVALID_SOCKET};
  std::atomic<std::uint64_t> nextId{1};
  std::int64_t created = nowSeconds();
  int vocab = 0;

  Impl(const ServerOptions& o, std::shared_ptr<const Model> m, std::unique_ptr<Backend> backend)
      : options(o), model(std::move(m)), tokenizer(model->tokenizer()) {
    if (!tokenizer) throw Error(ErrorKind::invalid_argument, "the model folder has no tokenizer.json; cannot serve");
    vocab = std::min(tokenizer->vocab_size(), backend->vocab_size());
    if (!tokenizer->chat_template().empty()) chatPrompt.emplace(tokenizer);
    scheduler = std::make_unique<Scheduler>(std::move(backend), tokenizer, o.queue, o.maxChunk);
    setup();
  }

  bool authorized(const httplib::Request& req) const {
    if (options.apiKey.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    return constantTimeEquals(header, "Bearer " + options.apiKey);
  }

  json modelJson() const {
    return json{{"id", options.modelId}, {"object", "model"}, {"created", created}, {"owned_by", "exl-studio"}};
  }

  std::vector<std::int32_t> promptIds(const GenerationRequest& r) const {
    if (r.endpoint == Endpoint::completion) {
      if (r.hasPromptIds) return r.promptIds;
      return tokenizer->encode(r.prompt, false, tokenizer->add_bos_by_default());
    }
    if (!chatPrompt)
      throw RequestError(apiError(400, "invalid_request_error", "the model has no chat template; use /v1/completions",
                                  "no_chat_template"));
    try {
      return chatPrompt->ids(r.messages);
    } catch (const Error& e) {
      throw RequestError(apiError(400, "invalid_request_error", std::string("chat template: ") + e.what(),
                                  "template_error", "messages"));
    }
  }

  GenerationJob::Settings jobSettings(const GenerationRequest& r) const {
    GenerationJob::Settings s;
    s.promptIds = promptIds(r);
    const int capacity = scheduler->cacheCapacity();
    if (s.promptIds.empty())
      throw RequestError(apiError(400, "invalid_request_error", "the prompt is empty", "empty_prompt", "prompt"));
    if (static_cast<int>(s.promptIds.size()) >= capacity)
      throw RequestError(apiError(400, "invalid_request_error",
                                  "the prompt has " + std::to_string(s.promptIds.size()) +
                                      " tokens; this model's context holds " + std::to_string(capacity),
                                  "context_length_exceeded", r.endpoint == Endpoint::chat ? "messages" : "prompt"));
    const int room = capacity - static_cast<int>(s.promptIds.size());
    s.maxTokens = std::min(r.maxTokens.value_or(room), room);
    SamplerSettings& ss = s.sampler;
    ss.temperature = r.temperature;
    ss.top_p = r.topP;
    ss.top_k = r.topK;
    ss.min_p = r.minP;
    ss.seed = r.seed ? static_cast<std::uint64_t>(*r.seed) : std::random_device{}();
    ss.presence_penalty = r.presencePenalty;
    ss.frequency_penalty = r.frequencyPenalty;
    ss.logit_bias = r.logitBias;
    ss.vocab_limit = vocab;
    try {
      ss.validate();
    } catch (const Error& e) {
      throw RequestError(apiError(400, "invalid_request_error", e.what(), "invalid_value", e.item()));
    }
    s.stopStrings = r.stop;
    return s;
  }

  void generate(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    GenerationRequest r;
    GenerationJob::Settings settings;
    try {
      r = parseGenerationRequest(req.body, endpoint, options.limits, vocab);
      if (r.model != options.modelId)
        throw RequestError(apiError(404, "invalid_request_error",
                                    "The model '" + r.model + "' does not exist; this server serves '" +
                                        options.modelId + "'",
                                    "model_not_found", "model"));
      settings = jobSettings(r);
    } catch (const RequestError& e) {
      return sendError(res, e.error());
    }
    auto job = std::make_shared<GenerationJob>(std::move(settings));
    if (!scheduler->submit(job))
      return sendError(res, apiError(429, "rate_limit_error", "the generation queue is full; retry later",
                                     "queue_full"));
    ResponseContext ctx{endpoint, (endpoint == Endpoint::chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId++),
                        nowSeconds(), options.modelId};
    if (!r.stream) {
      const GenerationJob::Outcome o = job->waitFinished();
      if (o.finishReason == "error")
        return sendError(res, apiError(500, "server_error", "generation failed: " + o.error, "generation_failed"));
      res.set_content(dumpJson(completionJson(ctx, job->takeAll(), o)), "application/json");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    auto first = std::make_shared<bool>(true);
    const bool includeUsage = r.includeUsage;
    res.set_chunked_content_provider(
        "text/event-stream",
        [job, ctx, first, includeUsage](std::size_t, httplib::DataSink& sink) {
          std::string text;
          const bool finished = job->waitText(text, std::chrono::milliseconds(100));
          std::string out;
          if (!text.empty() || (*first && ctx.endpoint == Endpoint::chat)) {
            out += sseEvent(chunkJson(ctx, text, *first, {}, includeUsage));
            *first = false;
          }
          if (finished) {
            const GenerationJob::Outcome o = *job->outcome();
            if (o.finishReason == "error") {
              out += sseEvent(errorBody(apiError(500, "server_error", "generation failed: " + o.error)));
            } else {
              out += sseEvent(chunkJson(ctx, {}, false, o.finishReason, includeUsage));
              if (includeUsage) out += sseEvent(usageChunkJson(ctx, o));
            }
            out += "data: [DONE]\n\n";
          }
          if (!out.empty() && !sink.write(out.data(), out.size())) {
            job->cancel();
            return false;
          }
          if (!sink.is_writable()) {
            job->cancel();
            return false;
          }
          if (finished) sink.done();
          return true;
        },
        [job, id = ctx.id](bool success) {
          if (success) return;
          job->cancel();
          log_warning("server: " + id + ": client disconnected before the end of the stream; generation stopped");
        });
  }

  void setup() {
    http.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listenSocket = sock;
    });
    http.new_task_queue = [n = std::max(1, options.httpThreads)] { return new httplib::ThreadPool(n); };
    http.set_payload_max_length(options.limits.maxBodyBytes);
    http.set_read_timeout(30, 0);
    http.set_write_timeout(30, 0);
    if (!options.corsOrigin.empty()) {
      http.set_default_headers({{"Access-Control-Allow-Origin", options.corsOrigin},
                                {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                                {"Access-Control-Allow-Methods", "GET, POST, OPTIONS"}});
      http.Options(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    }
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/health" || req.method == "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
      if (authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      sendError(res, apiError(401, "invalid_request_error", "missing or invalid API key (Authorization: Bearer KEY)",
                              "invalid_api_key"));
      return httplib::Server::HandlerResponse::Handled;
    });
    http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      ApiError e = apiError(res.status, "invalid_request_error", statusText(res.status));
      if (res.status == 413) e.code = "request_too_large";
      if (res.status == 404) e.code = "not_found";
      if (res.status >= 500) e.type = "server_error";
      sendError(res, e);
      return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      sendError(res, apiError(500, "server_error", what));
    });
    http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"status":"ok"})", "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(dumpJson(json{{"object", "list"}, {"data", json::array({modelJson()})}}), "application/json");
    });
    http.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      if (req.matches[1] != options.modelId)
        return sendError(res, apiError(404, "invalid_request_error", "The model does not exist", "model_not_found",
                                       "model"));
      res.set_content(dumpJson(modelJson()), "application/json");
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::chat);
    });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::completion);
    });
  }
};

ApiServer::ApiServer(ServerOptions options, std::shared_ptr<const Model> model, std::unique_ptr<Backend> backend)
    : m_options(std::move(options)) {
  if (!isLoopbackHost(m_options.host) && m_options.apiKey.empty())
    throw Error(ErrorKind::invalid_argument,
                "binding " + m_options.host + " (not a loopback address) requires an API key (--api-key)", "",
                "--host");
  if (m_options.modelId.empty()) m_options.modelId = "model";
  m_impl = std::make_unique<Impl>(m_options, std::move(model), std::move(backend));
}

ApiServer::~ApiServer() {
  if (m_impl) m_impl->http.stop();
}

int ApiServer::bind() {
  if (m_options.port == 0) m_port = m_impl->http.bind_to_any_port(m_options.host);
  else m_port = m_impl->http.bind_to_port(m_options.host, m_options.port) ? m_options.port : -1;
  if (m_port <= 0)
    throw Error(ErrorKind::io, "cannot listen on " + m_options.host + ":" + std::to_string(m_options.port));
  // Listening again on a listening socket only changes its backlog (POSIX); the accept queue then
  // holds a burst of clients (e.g. 200 concurrent streams) instead of 5.
  if (const auto sock = m_impl->listenSocket.load(); sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
  return m_port;
}

bool ApiServer::listen() { return m_impl->http.listen_after_bind(); }

void ApiServer::stop() { m_impl->http.stop(); }

}  // namespace exl::server

#include "exl/server/apiserver.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <random>

#include "exl/chat_prompt.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/log.h"
#include "exl/server/scheduler.h"
#include "http_front.h"
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

// How often a non-streamed request checks that its client is still connected.
constexpr std::chrono::milliseconds kDisconnectPoll{20};

std::int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// cpp-httplib's request processing (parsing, routing, response writing) on a stream that the
// connection front provides; httplib's own accept loop and per-connection threads are not used.
class RequestProcessor : public httplib::Server {
 public:
  bool serve(httplib::Stream& stream, bool closeConnection, bool& connectionClosed) {
    return process_request(stream, closeConnection, connectionClosed, nullptr);
  }
  // httplib streams a chunked answer only while its server socket is valid (it ends streams
  // when the server stops): mark it with the front's listening socket, and clear it on stop.
  void setListening(int fd) { svr_sock_ = fd; }
  void setStopped() { svr_sock_ = INVALID_SOCKET; }
};

FrontLimits frontLimits(const ServerOptions& o) {
  FrontLimits l;
  // Every running or queued generation holds a worker while it answers: keep a few more, so that
  // /health, /v1/models and refusals are answered however long the queue.
  l.workers = std::max({1, o.httpThreads, o.queue + 4});
  l.maxConnections = std::max(1, o.maxConnections);
  l.maxPerClient = std::max(1, o.maxConnectionsPerClient);
  l.headerTimeout = std::chrono::milliseconds(std::max(1, o.headerTimeoutMs));
  l.idleTimeout = std::chrono::milliseconds(std::max(1, o.keepAliveMs));
  l.maxBodyBytes = o.limits.maxBodyBytes;
  return l;
}

// The credentials of an "Authorization: Bearer TOKEN" header (the scheme in any case, RFC 7235);
// empty for another scheme or none.
std::string bearerToken(const std::string& header) {
  std::size_t i = 0;
  while (i < header.size() && (header[i] == ' ' || header[i] == '\t')) ++i;
  constexpr std::string_view scheme = "bearer";
  if (header.size() < i + scheme.size() + 1) return {};
  for (std::size_t k = 0; k < scheme.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(header[i + k])) != scheme[k]) return {};
  i += scheme.size();
  if (header[i] != ' ' && header[i] != '\t') return {};
  while (i < header.size() && (header[i] == ' ' || header[i] == '\t')) ++i;
  std::size_t end = header.size();
  while (end > i && (header[end - 1] == ' ' || header[end - 1] == '\t')) --end;
  return header.substr(i, end - i);
}

}  // namespace

struct ApiServer::Impl {
  const ServerOptions& options;
  std::shared_ptr<const Model> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::optional<ChatPrompt> chatPrompt;  // empty: the model has no chat template
  std::unique_ptr<Scheduler> scheduler;
  RequestProcessor http;
  HttpFront front;
  std::atomic<std::uint64_t> nextId{1};
  std::int64_t created = nowSeconds();
  int vocab = 0;

  Impl(const ServerOptions& o, std::shared_ptr<const Model> m, std::unique_ptr<Backend> backend)
      : options(o),
        model(std::move(m)),
        tokenizer(model->tokenizer()),
        front(frontLimits(o), [this](httplib::Stream& s, bool closeConnection, bool& closed) {
          return http.serve(s, closeConnection, closed);
        }) {
    if (!tokenizer) throw Error(ErrorKind::invalid_argument, "the model folder has no tokenizer.json; cannot serve");
    vocab = std::min(tokenizer->vocab_size(), backend->vocab_size());
    if (!tokenizer->chat_template().empty()) chatPrompt.emplace(tokenizer);
    scheduler = std::make_unique<Scheduler>(std::move(backend), tokenizer, o.queue, o.maxChunk);
    setup();
  }

  bool authorized(const httplib::Request& req) const {
    if (options.apiKey.empty()) return true;
    return constantTimeEquals(bearerToken(req.get_header_value("Authorization")), options.apiKey);
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
      // Any model name is accepted: a one-model server answers with its model, whatever name the
      // client was configured with (the answer's "model" field names the served id).
      r = parseGenerationRequest(req.body, endpoint, options.limits, vocab);
      settings = jobSettings(r);
    } catch (const RequestError& e) {
      return sendError(res, e.error());
    }
    auto job = std::make_shared<GenerationJob>(std::move(settings));
    if (!scheduler->submit(job)) {
      res.set_header("Retry-After", "1");
      return sendError(res, apiError(429, "rate_limit_error", "the generation queue is full; retry later",
                                     "queue_full"));
    }
    ResponseContext ctx{endpoint, (endpoint == Endpoint::chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId++),
                        nowSeconds(), options.modelId};
    if (!r.stream) {
      // The client may leave while it waits (a timeout, a retry): then the generation stops at
      // its next step instead of running to the end for nobody.
      std::optional<GenerationJob::Outcome> done;
      while (!(done = job->waitFinishedFor(kDisconnectPoll))) {
        if (clientDisconnected()) {
          job->cancel();
          log_warning("server: " + ctx.id + ": client disconnected before the answer; generation stopped");
          return sendError(res, apiError(499, "invalid_request_error", "the client closed the connection",
                                         "client_disconnected"));
        }
      }
      const GenerationJob::Outcome& o = *done;
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
    http.set_payload_max_length(options.limits.maxBodyBytes);
    // For the Keep-Alive header only: the front enforces both.
    http.set_keep_alive_timeout(std::max(1, options.keepAliveMs / 1000));
    http.set_keep_alive_max_count(FrontLimits{}.maxRequestsPerConnection);
    if (!options.corsOrigin.empty()) {
      http.set_default_headers({{"Access-Control-Allow-Origin", options.corsOrigin},
                                {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
                                {"Access-Control-Allow-Methods", "GET, POST, OPTIONS"}});
      http.Options(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
    }
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.path == "/health" || req.method == "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
      if (authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
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
        return sendError(res, apiError(404, "invalid_request_error",
                                       "The model does not exist; this server serves '" + options.modelId + "'",
                                       "model_not_found", "model"));
      res.set_content(dumpJson(modelJson()), "application/json");
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::chat);
    });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      generate(req, res, Endpoint::completion);
    });
    // A known route asked with another method: 405 naming the allowed ones.
    const auto notAllowed = [](std::string allow) {
      return [allow](const httplib::Request& req, httplib::Response& res) {
        res.set_header("Allow", allow);
        sendError(res, apiError(405, "invalid_request_error", req.method + " is not allowed here; use " + allow,
                                "method_not_allowed"));
      };
    };
    for (const char* route : {"/v1/chat/completions", "/v1/completions"}) {
      http.Get(route, notAllowed("POST"));
      http.Put(route, notAllowed("POST"));
      http.Patch(route, notAllowed("POST"));
      http.Delete(route, notAllowed("POST"));
    }
    for (const char* route : {"/health", "/v1/models", R"(/v1/models/(.+))"}) {
      http.Post(route, notAllowed("GET"));
      http.Put(route, notAllowed("GET"));
      http.Patch(route, notAllowed("GET"));
      http.Delete(route, notAllowed("GET"));
    }
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

ApiServer::~ApiServer() = default;

int ApiServer::bind() {
  // Listens with a backlog of SOMAXCONN, so a burst of clients (e.g. 200 concurrent streams)
  // waits in the accept queue instead of being reset.
  m_port = m_impl->front.bind(m_options.host, m_options.port);
  m_impl->http.setListening(m_impl->front.listenSocket());
  return m_port;
}

bool ApiServer::listen() { return m_impl->front.run(); }

void ApiServer::stop() {
  m_impl->http.setStopped();
  m_impl->front.stop();
}

}  // namespace exl::server

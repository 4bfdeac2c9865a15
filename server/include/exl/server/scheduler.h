// A small scheduler for the server: one worker thread owns the model's backend and runs one
// generation at a time from a bounded queue (a full queue refuses the job: HTTP 429). The KV
// cache is kept between jobs: the worker remembers the ids it holds, truncates the cache to the
// longest common prefix with the next prompt and prefills only the rest. Each job carries a
// std::stop_source; requesting a stop (client gone) ends its generation between steps.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/tokenizer.h"

namespace exl::server {

// One generation, shared between the HTTP thread that submitted it and the worker.
class GenerationJob {
 public:
  struct Settings {
    std::vector<std::int32_t> promptIds;
    SamplerSettings sampler;
    int maxTokens = 128;
    std::vector<std::string> stopStrings;
  };
  struct Outcome {
    std::string finishReason;   // "stop", "length", "cancelled", "error"
    std::string error;          // when finishReason == "error"
    int promptTokens = 0;
    int cachedTokens = 0;       // prompt tokens reused from the cache
    int completionTokens = 0;
  };

  explicit GenerationJob(Settings s) : m_settings(std::move(s)) {}
  const Settings& settings() const { return m_settings; }

  // Worker side.
  void pushText(std::string text);
  void finish(Outcome outcome);

  // Client side: waits up to `timeout` for text or the end; moves pending text into `text`.
  // Returns true once the job has finished and all its text was taken.
  bool waitText(std::string& text, std::chrono::milliseconds timeout);
  Outcome waitFinished();  // blocks; the text stays readable through waitText/takeAll
  // As waitFinished, giving up after `timeout` (empty: not finished yet).
  std::optional<Outcome> waitFinishedFor(std::chrono::milliseconds timeout);
  std::string takeAll();
  std::optional<Outcome> outcome() const;

  void cancel() { m_stop.request_stop(); }
  std::stop_token stopToken() const { return m_stop.get_token(); }

 private:
  Settings m_settings;
  std::stop_source m_stop;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::string m_pending;
  std::optional<Outcome> m_outcome;
};

class Scheduler {
 public:
  // `backend` is loaded with its cache allocated. `queueCapacity`: jobs waiting (not counting
  // the running one) before submit() refuses.
  Scheduler(std::unique_ptr<Backend> backend, std::shared_ptr<const Tokenizer> tokenizer, int queueCapacity,
            int maxChunk = 2048);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // false: the queue is full (the job is not taken).
  bool submit(std::shared_ptr<GenerationJob> job);
  int cacheCapacity() const { return m_capacity; }
  int queued() const;

 private:
  void run(std::stop_token stop);
  void execute(GenerationJob& job);

  std::unique_ptr<Backend> m_backend;
  std::shared_ptr<const Tokenizer> m_tokenizer;
  int m_queueCapacity;
  int m_maxChunk;
  int m_capacity;
  std::vector<std::int32_t> m_eos;
  mutable std::mutex m_mutex;
  std::condition_variable_any m_cv;
  std::deque<std::shared_ptr<GenerationJob>> m_queue;
  std::jthread m_worker;  // last: started after every other member exists
};

}  // namespace exl::server

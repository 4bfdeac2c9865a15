#include "exl/server/scheduler.h"

#include <algorithm>
#include <exception>

#include "exl/error.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace exl::server {

namespace {

// Gives memory freed by finished requests back to the system. glibc keeps freed blocks in its
// per-thread arenas, so after a burst of requests (one arena per busy HTTP thread) the process
// would otherwise stay at its peak size. Elsewhere a no-op.
void releaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// How long the worker waits after the last request before releasing freed memory (the HTTP threads
// finish sending and free their buffers in that time).
constexpr std::chrono::milliseconds kIdleTrimDelay{500};
// Under steady traffic the worker is never idle: it also releases freed memory between jobs this
// often. Without it the allocator's free pages, scattered between live blocks by requests of every
// size, stayed in the process and resident memory crept up under mixed traffic.
constexpr std::chrono::seconds kBusyTrimInterval{2};

}  // namespace

void GenerationJob::pushText(std::string text) {
  if (text.empty()) return;
  {
    std::lock_guard lock(m_mutex);
    m_pending += text;
  }
  m_cv.notify_all();
}

void GenerationJob::finish(Outcome outcome) {
  {
    std::lock_guard lock(m_mutex);
    m_outcome = std::move(outcome);
  }
  m_cv.notify_all();
}

bool GenerationJob::waitText(std::string& text, std::chrono::milliseconds timeout) {
  std::unique_lock lock(m_mutex);
  m_cv.wait_for(lock, timeout, [&] { return !m_pending.empty() || m_outcome.has_value(); });
  text = std::move(m_pending);
  m_pending.clear();
  return m_outcome.has_value();
}

GenerationJob::Outcome GenerationJob::waitFinished() {
  std::unique_lock lock(m_mutex);
  m_cv.wait(lock, [&] { return m_outcome.has_value(); });
  return *m_outcome;
}

std::optional<GenerationJob::Outcome> GenerationJob::waitFinishedFor(std::chrono::milliseconds timeout) {
  std::unique_lock lock(m_mutex);
  if (!m_cv.wait_for(lock, timeout, [&] { return m_outcome.has_value(); })) return std::nullopt;
  return m_outcome;
}

std::string GenerationJob::takeAll() {
  std::lock_guard lock(m_mutex);
  std::string t = std::move(m_pending);
  m_pending.clear();
  return t;
}

std::optional<GenerationJob::Outcome> GenerationJob::outcome() const {
  std::lock_guard lock(m_mutex);
  return m_outcome;
}

Scheduler::Scheduler(std::unique_ptr<Backend> backend, std::shared_ptr<const Tokenizer> tokenizer, int queueCapacity,
                     int maxChunk)
    : m_backend(std::move(backend)),
      m_tokenizer(std::move(tokenizer)),
      m_queueCapacity(std::max(1, queueCapacity)),
      m_maxChunk(std::max(1, maxChunk)),
      m_capacity(m_backend->cache_capacity()) {
  if (m_tokenizer) m_eos = m_tokenizer->eos_ids();
  m_backend->truncate_cache(0);
  m_worker = std::jthread([this](std::stop_token st) { run(st); });
}

Scheduler::~Scheduler() {
  m_worker.request_stop();
  m_cv.notify_all();
  if (m_worker.joinable()) m_worker.join();
  std::lock_guard lock(m_mutex);
  for (auto& job : m_queue) job->finish({"cancelled", "the server is shutting down", 0, 0, 0});
  m_queue.clear();
}

bool Scheduler::submit(std::shared_ptr<GenerationJob> job) {
  {
    std::lock_guard lock(m_mutex);
    // Jobs whose clients left (a timeout, a closed stream) give their places to the living.
    std::erase_if(m_queue, [](const std::shared_ptr<GenerationJob>& j) {
      if (!j->stopToken().stop_requested()) return false;
      j->finish({"cancelled", {}, 0, 0, 0});
      return true;
    });
    if (static_cast<int>(m_queue.size()) >= m_queueCapacity) return false;
    m_queue.push_back(std::move(job));
  }
  m_cv.notify_one();
  return true;
}

int Scheduler::queued() const {
  std::lock_guard lock(m_mutex);
  return static_cast<int>(m_queue.size());
}

void Scheduler::run(std::stop_token stop) {
  bool busySinceTrim = false;
  auto lastTrim = std::chrono::steady_clock::now();
  while (!stop.stop_requested()) {
    if (busySinceTrim && std::chrono::steady_clock::now() - lastTrim >= kBusyTrimInterval) {
      releaseFreedMemory();
      lastTrim = std::chrono::steady_clock::now();
    }
    std::shared_ptr<GenerationJob> job;
    {
      std::unique_lock lock(m_mutex);
      if (busySinceTrim &&
          !m_cv.wait_for(lock, stop, kIdleTrimDelay, [&] { return !m_queue.empty(); })) {
        if (stop.stop_requested()) return;
        lock.unlock();
        releaseFreedMemory();
        lastTrim = std::chrono::steady_clock::now();
        busySinceTrim = false;
        continue;
      }
      if (!m_cv.wait(lock, stop, [&] { return !m_queue.empty(); })) return;
      job = std::move(m_queue.front());
      m_queue.pop_front();
    }
    busySinceTrim = true;
    if (job->stopToken().stop_requested()) {
      job->finish({"cancelled", {}, 0, 0, 0});
      continue;
    }
    try {
      execute(*job);
    } catch (const std::exception& e) {
      // The engine's cache only records K/V that were written completely; start the next
      // request from an empty sequence all the same (its cached pages stay reusable).
      try { m_backend->truncate_cache(0); } catch (...) {}
      job->finish({"error", e.what(), 0, 0, 0});
    }
  }
}

void Scheduler::execute(GenerationJob& job) {
  const auto& s = job.settings();
  const std::vector<std::int32_t>& prompt = s.promptIds;
  GenerationJob::Outcome out;
  out.promptTokens = static_cast<int>(prompt.size());
  if (prompt.empty()) throw Error(ErrorKind::invalid_argument, "empty prompt");
  if (static_cast<int>(prompt.size()) >= m_capacity)
    throw Error(ErrorKind::invalid_argument, "the prompt (" + std::to_string(prompt.size()) +
                                                 " tokens) does not fit the context of " + std::to_string(m_capacity) +
                                                 " tokens");

  // Prefix reuse through the engine's cache (earlier requests' pages, shared system prompts);
  // at least the last prompt token runs, for the logits.
  const int cached = m_backend->reuse_prefix(prompt, static_cast<int>(prompt.size()) - 1);
  out.cachedTokens = cached;

  std::vector<float> logits;
  const auto rest = std::span(prompt).subspan(static_cast<std::size_t>(cached));
  const std::stop_token stop = job.stopToken();
  if (prefill(*m_backend, rest, m_maxChunk, LogitsWanted::last, logits, stop) < rest.size()) {
    out.finishReason = "cancelled";  // between prefill chunks: the cache holds a valid prefix
    job.finish(std::move(out));
    return;
  }

  SamplerSettings ss = s.sampler;
  if (ss.vocab_limit == 0 && m_tokenizer) ss.vocab_limit = std::min(m_tokenizer->vocab_size(), m_backend->vocab_size());
  Sampler sampler(ss);
  TextStream text(m_tokenizer, s.stopStrings, true);
  std::vector<std::int32_t> context = prompt;
  out.finishReason = "length";
  const int vocab = m_backend->vocab_size();
  // The first id from the prefill's logits; every later one straight from the backend
  // (forward_sample: a CUDA backend samples on the device, so no logits row crosses to the host).
  std::int32_t id = sampler.sample(std::span<const float>(logits.data(), vocab), context);
  for (int produced = 0; produced < s.maxTokens; ++produced) {
    if (stop.stop_requested()) {
      out.finishReason = "cancelled";
      break;
    }
    if (std::find(m_eos.begin(), m_eos.end(), id) != m_eos.end()) {
      out.finishReason = "stop";
      break;
    }
    context.push_back(id);
    ++out.completionTokens;
    job.pushText(text.push(id));
    if (text.stopped()) {
      out.finishReason = "stop";
      break;
    }
    if (produced + 1 >= s.maxTokens) break;
    if (m_backend->cache_length() + 1 > m_capacity) break;  // "length": the context is full
    const std::int32_t one[1] = {id};
    id = m_backend->forward_sample(one, sampler, context);
  }
  if (!text.stopped()) job.pushText(text.flush());
  job.finish(std::move(out));
}

}  // namespace exl::server

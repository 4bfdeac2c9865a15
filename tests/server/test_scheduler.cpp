// The server's scheduler on the fixture model (CPU): prefix reuse across jobs gives the same
// tokens as a cold cache, a full queue refuses, a cancelled job stops.
#include <chrono>
#include <memory>
#include <string>

#include "exl/backend.h"
#include "exl/model.h"
#include "exl/server/scheduler.h"
#include "exl_test.h"

using namespace exl;
using namespace exl::server;

namespace {

struct Fixture {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Scheduler> scheduler;
};

Fixture open(int queue) {
  Fixture f;
  f.model = Model::open(test::fixture("models/exl2/ref-s-4.0bpw"));
  BackendOptions bo;
  bo.threads = 2;
  auto backend = make_cpu_backend(bo);
  backend->load(f.model);
  CacheOptions co;
  co.max_seq_len = 512;
  backend->allocate_cache(co);
  f.scheduler = std::make_unique<Scheduler>(std::move(backend), f.model->tokenizer(), queue, 64);
  return f;
}

std::shared_ptr<GenerationJob> job(const Fixture& f, const std::string& prompt, int maxTokens) {
  GenerationJob::Settings s;
  s.promptIds = f.model->tokenizer()->encode(prompt, false, true);
  s.sampler.greedy = true;
  s.maxTokens = maxTokens;
  return std::make_shared<GenerationJob>(std::move(s));
}

}  // namespace

EXL_TEST(server_scheduler, prefix_reuse_matches_cold_cache) {
  Fixture f = open(4);
  const std::string base = "The quick brown fox jumps over the lazy dog. Once upon a time";
  auto cold = job(f, base + " there", 12);
  CHECK(f.scheduler->submit(cold));
  const auto o1 = cold->waitFinished();
  CHECK_EQ(o1.cachedTokens, 0);
  CHECK_EQ(o1.completionTokens, 12);
  const std::string coldText = cold->takeAll();

  auto other = job(f, base + " a", 5);  // shares the prefix, differs at the end
  CHECK(f.scheduler->submit(other));
  const auto o2 = other->waitFinished();
  CHECK(o2.cachedTokens > 5);
  CHECK(o2.cachedTokens < o2.promptTokens);

  auto again = job(f, base + " there", 12);  // same prompt as the first: same greedy text
  CHECK(f.scheduler->submit(again));
  const auto o3 = again->waitFinished();
  CHECK_EQ(o3.cachedTokens, o3.promptTokens - 1);
  CHECK_EQ(again->takeAll(), coldText);
}

EXL_TEST(server_scheduler, full_queue_refuses_and_cancel_stops) {
  Fixture f = open(1);
  auto running = job(f, "Hello", 400);
  CHECK(f.scheduler->submit(running));
  // Wait until the worker took it (the queue is empty again).
  for (int i = 0; i < 500 && f.scheduler->queued() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto waiting = job(f, "Hello", 4);
  CHECK(f.scheduler->submit(waiting));
  auto refused = job(f, "Hello", 4);
  CHECK(!f.scheduler->submit(refused));
  running->cancel();
  const auto o = running->waitFinished();
  CHECK_EQ(o.finishReason, std::string("cancelled"));
  CHECK(o.completionTokens < 400);
  CHECK_EQ(waiting->waitFinished().completionTokens, 4);
}

EXL_TEST(server_scheduler, cancelled_queued_jobs_give_their_place) {
  Fixture f = open(1);
  auto running = job(f, "Hello", 400);
  CHECK(f.scheduler->submit(running));
  for (int i = 0; i < 500 && f.scheduler->queued() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto abandoned = job(f, "Hello", 4);
  CHECK(f.scheduler->submit(abandoned));
  abandoned->cancel();  // its client left while it waited
  auto next = job(f, "Hello", 4);
  CHECK(f.scheduler->submit(next));  // the queue of one has room again
  const auto a = abandoned->waitFinishedFor(std::chrono::milliseconds(0));
  CHECK(a.has_value() && a->finishReason == "cancelled" && a->completionTokens == 0);
  running->cancel();
  CHECK_EQ(next->waitFinished().completionTokens, 4);
}

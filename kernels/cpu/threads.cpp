// Persistent thread pool behind parallel_for. Workers are created once (lazily, on first use or
// after set_cpu_threads) and sleep on a condition variable between jobs; a job is split into
// contiguous chunks handed out through an atomic counter, and the calling thread works too.
// Nested or concurrent calls (from a worker, or while another caller owns the pool) run inline
// on the calling thread, so parallel_for never deadlocks.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "exl/kernels/threads.h"

namespace exl {

namespace {

thread_local bool t_in_pool_job = false;

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return int(workers_.size()) + 1; }

  // Runs the job with the workers; returns when every chunk is done.
  void run(std::int64_t n, std::int64_t chunk, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = &fn;
      n_ = n;
      chunk_ = chunk;
      next_.store(0, std::memory_order_relaxed);
      active_ = int(workers_.size());
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lk(mu_);
    done_cv_.wait(lk, [this] { return active_ == 0; });
    fn_ = nullptr;
  }

 private:
  void work() {
    const bool was = t_in_pool_job;
    t_in_pool_job = true;
    for (;;) {
      const std::int64_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (b >= n_) break;
      (*fn_)(b, std::min(n_, b + chunk_));
    }
    t_in_pool_job = was;
  }

  void worker_loop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> lk(mu_);
      if (--active_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  bool stop_ = false;
  std::uint64_t generation_ = 0;
  int active_ = 0;
  const std::function<void(std::int64_t, std::int64_t)>* fn_ = nullptr;
  std::int64_t n_ = 0, chunk_ = 1;
  std::atomic<std::int64_t> next_{0};
};

std::mutex g_pool_mu;  // owned by the caller that currently runs a job (or reconfigures)
std::unique_ptr<ThreadPool> g_pool;
std::atomic<int> g_threads{0};

int default_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }

}  // namespace

int cpu_threads() {
  const int t = g_threads.load();
  return t > 0 ? t : default_threads();
}

void set_cpu_threads(int n) {
  std::lock_guard<std::mutex> lk(g_pool_mu);
  g_threads.store(n > 0 ? n : default_threads());
  g_pool.reset();
}

void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const int threads = cpu_threads();
  if (threads <= 1 || n <= grain || t_in_pool_job) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> lk(g_pool_mu, std::try_to_lock);
  if (!lk.owns_lock()) {  // another thread is using the pool: run inline
    fn(0, n);
    return;
  }
  if (!g_pool || g_pool->size() != threads) g_pool = std::make_unique<ThreadPool>(threads);
  // A few chunks per thread balance load when a core is busy elsewhere; never below grain.
  const std::int64_t chunks = std::min<std::int64_t>((n + grain - 1) / grain, std::int64_t(threads) * 4);
  const std::int64_t chunk = (n + chunks - 1) / chunks;
  g_pool->run(n, chunk, fn);
}

}  // namespace exl

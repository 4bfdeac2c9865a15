// Persistent thread pool behind parallel_for. Workers are created once (lazily, on first use or
// after set_cpu_threads); a job is split into contiguous chunks handed out through an atomic
// counter, and the calling thread works too. A decode step runs a few hundred short jobs, so
// hand-over latency matters more than anything else here: a worker that finishes a job spins
// (with a pause instruction) for a short while watching for the next one before it sleeps on
// the condition variable, and the caller spins while the workers finish their last chunks. A
// futex wake per job cost more than the second core gained (bench/RESULTS.md, CPU backend).
// Nested or concurrent calls (from a worker, or while another caller owns the pool) run inline
// on the calling thread, so parallel_for never deadlocks.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "exl/kernels/threads.h"

namespace exl {

namespace {

thread_local bool t_in_pool_job = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or `limit` has passed; returns done(). Every 64 rounds it checks the clock
// and yields the core, so that with more threads than free cores (other programs, or a thread
// count above the core count) a spinning thread does not hold up the one doing the work.
template <class Done>
bool spin_until(Done done, std::chrono::microseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= end) return done();
      std::this_thread::yield();
    }
  }
}

// How long a worker watches for the next job, and the caller for the workers' last chunks,
// before sleeping: longer than the gaps between a decode step's jobs, short enough that an idle
// pool costs nothing noticeable.
constexpr std::chrono::microseconds k_worker_spin{200};
constexpr std::chrono::microseconds k_caller_spin{2000};

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_.store(true, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int size() const { return int(workers_.size()) + 1; }

  // Runs the job with the workers; returns when every chunk is done.
  void run(std::int64_t n, std::int64_t chunk, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    // The job's fields are published by the release increment of generation_ (a worker reads
    // them only after seeing the new generation), and workers touch them only between that and
    // their decrement of active_.
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    active_.store(int(workers_.size()), std::memory_order_relaxed);
    bool wake = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      generation_.fetch_add(1, std::memory_order_release);
      wake = sleepers_ > 0;
    }
    if (wake) cv_.notify_all();
    work();
    auto finished = [this] { return active_.load(std::memory_order_acquire) == 0; };
    if (!spin_until(finished, k_caller_spin)) {
      std::unique_lock<std::mutex> lk(mu_);
      caller_waiting_ = true;
      done_cv_.wait(lk, finished);
      caller_waiting_ = false;
    }
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
      auto changed = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(changed, k_worker_spin)) {
        // Asleep only after the predicate was checked under the lock that run() increments
        // the generation under (and reads sleepers_ under): no lost wake-up.
        std::unique_lock<std::mutex> lk(mu_);
        ++sleepers_;
        cv_.wait(lk, changed);
        --sleepers_;
      }
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      work();
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lk(mu_);
        if (caller_waiting_) done_cv_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> active_{0};
  int sleepers_ = 0;             // workers waiting on cv_ (guarded by mu_)
  bool caller_waiting_ = false;  // run() waiting on done_cv_ (guarded by mu_)
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

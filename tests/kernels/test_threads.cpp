// parallel_for: covers every index exactly once with disjoint chunks of at least `grain`
// items (except the last), works for tiny and empty ranges, nested calls and repeated use,
// and follows set_cpu_threads.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "compare.h"
#include "exl/kernels/threads.h"
#include "exl_test.h"

using namespace exl;

EXL_TEST(threads, covers_range_exactly_once) {
  for (int threads : {1, 2, 4}) {
    test::CpuConfig cfg(true, threads);
    CHECK_EQ(cpu_threads(), threads);
    for (std::int64_t n : {0, 1, 5, 64, 1000, 100003}) {
      for (std::int64_t grain : {1, 7, 1000}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<bool> bad_chunk{false};
        parallel_for(n, grain, [&](std::int64_t b, std::int64_t e) {
          if (b >= e || b < 0 || e > n || (e - b < grain && e != n)) bad_chunk = true;
          for (std::int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        CHECK(!bad_chunk);
        for (std::int64_t i = 0; i < n; ++i) CHECK_EQ(hits[i].load(), 1);
      }
    }
  }
}

EXL_TEST(threads, uses_several_threads_and_nests) {
  test::CpuConfig cfg(true, 2);
  std::atomic<int> total{0};
  std::vector<std::thread::id> ids(64);
  for (int rep = 0; rep < 200; ++rep) {
    parallel_for(64, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        ids[i] = std::this_thread::get_id();
        // a nested call runs inline and still covers its range
        parallel_for(10, 1, [&](std::int64_t nb, std::int64_t ne) { total += int(ne - nb); });
      }
    });
  }
  CHECK_EQ(total.load(), 200 * 64 * 10);
}

EXL_TEST(threads, concurrent_callers) {
  test::CpuConfig cfg(true, 2);
  std::atomic<std::int64_t> sum{0};
  auto job = [&] {
    for (int rep = 0; rep < 100; ++rep)
      parallel_for(1000, 10, [&](std::int64_t b, std::int64_t e) {
        std::int64_t s = 0;
        for (std::int64_t i = b; i < e; ++i) s += i;
        sum += s;
      });
  };
  std::thread a(job), b(job);
  a.join();
  b.join();
  CHECK_EQ(sum.load(), std::int64_t(2) * 100 * (999 * 1000 / 2));
}

// The hand-over paths: back-to-back jobs (workers and caller spinning), jobs after pauses longer
// than a worker's spin (workers asleep on the condition variable), and jobs whose chunks outlast
// the caller's spin (the caller asleep until the last worker finishes).
EXL_TEST(threads, hand_over_spinning_and_sleeping) {
  test::CpuConfig cfg(true, 3);
  auto run_job = [](std::int64_t n, int chunk_us) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      if (chunk_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(chunk_us));
      for (std::int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    int bad = 0;
    for (auto& h : hits) bad += h.load() != 1;
    return bad;
  };
  int bad = 0;
  for (int rep = 0; rep < 20000; ++rep) bad += run_job(1 + rep % 37, 0);
  CHECK_EQ(bad, 0);
  for (int rep = 0; rep < 20; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + rep % 3));
    bad += run_job(16, 0);
  }
  CHECK_EQ(bad, 0);
  for (int rep = 0; rep < 10; ++rep) bad += run_job(12, 3000 + 500 * (rep % 3));
  CHECK_EQ(bad, 0);
}

// A small fixed thread pool for the CPU kernels. parallel_for splits [0, n) into contiguous
// chunks, runs them on the pool and the calling thread, and returns when all are done.
#pragma once
#include <cstdint>
#include <functional>

namespace exl {

// Number of worker threads used by the CPU kernels (default: hardware concurrency).
int cpu_threads();
void set_cpu_threads(int n);

// Calls fn(begin, end) on disjoint chunks covering [0, n); at least `grain` items per chunk.
void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace exl

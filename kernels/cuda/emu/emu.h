// The CUDA emulator: runs the module's kernels on the CPU so that their protocols (barriers,
// warp collectives, mbarriers, bulk copies, grid-wide counters) are tested where no GPU is
// present (CI). Kernel sources are compiled as C++ with EXL_CUDA_EMU defined and this header
// forced in first (kernels/cuda/emu/CMakeLists.txt); every PTX primitive of the kernels has an
// EXL_CUDA_EMU branch that calls the functions below.
//
// Execution model: every CUDA thread of a launch is a fiber; all blocks of the grid run at once
// (a persistent grid that waits on itself works as on a GPU that holds it). One OS thread
// switches between the fibers at the primitives only: warp collectives (shuffles, __syncwarp,
// mma, ldmatrix), block barriers, mbarrier tests, atomics and acquiring loads. Memory is
// sequentially consistent between those points, so this checks logic and protocols (who waits
// for what, parities, counts, indices, deadlocks), not the GPU's memory model. Bulk copies land
// a random number of scheduler rounds after they are issued (seeded), so a consumer that reads
// before its barrier completes reads stale bytes. A round in which no thread can move is a
// deadlock: emulated time jumps by 20 s (the kernels' own 10-second traps fire and say which
// wait), then the launch fails with every warp's wait listed.
//
// Device memory is host memory: cudaMalloc and friends (emu.cpp) keep a table of allocations,
// against which bulk copies are bounds-checked. Launches run synchronously.
#pragma once
#ifndef EXL_CUDA_EMU
#error "emu.h is for the emulator build only"
#endif

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>

namespace exl::emu {

// ---- the current thread ----
unsigned char* dynamic_smem();
// Storage shared by a block (a kernel's static __shared__ variable), keyed by `key`.
void* block_static(const void* key, std::size_t bytes);
template <class T>
T& block_static_ref(const void* key) {
  return *static_cast<T*>(block_static(key, sizeof(T)));
}

// ---- scheduling ----
// Hands the OS thread to the next fiber. `waiting`: the caller re-checks a condition that only
// another thread can change (no progress of its own).
void yield(bool waiting);
void progress();
[[noreturn]] void trap();
std::uint64_t now_ns();   // emulated %globaltimer
long long clock();        // emulated clock64

// ---- warp collectives (every lane of `mask` calls the same one) ----
std::uint64_t shfl(unsigned mask, std::uint64_t v, int src_lane_of_each, int kind);
void syncwarp(unsigned mask);
int lane();  // the running thread's lane
void mma_f16_f32(int k, float (&c)[4], const std::uint32_t* a, const std::uint32_t* b);
void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_addr, bool trans);

// ---- block barriers ----
void bar_sync(int id, int threads);  // bar.sync id, threads (0 threads: the whole block)

// ---- memory ----
void fence();
unsigned ld_acquire(const unsigned* p);
template <class T>
T atomic_add(T* p, T v) {
  const T old = *p;
  *p = old + v;
  progress();
  yield(false);
  return old;
}

// ---- mbarriers and bulk copies (sm_90) ----
void mbar_init(std::uint64_t* bar, unsigned count);
void mbar_arrive(std::uint64_t* bar, unsigned expect_tx_bytes);
bool mbar_test_parity(std::uint64_t* bar, unsigned parity);
void bulk_copy(void* dst_smem, const void* src, unsigned bytes, std::uint64_t* bar);

// ---- fp16 helpers for the emulated instructions ----
std::uint32_t hfma2(std::uint32_t a, std::uint32_t b, std::uint32_t c);

// ---- host side ----
using KernelBody = std::function<void()>;
// Runs a grid to completion, or records it on a stream being captured into a graph (cudaError_t
// of the launch: a trap or deadlock is cudaErrorLaunchFailure, the reason printed to stderr).
cudaError_t launch(dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream, const void* kernel, KernelBody body);
// The emulated device (before the first use): multiprocessors (the persistent kernels' grid),
// the seed of the scheduler's order and copy delays.
void configure(int sm_count, std::uint64_t seed);
struct Stats {
  std::uint64_t launches = 0, bulk_copies = 0;
};
Stats stats();

}  // namespace exl::emu

// ---- CUDA built-ins and intrinsics ----
#define __launch_bounds__(...)
// The running thread's indices: set by the scheduler each time it switches to a thread.
extern uint3 threadIdx, blockIdx;
extern dim3 gridDim, blockDim;

template <class T> inline T __ldg(const T* p) { return *p; }
// The upper 32 bits of (hi:lo) << (shift & 31).
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return unsigned((v << (shift & 31u)) >> 32);
}
// Four-way byte dot product with accumulate (unsigned form).
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
  for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xFFu) * ((b >> i) & 0xFFu);
  return c;
}
// Single-rounding fp32 arithmetic (no contraction into a fused multiply-add on the GPU).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { volatile float p = a * b; return p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }

inline void __syncthreads() { ::exl::emu::bar_sync(0, 0); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::exl::emu::syncwarp(mask); }
inline void __threadfence() { ::exl::emu::fence(); }
inline void __threadfence_block() {}
inline long long clock64() { return ::exl::emu::clock(); }
[[noreturn]] inline void __trap() { ::exl::emu::trap(); }

namespace exl::emu::detail {
template <class T>
std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8);
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
}  // namespace exl::emu::detail

// kind: 0 idx, 1 up, 2 down, 3 xor (the source lane is computed per lane in emu.cpp)
template <class T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return ::exl::emu::detail::from_bits<T>(::exl::emu::shfl(mask, ::exl::emu::detail::to_bits(v), src | (width << 8), 0));
}
template <class T> inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return ::exl::emu::detail::from_bits<T>(::exl::emu::shfl(mask, ::exl::emu::detail::to_bits(v), int(d) | (width << 8), 1));
}
template <class T> inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
  return ::exl::emu::detail::from_bits<T>(::exl::emu::shfl(mask, ::exl::emu::detail::to_bits(v), int(d) | (width << 8), 2));
}
template <class T> inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
  return ::exl::emu::detail::from_bits<T>(::exl::emu::shfl(mask, ::exl::emu::detail::to_bits(v), m | (width << 8), 3));
}

// Bit l set where lane l's predicate holds (lanes of the mask; every lane in it takes part).
inline unsigned __ballot_sync(unsigned mask, int pred) {
  unsigned b = pred ? 1u << ::exl::emu::lane() : 0u;
  for (int o = 16; o > 0; o >>= 1) b |= __shfl_xor_sync(mask, b, o);
  return b & mask;
}
inline int __ffs(int x) { return x ? __builtin_ctz(static_cast<unsigned>(x)) + 1 : 0; }

inline float atomicAdd(float* p, float v) { return ::exl::emu::atomic_add(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return ::exl::emu::atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return ::exl::emu::atomic_add(p, v); }
inline float __expf(float x) { return std::exp(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline unsigned long long __float2ull_rn(float x) { return static_cast<unsigned long long>(std::nearbyint(x)); }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline unsigned __float_as_uint(float x) { return ::exl::emu::detail::from_bits<unsigned>(::exl::emu::detail::to_bits(x)); }
inline float __uint_as_float(unsigned x) { return ::exl::emu::detail::from_bits<float>(::exl::emu::detail::to_bits(x)); }
inline std::size_t __cvta_generic_to_shared(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// CUDA's integer min/max.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }

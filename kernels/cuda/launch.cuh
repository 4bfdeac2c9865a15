// Kernel launches with programmatic dependent launch (PDL, sm_90+): a kernel launched with
// `launch` may start while the kernel before it in the stream is still running. Every kernel of
// the module therefore follows one protocol:
//   - before pdl_wait() it reads only data that no kernel writes (weights, tables, permutations)
//     and writes only its own shared memory (the EXL2 GEMV streams its first weights there);
//   - pdl_wait() returns once the previous kernel has completed and its writes are visible;
//     since every kernel waits before it exits, this orders it after all earlier kernels too;
//   - pdl_trigger() (called early) lets the next kernel's blocks be scheduled.
// Without PDL (older GPUs, EXL_CUDA_PDL=0, or set_pdl(false)) both are no-ops and launches are
// plain stream-ordered launches. Graph capture keeps the programmatic edges.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "cuda_check.h"

namespace exl::cuda {

// ---- per-device settings: each GPU of a layer split has its own ----

constexpr int k_max_devices = 64;  // devices past this are served, only not cached

inline int current_device() {
  int d = 0;
  EXL_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

// A device attribute of the current device, read once per device.
template <cudaDeviceAttr A>
int device_attribute() {
  static std::atomic<int> cached[k_max_devices] = {};
  const int dev = current_device();
  if (dev < k_max_devices)
    if (const int v = cached[dev].load(std::memory_order_relaxed)) return v;
  int v = 0;
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&v, A, dev));
  if (dev < k_max_devices) cached[dev].store(v, std::memory_order_relaxed);
  return v;
}

// Lets `Kernel` launch with `bytes` of dynamic shared memory (above the default 48 KB) on the
// current device. The limit is an attribute per device and kernel, so it is set on each device
// once (again only for a larger request), not once per process.
template <auto Kernel>
void opt_in_smem(std::size_t bytes) {
  static std::atomic<std::size_t> set[k_max_devices] = {};
  const int dev = current_device();
  if (dev < k_max_devices && set[dev].load(std::memory_order_relaxed) >= bytes) return;
  EXL_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(Kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(bytes)));
  if (dev < k_max_devices) set[dev].store(bytes, std::memory_order_relaxed);
}

// Whether launches carry the PDL attribute (default: on for compute capability 9.0 and newer,
// decided by the backend at creation).
bool pdl_enabled();
void set_pdl(bool on);

#ifdef EXL_CUDA_EMU
// The emulator runs a launch at once (kernels/cuda/emu/emu.h), each thread calling the kernel with
// its own copy of the arguments.
template <class... KArgs, class... Args>
cudaError_t emu_launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
                       Args&&... args) {
  auto a = std::make_shared<std::tuple<std::decay_t<KArgs>...>>(std::forward<Args>(args)...);
  return ::exl::emu::launch(grid, block, smem, s, reinterpret_cast<const void*>(kernel),
                            [a, kernel] { std::apply(kernel, *a); });
}
#endif

// `pdl` false: a plain launch (for a kernel that follows a copy or a host-side step).
template <class... KArgs, class... Args>
void launch_ex(bool pdl, void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
               Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl && pdl_enabled() ? 1 : 0;
#ifdef EXL_CUDA_EMU
  EXL_CUDA_CHECK(emu_launch(kernel, grid, block, smem, s, std::forward<Args>(args)...));
#else
  EXL_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
#endif
}

template <class... KArgs, class... Args>
void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s, Args&&... args) {
  launch_ex(true, kernel, grid, block, smem, s, std::forward<Args>(args)...);
}

}  // namespace exl::cuda

#ifdef EXL_CUDA_EMU
#define EXL_NOINLINE __attribute__((noinline))
#else
#define EXL_NOINLINE __noinline__
#endif

// A kernel's dynamic shared memory: `T* name` (T may carry an __align__).
#ifdef EXL_CUDA_EMU
#define EXL_DYNAMIC_SMEM(T, name) T* name = reinterpret_cast<T*>(::exl::emu::dynamic_smem())
#else
#define EXL_DYNAMIC_SMEM(T, name) extern __shared__ T name[]
#endif

// A kernel's static shared variable (a block-wide variable under the emulator, too).
// EXL_SHARED_ARRAY(float, s, [4][64]) declares `__shared__ float s[4][64]`.
#ifdef EXL_CUDA_EMU
#define EXL_BLOCK_SHARED(T, name) \
  static const char name##_key = 0; \
  T& name = ::exl::emu::block_static_ref<T>(&name##_key)
#define EXL_SHARED_ARRAY(T, name, dims) \
  static const char name##_key = 0; \
  T(&name) dims = *static_cast<T(*) dims>(::exl::emu::block_static(&name##_key, sizeof(T dims)))
#else
#define EXL_BLOCK_SHARED(T, name) __shared__ T name
#define EXL_SHARED_ARRAY(T, name, dims) __shared__ T name dims
#endif

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Counters shared between the blocks of a grid: an acquiring load and an acquire-release add
// (returns the old value), device scope.
#if defined(EXL_CUDA_EMU)
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) { return ::exl::emu::ld_acquire(p); }
__device__ __forceinline__ unsigned atom_acq_rel_add(unsigned* p, unsigned v) { return ::exl::emu::atomic_add(p, v); }
#elif defined(__CUDACC__)
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned atom_acq_rel_add(unsigned* p, unsigned v) {
  unsigned t;
  asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], %2;\n" : "=r"(t) : "l"(p), "r"(v) : "memory");
  return t;
}
#endif
#if defined(__CUDACC__) || defined(EXL_CUDA_EMU)

// "Last block" ticket of a split reduction: call once every thread of the block has stored its
// share (plain or .cg stores); returns true in the block that arrives count-th, whose threads may
// then read all blocks' shares. One acq_rel atomic by thread 0, ordered with the rest of the block
// by the barriers around it (the pattern of CUTLASS's GenericBarrier), instead of a full fence in
// every thread before and after.
__device__ __forceinline__ bool last_block_arrival(unsigned* counter, unsigned count) {
  EXL_BLOCK_SHARED(unsigned, s_ticket);
  __syncthreads();
  if (threadIdx.x == 0) s_ticket = atom_acq_rel_add(counter, 1u);
  __syncthreads();
  return s_ticket == count - 1;
}
#endif

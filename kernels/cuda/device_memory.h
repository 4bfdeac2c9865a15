// RAII owners for every CUDA handle the module uses: device buffers (through an Allocator that
// counts allocations and enforces the VRAM budget), pinned host buffers, streams, events, the
// cuBLAS handle and CUDA graphs. Destructors never throw; failures in them are ignored.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "cuda_check.h"

namespace exl::cuda {

// Counts device memory of one backend; refuses allocations past `limit` (0 = none).
struct Allocator {
  std::uint64_t limit = 0;
  std::uint64_t in_use = 0;
  std::uint64_t allocations = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Allocator* a, std::size_t bytes, const char* what) { allocate(a, bytes, what); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) { reset(); swap(o); }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void allocate(Allocator* a, std::size_t bytes, const char* what) {
    reset();
    if (bytes == 0) return;
    if (a && a->limit && a->in_use + bytes > a->limit)
      throw_status(EXL_CUDA_ERR_OUT_OF_MEMORY,
                   std::string("VRAM budget exceeded allocating ") + what + " (" + std::to_string(bytes >> 20) +
                       " MiB; " + std::to_string(a->in_use >> 20) + " of " + std::to_string(a->limit >> 20) +
                       " MiB in use)");
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw_status(e == cudaErrorMemoryAllocation ? EXL_CUDA_ERR_OUT_OF_MEMORY : EXL_CUDA_ERR_CUDA,
                   std::string("cudaMalloc of ") + std::to_string(bytes >> 20) + " MiB for " + what +
                       " failed: " + cudaGetErrorString(e));
    }
    ptr_ = p; bytes_ = bytes; alloc_ = a;
    if (a) { a->in_use += bytes; ++a->allocations; }
  }
  void reset() noexcept {
    if (ptr_) {
      (void)cudaFree(ptr_);
      if (alloc_) alloc_->in_use -= bytes_;
    }
    ptr_ = nullptr; bytes_ = 0; alloc_ = nullptr;
  }
  template <class T = void> T* get() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_); std::swap(bytes_, o.bytes_); std::swap(alloc_, o.alloc_);
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Allocator* alloc_ = nullptr;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  // portable: pinned for every device's context (a buffer two GPUs copy through), not only the
  // current one's.
  explicit PinnedBuffer(std::size_t bytes, bool portable = false) {
    if (bytes) EXL_CUDA_CHECK(cudaHostAlloc(&ptr_, bytes, portable ? cudaHostAllocPortable : cudaHostAllocDefault));
    bytes_ = bytes;
  }
  ~PinnedBuffer() { if (ptr_) (void)cudaFreeHost(ptr_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) (void)cudaFreeHost(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr); bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  template <class T = void> T* get() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { EXL_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { if (s_) (void)cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { EXL_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { EXL_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { if (e_) (void)cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle() { EXL_CUBLAS_CHECK(cublasCreate(&h_)); }
  ~CublasHandle() { if (h_) (void)cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() { reset(); }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  void reset() noexcept {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
    exec_ = nullptr; graph_ = nullptr;
  }
  // Takes ownership of a captured graph and instantiates it.
  void instantiate(cudaGraph_t g) {
    reset();
    graph_ = g;
    EXL_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  // Captures what `body` enqueues on `s` (thread-local capture mode) and instantiates it; a throw
  // from `body` ends the capture, drops the partial graph and propagates.
  template <class Body> void capture(cudaStream_t s, Body&& body) {
    EXL_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t g = nullptr;
    try {
      body();
    } catch (...) {
      (void)cudaStreamEndCapture(s, &g);
      if (g) (void)cudaGraphDestroy(g);
      throw;
    }
    EXL_CUDA_CHECK(cudaStreamEndCapture(s, &g));
    instantiate(g);
  }
  bool ready() const { return exec_ != nullptr; }
  void launch(cudaStream_t s) const { EXL_CUDA_CHECK(cudaGraphLaunch(exec_, s)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Makes `device` current for the calling thread.
inline void use_device(int device) { EXL_CUDA_CHECK(cudaSetDevice(device)); }

// The CUDA devices present: 0 where the runtime finds none (that error cleared), an exception for
// any other failure (no driver, a driver too old).
inline int device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice) {
    (void)cudaGetLastError();
    return 0;
  }
  if (e != cudaSuccess) ::exl::cuda::throw_cuda(e, "cudaGetDeviceCount", __FILE__, __LINE__);
  return n;
}

// A device index from the user, checked against the device count before any call takes it (so a
// wrong index is EXL_CUDA_ERR_NO_DEVICE with the count, not a failed CUDA call).
inline void check_device_index(int device) {
  const int n = device_count();
  if (device < 0 || device >= n)
    throw_status(EXL_CUDA_ERR_NO_DEVICE, "CUDA device " + std::to_string(device) + " does not exist (" +
                                             std::to_string(n) + (n == 1 ? " device)" : " devices)"));
}

}  // namespace exl::cuda

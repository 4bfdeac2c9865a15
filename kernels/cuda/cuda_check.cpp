// Error state, log sink and the CUDA/cuBLAS failure translation of the exl_cuda module.
#include "cuda_check.h"

#include <atomic>
#include <mutex>

namespace exl::cuda {
namespace {

thread_local std::string t_last_error;
std::mutex g_log_mutex;
exl_cuda_log_fn g_log_fn = nullptr;
void* g_log_user = nullptr;

int status_of(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation: return EXL_CUDA_ERR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice: return EXL_CUDA_ERR_NO_DEVICE;
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorCompatNotSupportedOnDevice: return EXL_CUDA_ERR_NO_DRIVER;
    default: return EXL_CUDA_ERR_CUDA;
  }
}

}  // namespace

void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
  (void)cudaGetLastError();  // clear a sticky launch error so later calls report their own
  throw CudaFailure{status_of(e), std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                                      cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line)};
}

void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  const int st = s == CUBLAS_STATUS_ALLOC_FAILED ? EXL_CUDA_ERR_OUT_OF_MEMORY : EXL_CUDA_ERR_CUBLAS;
  throw CudaFailure{st, std::string(call) + " failed: " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) +
                            ") at " + file + ":" + std::to_string(line)};
}

void throw_status(int status, const std::string& message) { throw CudaFailure{status, message}; }

void set_last_error(const std::string& message) { t_last_error = message; }
const char* last_error_message() { return t_last_error.c_str(); }

void set_log_sink(exl_cuda_log_fn fn, void* user) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log_fn = fn;
  g_log_user = user;
}

void log_message(int level, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  if (g_log_fn) g_log_fn(g_log_user, level, message.c_str());
}

}  // namespace exl::cuda

namespace exl::cuda {
namespace {
std::atomic<bool> g_pdl{false};
}
bool pdl_enabled() { return g_pdl.load(std::memory_order_relaxed); }
void set_pdl(bool on) { g_pdl.store(on, std::memory_order_relaxed); }
}  // namespace exl::cuda

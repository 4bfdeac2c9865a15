// Error handling inside the exl_cuda module. Internally failures are C++ exceptions
// (CudaFailure) carrying an exl_cuda_status and a message naming the call, file and line;
// every C entry point of module_api.h catches them and turns them into a status plus
// last_error(). Nothing aborts, and no exception leaves the module.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "module_api.h"

namespace exl::cuda {

struct CudaFailure {
  int status;
  std::string message;
};

[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line);
[[noreturn]] void throw_status(int status, const std::string& message);

void set_last_error(const std::string& message);
const char* last_error_message();

// The engine's log sink (set through the table); level as exl::LogLevel.
void log_message(int level, const std::string& message);
void set_log_sink(exl_cuda_log_fn fn, void* user);

// Runs `fn` and converts any failure into a status (and last_error()).
template <class F>
int guarded(F&& fn) noexcept {
  try {
    fn();
    set_last_error("");
    return EXL_CUDA_OK;
  } catch (const CudaFailure& f) {
    set_last_error(f.message);
    return f.status;
  } catch (const std::bad_alloc&) {
    set_last_error("host out of memory");
    return EXL_CUDA_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(std::string("internal error: ") + e.what());
    return EXL_CUDA_ERR_INTERNAL;
  } catch (...) {
    set_last_error("internal error: unknown exception");
    return EXL_CUDA_ERR_INTERNAL;
  }
}

}  // namespace exl::cuda

#define EXL_CUDA_CHECK(call)                                                              \
  do {                                                                                    \
    const cudaError_t exl_e_ = (call);                                                    \
    if (exl_e_ != cudaSuccess) ::exl::cuda::throw_cuda(exl_e_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors.
#define EXL_CUDA_CHECK_LAUNCH() EXL_CUDA_CHECK(cudaGetLastError())

#define EXL_CUBLAS_CHECK(call)                                                                     \
  do {                                                                                             \
    const cublasStatus_t exl_s_ = (call);                                                          \
    if (exl_s_ != CUBLAS_STATUS_SUCCESS) ::exl::cuda::throw_cublas(exl_s_, #call, __FILE__, __LINE__); \
  } while (0)

#define EXL_CUDA_REQUIRE(cond, msg)                                                   \
  do {                                                                                \
    if (!(cond)) ::exl::cuda::throw_status(EXL_CUDA_ERR_INVALID, std::string(msg));   \
  } while (0)

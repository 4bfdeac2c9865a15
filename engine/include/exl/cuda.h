// The CUDA backend, reached through the exl_cuda module (libexl_cuda.so) that the engine opens
// at run time: beside the executable, in ../lib/exl-studio, in the build tree, or at
// $EXL_CUDA_MODULE. Without a usable module, driver or device the engine runs on the CPU and
// cuda_available() says why.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exl/backend.h"

namespace exl {

// True when the module loads (ABI and build id match) and at least one device is present;
// otherwise false with the reason in *why.
bool cuda_available(std::string* why = nullptr);

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t total_bytes = 0, free_bytes = 0;
  double peak_bandwidth_gbs = 0.0;
};
// Devices the module sees (throws Error(device) when the module is unusable).
std::vector<CudaDeviceInfo> cuda_devices();

// Measured rates of a device (exl bench's bounds): device copy bandwidth (bytes read + written per
// second, GB/s) and the FP16 tensor-core rate of a cuBLAS GEMM (TFLOP/s). Throws Error(device).
struct CudaDeviceRates {
  double copy_gbs = 0.0;
  double fp16_tflops = 0.0;
};
CudaDeviceRates cuda_device_rates(int device);

// A Backend on device options.device. Throws Error(device) when the module is unusable.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options);

// The module's C table (module_api.h) for tests and benchmarks; nullptr when unavailable.
const void* cuda_module_api();

}  // namespace exl

// exl::cuda_runtime_info(): what the NVIDIA side of this machine offers, for `exl --version` and
// the About dialog (the driver and cuBLAS through cuda_libs, the module through the loader).
#include <cstdio>

#include "cuda_libs.h"
#include "cuda_loader.h"
#include "exl/cuda.h"
#include "exl/error.h"
#include "exl/version.h"

namespace exl {

CudaRuntimeInfo cuda_runtime_info() {
  CudaRuntimeInfo r;
  r.built = true;
  std::string why;
  r.usable = cuda_available(&why);
  r.status = r.usable ? "ok" : why;
  r.module_path = cuda_loader::module_path();
  const cuda_libs::Driver driver = cuda_libs::probe_driver();
  r.driver_version = driver.version;
  r.driver_cuda = cuda_libs::cuda_version_string(driver.cuda_version);
  const cuda_libs::Cublas cublas = cuda_libs::load_cublas();
  r.cublas_version = cublas.version;
  r.cublas_path = cublas.path;
  if (r.usable) {
    try {
      for (const CudaDeviceInfo& d : cuda_devices()) {
        char buf[384];
        std::snprintf(buf, sizeof(buf), "%d: %s (sm_%d%d, %.1f GiB)", d.index, d.name.c_str(), d.cc_major, d.cc_minor,
                      double(d.total_bytes) / (1024.0 * 1024.0 * 1024.0));
        r.devices.emplace_back(buf);
      }
    } catch (const std::exception& e) {
      r.devices.push_back(std::string("(device query failed: ") + e.what() + ")");
    }
  }
  return r;
}

CudaDeviceRates cuda_device_rates(int device) {
  std::string why;
  const exl_cuda_api* api = cuda_loader::api(&why);
  if (!api) throw Error(ErrorKind::device, "CUDA backend unavailable: " + why);
  CudaDeviceRates r;
  cuda_loader::check(api->bench_copy_bandwidth(device, 1ull << 30, &r.copy_gbs), "bench_copy_bandwidth");
  cuda_loader::check(api->bench_fp16_gemm(device, 4096, 4096, 4096, &r.fp16_tflops), "bench_fp16_gemm");
  return r;
}

}  // namespace exl

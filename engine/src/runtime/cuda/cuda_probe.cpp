// exl::cuda_runtime_info(): what the NVIDIA side of this machine offers, for `exl --version` and
// the About dialog (the driver and cuBLAS through cuda_libs, the module through the loader).
#include <cstdio>

#include "cuda_libs.h"
#include "cuda_loader.h"
#include "exl/cuda.h"
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

}  // namespace exl

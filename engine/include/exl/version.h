// What this build is (version, git commit, build type, CUDA architectures built in) and what
// the machine offers at run time (NVIDIA driver, its CUDA version, cuBLAS, devices). Shown by
// `exl --version` and the app's About dialog.
#pragma once
#include <string>
#include <vector>

namespace exl {

struct BuildInfo {
  std::string version;             // project version, e.g. "0.1.0"
  std::string git_commit;          // short hash (+ "-dirty"), "unknown" outside a git checkout
  std::string build_type;          // CMAKE_BUILD_TYPE
  std::string cuda_architectures;  // e.g. "75;80;86;89;90;120"; empty when built without CUDA
  std::string cuda_toolkit;        // CUDA toolkit the module was built with (runtime linked statically)
};
const BuildInfo& build_info();

// Found at run time; every string is empty when the thing was not found.
struct CudaRuntimeInfo {
  bool built = false;              // this build has the CUDA backend module
  bool usable = false;             // the module loaded and sees at least one device
  std::string status;              // "ok" or why the CPU is used (what is missing and how to get it)
  std::string module_path;         // libexl_cuda.so that was (or would be) opened
  std::string driver_version;      // NVIDIA driver, e.g. "580.82.07" (NVML)
  std::string driver_cuda;         // CUDA version the driver supports, e.g. "13.0"
  std::string cublas_version;      // e.g. "13.0.2"
  std::string cublas_path;         // where libcublas was found
  std::vector<std::string> devices;  // "NVIDIA H200 (sm_90, 139.8 GiB)"
};
// Probes the driver, cuBLAS and the module (loads them once; cheap after the first call).
CudaRuntimeInfo cuda_runtime_info();

// Multi-line "key: value" report of both, as `exl --version` prints it.
std::string version_report(const std::string& program);

}  // namespace exl

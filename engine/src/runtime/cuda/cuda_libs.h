// Finds NVIDIA's user-space libraries the exl_cuda module needs at run time: the driver
// (libcuda.so.1, with NVML for its version) and cuBLAS (libcublas.so.N and libcublasLt.so.N of
// the CUDA major version the module was built with). cuBLAS is looked up in the loader's paths
// first, then in the CUDA toolkit's usual locations; messages say what is missing and how to
// get it. Platform details (dlopen) stay in cuda_libs.cpp.
#pragma once
#include <string>

namespace exl::cuda_libs {

// CUDA major version of the toolkit the module was built with (cuBLAS must match it).
int cuda_major();

struct Driver {
  bool found = false;
  std::string version;  // "580.82.07" (NVML), may be empty when NVML is missing
  int cuda_version = 0; // cuDriverGetVersion: 1000 * major + 10 * minor
  std::string problem;  // why the driver is unusable for this build, with what to do; empty when fine
};
Driver probe_driver();

struct Cublas {
  bool found = false;
  std::string version;  // "13.0.2"
  std::string path;     // the libcublas.so.N that was loaded
  std::string problem;  // what is missing and how to get it; empty when found
};
// Loads cuBLAS (and cuBLASLt) once per process with RTLD_GLOBAL so that the module's
// dependency on libcublas.so.N resolves to it, wherever it was found.
Cublas load_cublas();

// "13.0" from 13000.
std::string cuda_version_string(int v);

}  // namespace exl::cuda_libs

// build_info() from the generated header, version_report() for `exl --version` and the app.
#include "exl/version.h"

#include <sstream>

#include "exl_build_info.h"

namespace exl {

const BuildInfo& build_info() {
  static const BuildInfo info{EXL_BUILD_VERSION, EXL_BUILD_GIT_COMMIT, EXL_BUILD_TYPE, EXL_BUILD_CUDA_ARCHS,
                              EXL_BUILD_CUDA_TOOLKIT};
  return info;
}

#ifndef EXL_HAVE_CUDA_LOADER
CudaRuntimeInfo cuda_runtime_info() {
  CudaRuntimeInfo r;
  r.status = "this build has no CUDA backend (configured with EXL_ENABLE_CUDA=OFF)";
  return r;
}
#endif

std::string version_report(const std::string& program) {
  const BuildInfo& b = build_info();
  const CudaRuntimeInfo c = cuda_runtime_info();
  const auto or_none = [](const std::string& s, const char* none) { return s.empty() ? std::string(none) : s; };
  std::ostringstream o;
  o << program << " " << b.version << "\n";
  o << "git commit:          " << b.git_commit << "\n";
  o << "build type:          " << or_none(b.build_type, "(none)") << "\n";
  o << "CUDA architectures:  " << or_none(b.cuda_architectures, "none (built without CUDA)") << "\n";
  if (c.built) {
    o << "CUDA toolkit:        " << b.cuda_toolkit << " (runtime linked into the module)\n";
    o << "CUDA module:         " << or_none(c.module_path, "not found") << "\n";
    o << "NVIDIA driver:       " << or_none(c.driver_version, c.driver_cuda.empty() ? "not found" : "found (version unknown)");
    if (!c.driver_cuda.empty()) o << " (supports CUDA " << c.driver_cuda << ")";
    o << "\n";
    o << "cuBLAS:              "
      << (c.cublas_path.empty() ? std::string("not found") : or_none(c.cublas_version, "found") + " (" + c.cublas_path + ")")
      << "\n";
    for (const std::string& d : c.devices) o << "GPU:                 " << d << "\n";
  }
  o << "backend:             " << (c.usable ? std::string("CUDA") : "CPU (" + c.status + ")") << "\n";
  return o.str();
}

}  // namespace exl

// exl --version: the build (version, git commit, build type, CUDA architectures) and what this
// machine offers at run time (NVIDIA driver and its CUDA version, cuBLAS, GPUs).
#include <cstdio>

#include "commands.h"
#include "exl/version.h"

namespace exl::cli {

int cmd_version() {
  std::fputs(exl::version_report("exl").c_str(), stdout);
  return 0;
}

}  // namespace exl::cli

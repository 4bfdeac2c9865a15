// exl selftest: the test cases of ctest, plus the GPU cases when the CUDA module is usable.
#include <cstdio>

#include "commands.h"
#include "exl/backend.h"
#include "exl/error.h"

#ifdef EXL_WITH_TESTCASES
#include "exl_test.h"
#endif
#if __has_include("exl/cuda.h") && defined(EXL_HAVE_CUDA_LOADER)
#include "exl/cuda.h"
#define EXL_SELFTEST_CUDA 1
#endif

namespace exl::cli {

int cmd_selftest(const Args& a) {
#ifdef EXL_WITH_TESTCASES
  a.check_known({"--fixtures", "--filter", "--list", "--verbose", "--device"});
  auto& o = exl::test::options();
  if (auto f = a.get("--fixtures")) o.fixtures = *f;
  o.filter = a.get_or("--filter", "");
  o.verbose = a.has("--verbose");
  // --device cuda: only the GPU cases, and no GPU is a failure (not a skip); --device cpu: only the
  // CPU cases; default: all, the GPU cases skipped when no GPU is usable.
  const std::string device = a.get_or("--device", "auto");
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) o.cases = exl::test::Options::Cases::gpu_only;
  else if (device == "cpu") o.cases = exl::test::Options::Cases::cpu_only;
  else if (device != "auto") throw Error(ErrorKind::invalid_argument, "must be cpu, cuda or auto", "", "--device");
#ifdef EXL_SELFTEST_CUDA
  std::string why;
  o.gpu_available = cuda_available(&why);
  std::string on;  // the devices the GPU cases run on (the CUDA emulator names itself)
  if (o.gpu_available) {
    try {
      for (const CudaDeviceInfo& d : cuda_devices()) on += (on.empty() ? " on " : ", ") + d.name;
    } catch (const Error&) {
    }
  }
  std::printf("GPU cases: %s\n", o.gpu_available ? ("enabled" + on).c_str() : ("skipped (" + why + ")").c_str());
  if (!o.gpu_available && o.cases == exl::test::Options::Cases::gpu_only) {
    std::fprintf(stderr, "exl selftest --device cuda: no usable GPU (%s)\n", why.c_str());
    return 1;
  }
#else
  std::printf("GPU cases: skipped (this build has no CUDA backend)\n");
  if (o.cases == exl::test::Options::Cases::gpu_only) {
    std::fprintf(stderr, "exl selftest --device cuda: this build has no CUDA backend\n");
    return 1;
  }
#endif
  if (a.has("--list")) {
    for (const auto& c : exl::test::registry())
      std::printf("%s.%s%s\n", c.suite.c_str(), c.name.c_str(), c.needs_gpu ? " [gpu]" : "");
    return 0;
  }
  return exl::test::run_all();
#else
  (void)a;
  std::fprintf(stderr, "exl selftest: this build has no test cases (configure with EXL_BUILD_TESTS=ON)\n");
  return 2;
#endif
}

}  // namespace exl::cli

// exl selftest: the test cases of ctest, plus the GPU cases when the CUDA module is usable.
#include <cstdio>

#include "commands.h"
#include "exl/backend.h"

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
  a.check_known({"--fixtures", "--filter", "--list", "--verbose"});
  auto& o = exl::test::options();
  if (auto f = a.get("--fixtures")) o.fixtures = *f;
  o.filter = a.get_or("--filter", "");
  o.verbose = a.has("--verbose");
#ifdef EXL_SELFTEST_CUDA
  std::string why;
  o.gpu_available = cuda_available(&why);
  std::printf("GPU cases: %s\n", o.gpu_available ? "enabled" : ("skipped (" + why + ")").c_str());
#else
  std::printf("GPU cases: skipped (this build has no CUDA backend)\n");
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

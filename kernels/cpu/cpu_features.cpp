// Run-time CPU feature detection and the SIMD on/off switch of the CPU kernels.
#include <atomic>

#include "simd.h"

namespace exl {

namespace {
std::atomic<bool> g_simd_enabled{true};
}

bool cpu_has_avx2() {
#if EXL_X86
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("f16c");
  return has;
#else
  return false;
#endif
}

void set_cpu_simd_enabled(bool enabled) { g_simd_enabled.store(enabled); }

bool cpu_simd_active() { return g_simd_enabled.load(std::memory_order_relaxed) && cpu_has_avx2(); }

}  // namespace exl

// Run-time CPU feature detection and the SIMD on/off switch of the CPU kernels.
#include <atomic>
#include <cstdlib>
#include <string_view>

#include "simd.h"

namespace exl {

namespace {
std::atomic<bool> g_simd_enabled{true};
// EXL_CPU_AVX512=0 keeps the AVX2 kernels on a CPU with AVX-512 (for comparisons).
std::atomic<bool> g_avx512_enabled{[] {
  const char* e = std::getenv("EXL_CPU_AVX512");
  return !(e && std::string_view(e) == "0");
}()};
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

bool cpu_has_avx512() {
#if EXL_X86
  static const bool has = cpu_has_avx2() && __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

void set_cpu_simd_enabled(bool enabled) { g_simd_enabled.store(enabled); }

bool cpu_simd_active() { return g_simd_enabled.load(std::memory_order_relaxed) && cpu_has_avx2(); }

void set_cpu_avx512_enabled(bool enabled) { g_avx512_enabled.store(enabled); }

bool cpu_avx512_active() { return cpu_simd_active() && g_avx512_enabled.load(std::memory_order_relaxed) && cpu_has_avx512(); }

}  // namespace exl

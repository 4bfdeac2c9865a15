// Instruction-set selection for the CPU kernels. The library is built for baseline x86-64; the
// AVX2/FMA/F16C paths are compiled per function and chosen at run time when the CPU has them.
#pragma once

namespace exl {

// True when the CPU supports AVX2, FMA and F16C (always false on non-x86 builds).
bool cpu_has_avx2();
// Allows (default) or forbids the SIMD paths; tests use it to cover the portable code too.
void set_cpu_simd_enabled(bool enabled);
// True when the CPU kernels currently take their AVX2 paths.
bool cpu_simd_active();
// True when the CPU also supports AVX-512F (used by the one-row EXL2 GEMV).
bool cpu_has_avx512();
// Allows (default, unless EXL_CPU_AVX512=0) or forbids the AVX-512 paths; tests compare both.
void set_cpu_avx512_enabled(bool enabled);
// True when the SIMD paths are active and take their AVX-512 forms where there is one.
bool cpu_avx512_active();

}  // namespace exl

// Private helpers for the CPU kernels: the run-time SIMD switch and the target attribute used
// on AVX2 code paths.
#pragma once
#include "exl/kernels/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#define EXL_X86 1
#include <immintrin.h>
#define EXL_AVX2 __attribute__((target("avx2,fma,f16c")))
#else
#define EXL_X86 0
#define EXL_AVX2
#endif

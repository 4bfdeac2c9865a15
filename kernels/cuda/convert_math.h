// The converter's per-block math on the device (exl convert --device cuda): the FP decoder block
// in fp32 (RMSNorm, cuBLAS SGEMM linears, RoPE, causal attention through materialised score
// tiles per KV head), Hessian accumulation, Hessian preparation in fp64 (act order, damping,
// blocked Cholesky with cuBLAS TRSM/SYRK, inverse, Cholesky of the inverse) and GPTQ (per group:
// the 97-multiplier scale search, the in-group column sweep, the lazy update as one SGEMM).
// It mirrors engine/src/convert/cpu_block_math.cpp and gptq.cpp step for step; the selftest
// compares the two.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "device_memory.h"
#include "module_api.h"

namespace exl::cuda {

class ConvertMath {
 public:
  ConvertMath(int device, std::uint64_t vram_limit);
  void set_tensor(int slot, const float* data, std::int64_t count);
  void run_block(const exl_cuda_block_shape& s, bool attention, float* x, int tokens, bool collect);
  void hessian_reset(int slot, int k);
  void hessian_add(int slot, const float* x, int tokens);
  void hessian_prepare(int slot, double scale, std::int32_t* perm);
  void hessian_factor(int slot, float* u);
  void gptq(int slot, const float* w, int n, int k, int groups, const int* bits, const int* rows, bool rtn,
            std::uint8_t* q, std::uint8_t* codes, std::uint16_t* scale_max, float* dequant);

 private:
  struct Hessian {
    int k = 0;
    bool prepared = false;
    DeviceBuffer h;     // [k, k] fp64 accumulator
    DeviceBuffer u;     // [k, k] fp32, prepared: row-major upper factor of the damped inverse
    DeviceBuffer perm;  // [k] int32
  };
  Hessian& hessian(int slot);
  void add_device(Hessian& h, const float* x, int tokens);  // x device [tokens, k]
  // Grows `b` to at least `bytes` (scratch reused between calls).
  void* scratch(DeviceBuffer& b, std::size_t bytes, const char* what);
  void linear(const float* x, int m, int k, int slot, int n, int bias_slot, float* y, bool accumulate);
  bool cholesky(double* a, int k);  // lower, column-major, in place; false: not positive definite

  int device_;
  Allocator alloc_;
  Stream stream_;
  CublasHandle blas_;
  DeviceBuffer tensors_[12];
  std::int64_t counts_[12] = {};
  Hessian hess_[3];
  DeviceBuffer x_, a_, q_, k_, v_, att_, g_, u_, scores_, cs_, inv_freq_, zero_, fail_;
  DeviceBuffer work_[4];  // fp64 [k, k] scratch of hessian_prepare; fp32 scratch of gptq
  DeviceBuffer gq_[8];
};

}  // namespace exl::cuda

// The C handle behind exl_cuda_convert (module_api.h).
struct exl_cuda_convert {
  std::unique_ptr<exl::cuda::ConvertMath> impl;
};

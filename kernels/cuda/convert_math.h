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
#include <utility>
#include <vector>

#include <cuda_fp16.h>

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
  // The measurement pass (module_api.h, ABI 6): candidates kept as fp16 in device memory, the
  // calibration rows and reference outputs on the device, the mean relative error computed there.
  void candidate(int id, int hessian_slot, int weight_slot, int n, int k, int groups, const int* bits,
                 const int* rows);
  void candidate_use(int weight_slot, int id);
  void candidates_clear();
  void set_row(int which, int row, int rows, const float* x, int tokens, int hidden);
  double evaluate(const exl_cuda_block_shape& s, bool attention);

 private:
  struct Hessian {
    int k = 0;
    bool prepared = false;
    DeviceBuffer h;     // [k, k] fp64 accumulator
    DeviceBuffer u;     // [k, k] fp32, prepared: row-major upper factor of the damped inverse
    DeviceBuffer perm;  // [k] int32
  };
  struct Candidate {
    int n = 0, k = 0;
    DeviceBuffer w;  // [n, k] fp16
  };
  Hessian& hessian(int slot);
  // The block on device x [tokens, hidden] (in place).
  void run_device(const exl_cuda_block_shape& s, bool attention, float* x, int tokens, bool collect);
  // GPTQ of device w [n, k]; leaves the integers in gq_[4], codes in gq_[5], fp16 scale_max after the
  // search partials in gq_[7] (returned) and the dequantized rows [k, n_pad] (stored order) in gq_[2].
  __half* gptq_device(Hessian& h, const float* w, int n, int k, int groups, const int* bits, const int* rows,
                      bool rtn);
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
  std::vector<std::pair<int, Candidate>> candidates_;
  std::vector<DeviceBuffer> rows_[2];  // measurement rows: inputs, reference outputs
  int row_tokens_ = 0, row_hidden_ = 0;
  DeviceBuffer rfn_;                   // per-block partial sums of the relative error
};

}  // namespace exl::cuda

// The C handle behind exl_cuda_convert (module_api.h).
struct exl_cuda_convert {
  std::unique_ptr<exl::cuda::ConvertMath> impl;
};

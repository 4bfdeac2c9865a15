// Single-kernel entry points on host arrays (GPU tests compare them with kernels/reference)
// and small timing entries for benchmarks. Signatures as in module_api.h.
#pragma once
#include "module_api.h"

namespace exl::cuda {

int test_exl2_matmul(int device, const exl_cuda_exl2* w, const uint16_t* x, int m, float* y, int mode);
int test_exl2_reconstruct(int device, const exl_cuda_exl2* w, uint16_t* out);
int test_exl3_matmul(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features, int out_features,
                     float* y, int mode);
int test_exl3_reconstruct(int device, const exl_cuda_exl3* w, uint16_t* out);
int test_exl3_input(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features, uint16_t* xr);
int test_rms_norm(int device, const float* x, int rows, int dim, const uint16_t* w, float eps, uint16_t* y);
int test_rope(int device, float* x, int tokens, int heads, int head_dim, int past, const float* inv_freq, float mscale,
              float position_divisor, int style);
int test_attention(int device, const uint16_t* q, const uint16_t* k_cache, const uint16_t* v_cache, int t, int past,
                   int nh, int nkv, int d, float scale, float* out);
int test_silu_mul(int device, const float* gate, const float* up, int64_t n, uint16_t* out);
int test_embedding(int device, const uint16_t* table, int vocab, int dim, const int32_t* ids, int n, float* out);
int test_dense_linear(int device, const uint16_t* x, int m, int k, const uint16_t* w, int n, float* y);
int bench_copy_bandwidth(int device, uint64_t bytes, double* gbs);
int bench_fp16_gemm(int device, int m, int n, int k, double* tflops);
int test_exact_acc(int device, const float* x, int rows, int n, const float* bias, float* out);
int bench_exl2_matmul(int device, const exl_cuda_exl2* w, int m, int mode, int repeats, double* us);
int test_sample(int device, const float* logits, int vocab, const exl_cuda_sampler* s, exl_cuda_sample_result* out,
                float* dist);
int bench_forward(exl_cuda_backend* b, int n, int past, int repeats, double* us);
int test_kv_cache(int device, int kfmt, int vfmt, const uint16_t* q, const uint16_t* k, const uint16_t* v, int t, int past,
                  int nh, int nkv, int d, float scale, const int* chunks, int n_chunks, float* out, uint8_t* k_data,
                  uint16_t* k_scales, uint8_t* v_data, uint16_t* v_scales, const int32_t* page_table, int store_pages);
int test_attention_options(float softcap, int window);
int test_family_op(int device, int op, float* x, const float* x2, const float* w, int rows, int dim, float eps,
                   float param, int aux, int aux2, void* y);
int test_exl3_group(int device, const exl_cuda_exl3* w, int count, int mode, const float* x, const float* x2,
                    const void* norm_w, int in_features, float eps, int flags, float* y);

}  // namespace exl::cuda

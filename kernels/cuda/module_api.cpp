// The C function table of the exl_cuda module: device queries, the backend's steps, the log
// sink and the error state. Every entry converts failures into a status (cuda_check.h).
#include <cstring>
#include <new>

#include "convert_math.h"
#include "cuda_backend.h"
#include "module_api.h"
#include "test_entries.h"

#ifndef EXL_CUDA_BUILD_ID
#define EXL_CUDA_BUILD_ID "unknown"
#endif

namespace exl::cuda {
namespace {

const char* api_last_error() { return last_error_message(); }
void api_set_log(exl_cuda_log_fn fn, void* user) { set_log_sink(fn, user); }

int api_device_count(int* count) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(count, "device_count: null");
    *count = 0;  // what stays on an error
    *count = device_count();
  });
}

int api_device_info(int device, exl_cuda_device_info* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(out, "device_info: null");
    check_device_index(device);
    cudaDeviceProp p{};
    EXL_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    std::memset(out, 0, sizeof(*out));
    std::strncpy(out->name, p.name, sizeof(out->name) - 1);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    int clock = 0, width = 0;
    EXL_CUDA_CHECK(cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, device));
    EXL_CUDA_CHECK(cudaDeviceGetAttribute(&width, cudaDevAttrGlobalMemoryBusWidth, device));
    out->mem_clock_khz = clock;
    out->mem_bus_width_bits = width;
    out->peak_bandwidth_gbs = 2.0 * double(clock) * 1e3 * (width / 8.0) / 1e9;
    out->smem_per_block_optin = p.sharedMemPerBlockOptin;
    use_device(device);
    std::size_t free_b = 0, total_b = 0;
    EXL_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    out->free_bytes = free_b;
    out->total_bytes = total_b;
  });
}

int api_create(const exl_cuda_options* o, exl_cuda_backend** out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(o && out, "create: null");
    *out = nullptr;
    auto b = std::make_unique<exl_cuda_backend>();
    b->impl = std::make_unique<CudaBackend>(*o);
    *out = b.release();
  });
}

void api_destroy(exl_cuda_backend* b) {
  (void)guarded([&] { delete b; });
}

int api_load(exl_cuda_backend* b, const exl_cuda_model* m, exl_cuda_progress_fn progress, void* user) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && m, "load: null");
    b->impl->load(*m, progress, user);
  });
}

// Low byte: the K store's format (KvFmt: 1 fp16, 2 fp8, 3 q8, 4 q4); next byte: V's (0: as K).
void cache_formats(int cache_type, int& kf, int& vf) {
  kf = cache_type & 0xff;
  vf = (cache_type >> 8) & 0xff ? (cache_type >> 8) & 0xff : kf;
  auto known = [](int f) { return f >= kv_f16 && f <= kv_q4; };
  if (!known(kf) || !known(vf) || (cache_type >> 16) != 0)
    throw_status(EXL_CUDA_ERR_INVALID, "allocate_cache: unknown cache type code " + std::to_string(cache_type));
}

int api_allocate_cache(exl_cuda_backend* b, int max_seq_len, int cache_type) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b, "allocate_cache: null");
    int kf = 0, vf = 0;
    cache_formats(cache_type, kf, vf);
    b->impl->allocate_cache(max_seq_len, kf, vf);
  });
}

int api_allocate_paged_cache(exl_cuda_backend* b, int max_seq_len, int pages, int cache_type) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b, "allocate_paged_cache: null");
    EXL_CUDA_REQUIRE(pages > 0, "allocate_paged_cache: " + std::to_string(pages) + " pages");
    int kf = 0, vf = 0;
    cache_formats(cache_type, kf, vf);
    b->impl->allocate_cache(max_seq_len, kf, vf, pages);
  });
}

int api_set_cache_pages(exl_cuda_backend* b, const std::int32_t* table, int count, int length) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b, "set_cache_pages: null");
    b->impl->set_pages(table, count, length);
  });
}

int api_copy_cache_page(exl_cuda_backend* b, int dst, int src) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b, "copy_cache_page: null");
    b->impl->copy_page(dst, src);
  });
}

int api_forward(exl_cuda_backend* b, const std::int32_t* ids, int n, int mode, float* logits) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && ids && (mode == 0 || logits), "forward: null");
    b->impl->forward(ids, n, mode, logits);
  });
}

int api_link_segments(exl_cuda_backend* prev, exl_cuda_backend* next, int via_host) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(prev && next, "link_segments: null");
    next->impl->link_after(*prev->impl, via_host != 0);
  });
}

int api_truncate(exl_cuda_backend* b, int length) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b, "truncate_cache: null");
    b->impl->truncate(length);
  });
}

int api_cache_length(exl_cuda_backend* b, int* length) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && length, "cache_length: null");
    *length = b->impl->length();
  });
}

int api_memory(exl_cuda_backend* b, exl_cuda_memory* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && out, "memory: null");
    *out = b->impl->memory();
  });
}

int api_forward_sample(exl_cuda_backend* b, const std::int32_t* ids, int n, const exl_cuda_sampler* smp,
                       exl_cuda_sample_result* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && ids && smp && out && n > 0, "forward_sample: null");
    b->impl->forward_sample(ids, n, *smp, out);
  });
}

// ---- the converter's block math ----

int api_convert_create(int device, std::uint64_t vram_limit, exl_cuda_convert** out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(out, "convert_create: null");
    *out = nullptr;
    auto c = std::make_unique<exl_cuda_convert>();
    c->impl = std::make_unique<ConvertMath>(device, vram_limit);
    *out = c.release();
  });
}

void api_convert_destroy(exl_cuda_convert* c) {
  (void)guarded([&] { delete c; });
}

template <class F>
int with_convert(exl_cuda_convert* c, const char* call, F&& fn) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(c, std::string(call) + ": null");
    fn(*c->impl);
  });
}

int api_convert_set_tensor(exl_cuda_convert* c, int slot, const float* data, std::int64_t count) {
  return with_convert(c, "convert_set_tensor", [&](ConvertMath& m) { m.set_tensor(slot, data, count); });
}

int api_convert_run_block(exl_cuda_convert* c, const exl_cuda_block_shape* s, int attention, float* x, int tokens,
                          int collect) {
  return with_convert(c, "convert_run_block", [&](ConvertMath& m) {
    EXL_CUDA_REQUIRE(s, "convert_run_block: null shape");
    m.run_block(*s, attention != 0, x, tokens, collect != 0);
  });
}

int api_convert_hessian_reset(exl_cuda_convert* c, int slot, int k) {
  return with_convert(c, "convert_hessian_reset", [&](ConvertMath& m) { m.hessian_reset(slot, k); });
}

int api_convert_hessian_add(exl_cuda_convert* c, int slot, const float* x, int tokens) {
  return with_convert(c, "convert_hessian_add", [&](ConvertMath& m) { m.hessian_add(slot, x, tokens); });
}

int api_convert_hessian_prepare(exl_cuda_convert* c, int slot, double scale, std::int32_t* perm) {
  return with_convert(c, "convert_hessian_prepare", [&](ConvertMath& m) { m.hessian_prepare(slot, scale, perm); });
}

int api_convert_hessian_factor(exl_cuda_convert* c, int slot, float* u) {
  return with_convert(c, "convert_hessian_factor", [&](ConvertMath& m) { m.hessian_factor(slot, u); });
}

int api_convert_gptq(exl_cuda_convert* c, int slot, const float* w, int n, int k, int groups, const int* bits,
                     const int* rows, int rtn, std::uint8_t* q, std::uint8_t* codes, std::uint16_t* scale_max,
                     float* dequant) {
  return with_convert(c, "convert_gptq", [&](ConvertMath& m) {
    m.gptq(slot, w, n, k, groups, bits, rows, rtn != 0, q, codes, scale_max, dequant);
  });
}

int api_convert_candidate(exl_cuda_convert* c, int id, int hessian_slot, int weight_slot, int n, int k, int groups,
                          const int* bits, const int* rows) {
  return with_convert(c, "convert_candidate", [&](ConvertMath& m) {
    m.candidate(id, hessian_slot, weight_slot, n, k, groups, bits, rows);
  });
}

int api_convert_candidate_use(exl_cuda_convert* c, int weight_slot, int id) {
  return with_convert(c, "convert_candidate_use", [&](ConvertMath& m) { m.candidate_use(weight_slot, id); });
}

int api_convert_candidates_clear(exl_cuda_convert* c) {
  return with_convert(c, "convert_candidates_clear", [&](ConvertMath& m) { m.candidates_clear(); });
}

int api_convert_rows(exl_cuda_convert* c, int which, int row, int rows, const float* x, int tokens, int hidden) {
  return with_convert(c, "convert_rows", [&](ConvertMath& m) { m.set_row(which, row, rows, x, tokens, hidden); });
}

int api_convert_evaluate(exl_cuda_convert* c, const exl_cuda_block_shape* s, int attention, double* mean_rfn) {
  return with_convert(c, "convert_evaluate", [&](ConvertMath& m) {
    EXL_CUDA_REQUIRE(s && mean_rfn, "convert_evaluate: null");
    *mean_rfn = m.evaluate(*s, attention != 0);
  });
}

const exl_cuda_api k_api = {
    EXL_CUDA_ABI_VERSION,
    sizeof(exl_cuda_api),
    EXL_CUDA_BUILD_ID,
    api_last_error,
    api_set_log,
    api_device_count,
    api_device_info,
    api_create,
    api_destroy,
    api_load,
    api_allocate_cache,
    api_forward,
    api_truncate,
    api_cache_length,
    api_memory,
    test_exl2_matmul,
    test_exl2_reconstruct,
    test_rms_norm,
    test_rope,
    test_attention,
    test_silu_mul,
    test_embedding,
    test_dense_linear,
    bench_copy_bandwidth,
    bench_exl2_matmul,
    bench_forward,
    api_forward_sample,
    test_sample,
    test_kv_cache,
    api_allocate_paged_cache,
    api_set_cache_pages,
    api_copy_cache_page,
    api_convert_create,
    api_convert_destroy,
    api_convert_set_tensor,
    api_convert_run_block,
    api_convert_hessian_reset,
    api_convert_hessian_add,
    api_convert_hessian_prepare,
    api_convert_hessian_factor,
    api_convert_gptq,
    api_convert_candidate,
    api_convert_candidate_use,
    api_convert_candidates_clear,
    api_convert_rows,
    api_convert_evaluate,
    api_link_segments,
    bench_fp16_gemm,
    test_exact_acc,
    test_exl3_matmul,
    test_exl3_reconstruct,
    test_exl3_input,
    test_attention_options,
    test_family_op,
    test_exl3_group,
};

}  // namespace
}  // namespace exl::cuda

extern "C" const exl_cuda_api* exl_cuda_get_api(uint32_t abi_version) {
  return abi_version == EXL_CUDA_ABI_VERSION ? &exl::cuda::k_api : nullptr;
}

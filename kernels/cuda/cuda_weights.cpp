// Weight upload (host memory map -> device, through pinned staging) and the linear-layer
// dispatch of the CUDA backend: fused EXL2 kernel for few rows, reconstruct + cuBLAS for many,
// cuBLAS for dense fp16 layers.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "cuda_backend.h"
#include "exl/kernels/half.h"

namespace exl::cuda {
namespace {

// Copies host bytes to the device through two pinned 16 MiB chunks (overlaps the host copy
// with the transfer). `convert` may rewrite a chunk (dtype conversion) while staging.
void staged_upload(void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
  constexpr std::size_t chunk = 16u << 20;
  if (bytes <= chunk / 4) {
    EXL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    EXL_CUDA_CHECK(cudaStreamSynchronize(s));
    return;
  }
  static thread_local PinnedBuffer staging[2];
  static thread_local Event* done[2] = {nullptr, nullptr};
  static thread_local std::unique_ptr<Event> events[2];
  for (int i = 0; i < 2; ++i) {
    if (staging[i].bytes() < chunk) staging[i] = PinnedBuffer(chunk);
    if (!events[i]) { events[i] = std::make_unique<Event>(); done[i] = events[i].get(); }
  }
  bool used[2] = {false, false};
  for (std::size_t off = 0, i = 0; off < bytes; off += chunk, i ^= 1) {
    const std::size_t n = std::min(chunk, bytes - off);
    if (used[i]) EXL_CUDA_CHECK(cudaEventSynchronize(done[i]->get()));
    std::memcpy(staging[i].get(), static_cast<const char*>(src) + off, n);
    EXL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + off, staging[i].get(), n, cudaMemcpyHostToDevice, s));
    EXL_CUDA_CHECK(cudaEventRecord(done[i]->get(), s));
    used[i] = true;
  }
  EXL_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::vector<std::uint16_t> to_half(const void* src, int dtype, std::size_t n) {
  std::vector<std::uint16_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case EXL_CUDA_F16: out[i] = static_cast<const std::uint16_t*>(src)[i]; break;
      case EXL_CUDA_BF16: out[i] = float_to_half(bf16_to_float(static_cast<const std::uint16_t*>(src)[i])); break;
      case EXL_CUDA_F32: out[i] = float_to_half(static_cast<const float*>(src)[i]); break;
      default: throw_status(EXL_CUDA_ERR_UNSUPPORTED, "weight dtype " + std::to_string(dtype) + " (f16, bf16, f32)");
    }
  }
  return out;
}

std::vector<float> to_float(const void* src, int dtype, std::size_t n) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case EXL_CUDA_F16: out[i] = half_to_float(static_cast<const std::uint16_t*>(src)[i]); break;
      case EXL_CUDA_BF16: out[i] = bf16_to_float(static_cast<const std::uint16_t*>(src)[i]); break;
      case EXL_CUDA_F32: out[i] = static_cast<const float*>(src)[i]; break;
      default: throw_status(EXL_CUDA_ERR_UNSUPPORTED, "bias dtype " + std::to_string(dtype));
    }
  }
  return out;
}

}  // namespace

std::vector<int2> exl2_units(const std::int16_t* q_groups, int groups, int q_rows, int k) {
  std::vector<int2> units;
  units.reserve(std::size_t(k / 32));
  for (int g = 0; g < groups; ++g) {
    const int bits = q_groups[2 * g];
    const int qr = q_groups[2 * g + 1];
    const int next = g + 1 < groups ? q_groups[2 * g + 3] : q_rows;
    if (bits < 2 || bits > 8 || bits == 7) throw_status(EXL_CUDA_ERR_INVALID, "EXL2: bad bit width " + std::to_string(bits));
    const int rows = (next - qr) * 32 / bits;
    if (rows <= 0 || rows % 32) throw_status(EXL_CUDA_ERR_INVALID, "EXL2: group " + std::to_string(g) + " has " + std::to_string(rows) + " rows");
    for (int u = 0; u < rows / 32; ++u) units.push_back(int2{qr + u * bits, (g << 4) | bits});
  }
  if (int(units.size()) * 32 != k) throw_status(EXL_CUDA_ERR_INVALID, "EXL2: groups cover " + std::to_string(units.size() * 32) + " rows, k = " + std::to_string(k));
  return units;
}

std::vector<std::int32_t> synthetic_perm(int k, std::uint64_t seed) {
  std::vector<std::int32_t> perm(std::size_t(std::max(0, k)));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937 rng{static_cast<std::uint32_t>(seed)};
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

void upload_linear(const exl_cuda_linear& src, Allocator* alloc, std::uint64_t seed, cudaStream_t s,
                   DeviceLinear& out, std::uint64_t* bytes, const LinearFold& fold) {
  out.k = src.in_features;
  out.n = src.out_features;
  out.exl2 = src.kind == 1;
  out.exl3 = src.kind == 2;
  if (out.exl3) {
    const exl_cuda_exl3& e = src.exl3;
    EXL_CUDA_REQUIRE(e.k % 128 == 0 && e.n % 128 == 0 && e.k >= out.k && e.n >= out.n && out.k > e.k - 128 &&
                         out.n > e.n - 128 && e.bits2 >= 2 && e.bits2 <= 16 && e.codebook >= 0 && e.codebook <= 2 &&
                         (e.bits2 % 2 == 0 || (e.codebook == 2 && e.bits2 <= 7)),
                     "EXL3 layer shape mismatch (k " + std::to_string(e.k) + ", n " + std::to_string(e.n) + ", features " +
                         std::to_string(out.k) + " x " + std::to_string(out.n) + ", bits2 " + std::to_string(e.bits2) +
                         ", codebook " + std::to_string(e.codebook) + ")");
    const std::size_t tb = std::size_t(e.k / 16) * std::size_t(e.n / 16) * std::size_t(8 * e.bits2) * 2;
    out.trellis.allocate(alloc, tb, "trellis");
    out.suh.allocate(alloc, std::size_t(e.k) * 2, "suh");
    out.svh.allocate(alloc, std::size_t(e.n) * 2, "svh");
    if (e.trellis && e.suh && e.svh) {
      staged_upload(out.trellis.get(), e.trellis, tb, s);
      staged_upload(out.suh.get(), e.suh, std::size_t(e.k) * 2, s);
      staged_upload(out.svh.get(), e.svh, std::size_t(e.n) * 2, s);
    } else {
      EXL_CUDA_REQUIRE(seed != 0 && !e.trellis && !e.suh && !e.svh, "EXL3 layer without trellis, suh or svh");
      fill_random_u32(out.trellis.get<std::uint32_t>(), tb / 4, seed, s);  // every stream decodes
      fill_random_half(out.suh.get<__half>(), std::size_t(e.k), seed + 1, 0.25f, 1.75f, s);
      fill_random_half(out.svh.get<__half>(), std::size_t(e.n), seed + 2, 0.25f, 1.75f, s);
    }
    out.view3 = Exl3Device{out.trellis.get<std::uint16_t>(), out.suh.get<__half>(), out.svh.get<__half>(), e.k, e.n,
                           e.bits2, e.codebook};
    if (bytes) *bytes += tb + std::size_t(e.k + e.n) * 2;
  } else if (out.exl2) {
    const exl_cuda_exl2& e = src.exl2;
    EXL_CUDA_REQUIRE(e.k == out.k && e.n == out.n && e.n_pad % 32 == 0 && e.k % 32 == 0 && e.groups > 0 && e.q_groups,
                     "EXL2 layer shape mismatch");
    const std::vector<int2> units = exl2_units(e.q_groups, e.groups, e.q_rows, e.k);
    const int tiles = exl2_tiles(e.n_pad);
    const std::size_t qw = std::size_t(e.q_rows) * tiles * 64 * 4, qs = std::size_t(e.groups) * tiles * 8 * 4;
    out.q_weight.allocate(alloc, qw, "q_weight");
    out.q_scale.allocate(alloc, qs, "q_scale");
    out.q_scale_max.allocate(alloc, std::size_t(e.groups) * 2, "q_scale_max");
    out.perm.allocate(alloc, std::size_t(e.k) * 4, "q_perm");
    out.units.allocate(alloc, units.size() * sizeof(int2), "units");
    staged_upload(out.units.get(), units.data(), units.size() * sizeof(int2), s);
    out.view = Exl2Device{out.q_weight.get<std::uint32_t>(), out.q_scale.get<std::uint32_t>(),
                          out.q_scale_max.get<__half>(), out.perm.get<std::int32_t>(), out.units.get<int2>(),
                          e.k, e.n, e.n_pad, e.groups, tiles};
    for (const int2& u : units) out.view.max_bits = std::max(out.view.max_bits, u.y & 15);
    out.view.q_rows = e.q_rows;
    if (e.q_weight) {
      // On-disk layout through a temporary device buffer, then repacked on the device.
      DeviceBuffer orig;
      orig.allocate(alloc, std::size_t(e.q_rows) * e.n_pad * 4, "q_weight (on-disk layout)");
      staged_upload(orig.get(), e.q_weight, orig.bytes(), s);
      DeviceBuffer col_map;
      if (fold.col_perm) {
        std::vector<std::int32_t> map(std::size_t(e.n_pad));
        for (int c = 0; c < e.n_pad; ++c) map[std::size_t(c)] = c < e.n ? fold.col_perm[c] : c;
        col_map.allocate(alloc, map.size() * 4, "column map");
        staged_upload(col_map.get(), map.data(), map.size() * 4, s);
      }
      exl2_repack(out.view, orig.get<std::uint32_t>(), out.q_weight.get<std::uint32_t>(), s,
                  col_map.get<std::int32_t>());
      EXL_CUDA_CHECK(cudaStreamSynchronize(s));
    } else if (seed) {
      fill_random_u32(out.q_weight.get<std::uint32_t>(), qw / 4, seed, s);  // every bit pattern is valid
    } else {
      throw_status(EXL_CUDA_ERR_INVALID, "EXL2 layer without q_weight");
    }
    if (e.q_scale) {
      // Scale codes regrouped per (tile, group, lane group): nibble j of word g = column
      // tile * 64 + (j / 2) * 16 + g + 8 * (j % 2).
      std::vector<std::uint32_t> packed(qs / 4, 0u);
      const std::size_t row = std::size_t(e.n_pad) / 8;
      for (int g = 0; g < e.groups; ++g)
        for (int t = 0; t < tiles; ++t)
          for (int lg = 0; lg < 8; ++lg) {
            std::uint32_t word = 0;
            for (int j = 0; j < 8; ++j) {
              int col = t * 64 + (j >> 1) * 16 + lg + 8 * (j & 1);
              if (col >= e.n_pad) continue;
              if (fold.col_perm && col < e.n) col = fold.col_perm[col];
              const std::uint32_t code = (e.q_scale[std::size_t(g) * row + col / 8] >> ((col & 7) * 4)) & 15u;
              word |= code << (4 * j);
            }
            packed[exl2_scale_words(out.view, g, t) + std::size_t(lg)] = word;
          }
      staged_upload(out.q_scale.get(), packed.data(), qs, s);
    } else {
      fill_random_u32(out.q_scale.get<std::uint32_t>(), qs / 4, seed + 1, s);
    }
    if (e.q_scale_max) staged_upload(out.q_scale_max.get(), e.q_scale_max, std::size_t(e.groups) * 2, s);
    else fill_random_half(out.q_scale_max.get<__half>(), std::size_t(e.groups), seed + 2, 0.002f, 0.004f, s);
    if (fold.rows_in_order) {
      std::vector<std::int32_t> perm(std::size_t(e.k));
      std::iota(perm.begin(), perm.end(), 0);
      staged_upload(out.perm.get(), perm.data(), perm.size() * 4, s);
    } else if (e.q_perm) {
      staged_upload(out.perm.get(), e.q_perm, std::size_t(e.k) * 4, s);
    } else {
      const std::vector<std::int32_t> perm = synthetic_perm(e.k, fold.perm_seed ? fold.perm_seed : seed);
      staged_upload(out.perm.get(), perm.data(), perm.size() * 4, s);
    }
    if (bytes) *bytes += qw + qs + std::size_t(e.groups) * 2 + std::size_t(e.k) * 4;
  } else {
    const std::size_t n = std::size_t(out.n) * out.k;
    out.weight.allocate(alloc, n * 2, "dense weight");
    if (!src.weight) {
      EXL_CUDA_REQUIRE(seed != 0, "dense layer without weight");
      fill_random_half(out.weight.get<__half>(), n, seed + 3, -0.02f, 0.02f, s);
    } else if (src.weight_dtype == EXL_CUDA_F16) {
      staged_upload(out.weight.get(), src.weight, n * 2, s);
    } else {
      const std::vector<std::uint16_t> h = to_half(src.weight, src.weight_dtype, n);
      staged_upload(out.weight.get(), h.data(), n * 2, s);
    }
    if (bytes) *bytes += n * 2;
  }
  if (src.bias) {
    std::vector<float> b = to_float(src.bias, src.bias_dtype, std::size_t(out.n));
    if (fold.col_perm && out.exl2) {
      const std::vector<float> stored = b;
      for (int c = 0; c < out.n; ++c) b[std::size_t(c)] = stored[std::size_t(fold.col_perm[c])];
    }
    out.bias.allocate(alloc, b.size() * 4, "bias");
    staged_upload(out.bias.get(), b.data(), b.size() * 4, s);
  }
}

namespace {

// Y^T (n x m, ld ldy, column-major) += W^T (n x k, ld n_pad) . X^T (k x m, ld k) (= with
// `overwrite`): an EXL2 linear reconstructed into dq (fp16 [k, n_pad]).
void gemm_dequantised(const DeviceLinear& l, const __half* dq, const __half* x, int m, float* y, int ldy,
                      bool overwrite, cublasHandle_t cublas) {
  const float one = 1.0f, beta = overwrite ? 0.0f : 1.0f;
  EXL_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, l.n, m, l.k, &one, dq, CUDA_R_16F, l.view.n_pad, x,
                                CUDA_R_16F, l.k, &beta, y, CUDA_R_32F, ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

Exl3Need exl3_need(const Exl3Device& w, std::size_t rows, int sm_count) {
  const std::size_t r = std::max<std::size_t>(rows, 1), splits = std::size_t(exl3_gemv_splits(w, sm_count));
  return {r * std::size_t(w.k),
          std::max(std::min<std::size_t>(r, k_exl3_gemv_rows) * splits * std::size_t(w.n), r * std::size_t(w.n)),
          std::size_t(w.n / 128)};
}

namespace {

// An EXL3 linear in passes of rows: input transform, products (GEMV or cuBLAS on W-hat in dq),
// output transform into y.
void exl3_forward(const DeviceLinear& l, const __half* x, int m, float* y, int ldy, bool gemm, __half* dq, int sm_count,
                  const Exl3Work& ws, cublasHandle_t cublas, cudaStream_t s, bool overwrite) {
  const Exl3Device& w = l.view3;
  const int splits = gemm ? 1 : exl3_gemv_splits(w, sm_count);
  std::size_t rows = std::min(ws.xr_elems / std::size_t(w.k), ws.z_elems / (std::size_t(splits) * w.n));
  if (!gemm) rows = std::min<std::size_t>(rows, k_exl3_gemv_rows);
  EXL_CUDA_REQUIRE(ws.xr && ws.z && rows >= 1, "EXL3 linear: no scratch for one row (k " + std::to_string(w.k) + ", n " +
                                                   std::to_string(w.n) + ")");
  if (gemm) exl3_reconstruct_t(w, dq, s);
  const float one = 1.0f, zero = 0.0f;
  for (int r0 = 0; r0 < m; r0 += int(rows)) {
    const int mr = std::min(int(rows), m - r0);
    if (!gemm && mr == 1 && exl3_gemv_fusable(w, splits)) {  // decode: the transforms inside the GEMV
      if (ws.tickets && ws.tickets_elems >= std::size_t(w.n / 128)) {
        exl3_gemv_fused(w, x + std::size_t(r0) * l.k, l.k, ws.z, splits, s, ws.tickets, l.n, y + std::size_t(r0) * ldy,
                        ldy, overwrite);
      } else {
        exl3_gemv_fused(w, x + std::size_t(r0) * l.k, l.k, ws.z, splits, s);
        exl3_output_transform(w, ws.z, splits, mr, l.n, y + std::size_t(r0) * ldy, ldy, overwrite, s);
      }
      continue;
    }
    exl3_input_transform(w, x + std::size_t(r0) * l.k, mr, l.k, l.k, ws.xr, s);
    if (gemm) {
      // Z^T (n x mr, col-major) = W-hat^T . Xr^T; dq holds W-hat^T [n, k] row-major, i.e. col-major k x n
      EXL_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, w.n, mr, w.k, &one, dq, CUDA_R_16F, w.k, ws.xr,
                                    CUDA_R_16F, w.k, &zero, ws.z, CUDA_R_32F, w.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else {
      exl3_gemv_partials(w, ws.xr, mr, ws.z, splits, s);
    }
    exl3_output_transform(w, ws.z, splits, mr, l.n, y + std::size_t(r0) * ldy, ldy, overwrite, s);
  }
}

}  // namespace

void linear_forward(const DeviceLinear& l, const __half* x, int m, float* y, int ldy, int gemv_max_rows, int sm_count,
                    const GemvWorkspace& ws, __half* dq, std::size_t dq_elems, cublasHandle_t cublas, cudaStream_t s,
                    bool overwrite, const Exl3Work& exl3_work) {
  const float one = 1.0f, beta = overwrite ? 0.0f : 1.0f;
  if (l.exl3) {
    const bool gemm = m > gemv_max_rows && dq && std::size_t(l.view3.k) * l.view3.n <= dq_elems;
    exl3_forward(l, x, m, y, ldy, gemm, dq, sm_count, exl3_work, cublas, s, overwrite);
    return;
  }
  if (l.exl2) {
    const std::size_t need = std::size_t(l.view.k) * l.view.n_pad;
    if (m <= gemv_max_rows || !dq || need > dq_elems) {
      EXL_CUDA_REQUIRE(!overwrite, "linear_forward: the EXL2 GEMV adds into its output (overwrite asked)");
      exl2_gemv(l.view, x, m, l.k, y, ldy, sm_count, ws, 0, s);  // row tiles of up to 16 inside
      return;
    }
    exl2_reconstruct(l.view, dq, s);
    gemm_dequantised(l, dq, x, m, y, ldy, overwrite, cublas);
    return;
  }
  // Dense W [n, k] row-major = col-major k x n (ld k); Y^T = W . X^T
  EXL_CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_T, CUBLAS_OP_N, l.n, m, l.k, &one, l.weight.get(), CUDA_R_16F, l.k,
                                x, CUDA_R_16F, l.k, &beta, y, CUDA_R_32F, ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void DequantPipe::allocate(Allocator* alloc, std::size_t elems) {
  elems_ = elems;
  order_.clear();
  next_ = 0;
  for (DeviceBuffer& b : buf_) b.allocate(alloc, elems * 2, "dequantised weights");
  if (elems == 0 || side_) return;
  side_ = std::make_unique<Stream>();
  start_ = std::make_unique<Event>();
  for (int i = 0; i < 2; ++i) {
    ready_[i] = std::make_unique<Event>();
    free_[i] = std::make_unique<Event>();
  }
}

bool DequantPipe::takes(const DeviceLinear& l, int m, int gemv_max_rows) const {
  return l.exl2 && m > gemv_max_rows && elems_ > 0 && std::size_t(l.view.k) * l.view.n_pad <= elems_;
}

void DequantPipe::begin(std::vector<const DeviceLinear*> order, cudaStream_t s) {
  order_ = std::move(order);
  next_ = 0;
  if (order_.empty() || !overlap_) return;
  // The side stream starts after everything enqueued on s so far (the previous chunk's GEMMs and
  // head read the buffers).
  EXL_CUDA_CHECK(cudaEventRecord(start_->get(), s));
  EXL_CUDA_CHECK(cudaStreamWaitEvent(side_->get(), start_->get(), 0));
  reconstruct(0);
}

void DequantPipe::reconstruct(std::size_t i) {
  const int b = int(i & 1);
  // buf_[b] was last read by the GEMM of linear i - 2 (recorded by forward; before that, start_).
  if (i >= 2) EXL_CUDA_CHECK(cudaStreamWaitEvent(side_->get(), free_[b]->get(), 0));
  if (!skip_) exl2_reconstruct(order_[i]->view, buf_[b].get<__half>(), side_->get());
  EXL_CUDA_CHECK(cudaEventRecord(ready_[b]->get(), side_->get()));
}

void DequantPipe::forward(const DeviceLinear& l, const __half* x, int m, float* y, int ldy, bool overwrite,
                          cublasHandle_t cublas, cudaStream_t s) {
  EXL_CUDA_REQUIRE(next_ < order_.size() && order_[next_] == &l,
                   "dequant pipe: linear " + std::to_string(next_) + " of the chunk is not the one announced");
  const std::size_t i = next_++;
  if (!overlap_) {
    if (!skip_) exl2_reconstruct(l.view, buf_[0].get<__half>(), s);
    gemm_dequantised(l, buf_[0].get<__half>(), x, m, y, ldy, overwrite, cublas);
    return;
  }
  const int b = int(i & 1);
  EXL_CUDA_CHECK(cudaStreamWaitEvent(s, ready_[b]->get(), 0));
  if (i + 1 < order_.size()) reconstruct(i + 1);
  gemm_dequantised(l, buf_[b].get<__half>(), x, m, y, ldy, overwrite, cublas);
  EXL_CUDA_CHECK(cudaEventRecord(free_[b]->get(), s));
}

}  // namespace exl::cuda

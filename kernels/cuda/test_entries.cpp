// Single-kernel entry points on host arrays and timing entries (see test_entries.h). Each call
// makes its own stream and buffers, runs one kernel family, copies the result back and frees
// everything (RAII) on every path.
#include <cstring>
#include "test_entries.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "cuda_backend.h"
#include "exl/kernels/half.h"
#include "launch.cuh"

namespace exl::cuda {
namespace {

template <class T>
DeviceBuffer to_device(const T* src, std::size_t n, const char* what, cudaStream_t s) {
  DeviceBuffer b(nullptr, n * sizeof(T), what);
  if (n) EXL_CUDA_CHECK(cudaMemcpyAsync(b.get(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  return b;
}

template <class T>
void to_host(T* dst, const DeviceBuffer& b, std::size_t n, cudaStream_t s) {
  if (n) EXL_CUDA_CHECK(cudaMemcpyAsync(dst, b.get(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
  EXL_CUDA_CHECK(cudaStreamSynchronize(s));
}

exl_cuda_linear as_linear(const exl_cuda_exl2& w) {
  exl_cuda_linear l{};
  l.kind = 1;
  l.in_features = w.k;
  l.out_features = w.n;
  l.exl2 = w;
  return l;
}

int sm_count_of(int device) {
  int n = 0;
  EXL_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

// test_attention_options: the soft-cap and window of the following attention entries on this thread.
thread_local float t_softcap = 0.0f;
thread_local int t_window = 0;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

// mode 0: fused kernel; 1: reconstruct + cuBLAS; 2: the fused kernel with the layer three times
// in one launch (q/k/v form), the mean of the three results; 3: the silu-gather form with
// gate = x (as fp32) and up = 1, i.e. y = fp16(silu(x)) . W; 4: the RMSNorm-folded form with
// residual = x (as fp32), norm weights exl_cuda_test_norm_weight(i), EXL_CUDA_TEST_NORM_EPS;
// 5: as 4 in the decode step's pre-permuted form (rms_norm writes the input in the layer's
// stored row order, the GEMV reads it contiguously); 6: as 0 with the output columns folded
// through a permutation at upload, un-permuted on the host; 7: as 3 with the permutation
// folded away (gate given in stored row order, the layer's own perm the identity); 8: as 2 into
// exact accumulators (kernels.h) read back as fp32; 9: as 3 with gate and up given as exact
// accumulators and the output into one; 10: as 9 in stored row order (as 7: the decode step's
// down projection).
int test_exl2_matmul(int device, const exl_cuda_exl2* w, const uint16_t* x, int m, float* y, int mode) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && x && y && m > 0 && mode >= 0 && mode <= 10, "test_exl2_matmul: bad arguments");
    use_device(device);
    Stream st;
    CublasHandle cb;
    EXL_CUBLAS_CHECK(cublasSetStream(cb.get(), st.get()));
    DeviceLinear l;
    const std::vector<std::int32_t> col_perm = synthetic_perm(w->n, 99);
    LinearFold fold;
    if (mode == 6) fold.col_perm = col_perm.data();
    if (mode == 7 || mode == 10) fold.rows_in_order = true;
    upload_linear(as_linear(*w), nullptr, 0, st.get(), l, nullptr, fold);
    const std::size_t mn = std::size_t(m) * w->n;
    DeviceBuffer dx = to_device(x, std::size_t(m) * w->k, "x", st.get());
    DeviceBuffer dy(nullptr, mn * 4 * 3, "y");
    EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0, dy.bytes(), st.get()));
    const int sms = sm_count_of(device);
    GemvScratch gws;
    gws.allocate(nullptr, st.get());
    // Exact accumulators on the host: int64 fixed point, 32 fraction bits.
    auto from_exact = [](const std::vector<long long>& q, std::size_t i) { return float(double(q[i]) / 4294967296.0); };
    if (mode == 8) {
      DeviceBuffer dq(nullptr, mn * 8 * 3, "y exact");
      EXL_CUDA_CHECK(cudaMemsetAsync(dq.get(), 0, dq.bytes(), st.get()));
      long long* q = dq.get<long long>();
      GemvCall c;
      c.add_exact(l.view, q, w->n).add_exact(l.view, q + mn, w->n).add_exact(l.view, q + 2 * mn, w->n);
      c.mode = k_x_half; c.in.x = dx.get<__half>(); c.in.ldx = w->k; c.m = m; c.sm_count = sms; c.ws = gws.view();
      exl2_gemv_run(c, st.get());
      std::vector<long long> h(mn * 3);
      to_host(h.data(), dq, mn * 3, st.get());
      for (std::size_t i = 0; i < mn; ++i)
        y[i] = (from_exact(h, i) + from_exact(h, mn + i) + from_exact(h, 2 * mn + i)) / 3.0f;
      return;
    }
    if (mode == 2) {
      const Exl2Device* ws[3] = {&l.view, &l.view, &l.view};
      float* ys[3] = {dy.get<float>(), dy.get<float>() + mn, dy.get<float>() + 2 * mn};
      const int ld[3] = {w->n, w->n, w->n};
      exl2_gemv_multi(ws, ys, ld, 3, dx.get<__half>(), m, w->k, sms, gws.view(), st.get());
      std::vector<float> h(mn * 3);
      to_host(h.data(), dy, mn * 3, st.get());
      for (std::size_t i = 0; i < mn; ++i) y[i] = (h[i] + h[mn + i] + h[2 * mn + i]) / 3.0f;
      return;
    }
    if (mode == 3 || mode == 7 || mode == 9 || mode == 10) {
      std::vector<float> g(std::size_t(m) * w->k), u(g.size(), 1.0f);
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = half_to_float(x[i]);
      if (mode == 7 || mode == 10)  // stored row order: row i of the layer reads input feature q_perm[i]
        for (int r = 0; r < m; ++r)
          for (int i = 0; i < w->k; ++i) g[std::size_t(r) * w->k + i] = half_to_float(x[std::size_t(r) * w->k + w->q_perm[i]]);
      GemvCall c;
      c.mode = k_x_silu; c.in.ldx = w->k; c.in.permuted = mode == 7 || mode == 10;
      c.m = m; c.sm_count = sms; c.ws = gws.view();
      if (mode == 9 || mode == 10) {
        std::vector<long long> gq(g.size()), uq(u.size(), 1ll << 32);
        for (std::size_t i = 0; i < g.size(); ++i) gq[i] = std::llrint(double(g[i]) * 4294967296.0);
        DeviceBuffer dg = to_device(gq.data(), gq.size(), "gate exact", st.get());
        DeviceBuffer du = to_device(uq.data(), uq.size(), "up exact", st.get());
        DeviceBuffer dq(nullptr, mn * 8, "y exact");
        EXL_CUDA_CHECK(cudaMemsetAsync(dq.get(), 0, dq.bytes(), st.get()));
        c.add_exact(l.view, dq.get<long long>(), w->n);
        c.in.xq = dg.get<long long>(); c.in.upq = du.get<long long>();
        exl2_gemv_run(c, st.get());
        std::vector<long long> h(mn);
        to_host(h.data(), dq, mn, st.get());
        for (std::size_t i = 0; i < mn; ++i) y[i] = from_exact(h, i);
        return;
      }
      DeviceBuffer dg = to_device(g.data(), g.size(), "gate", st.get());
      DeviceBuffer du = to_device(u.data(), u.size(), "up", st.get());
      c.add(l.view, dy.get<float>(), w->n);
      c.in.xf = dg.get<float>(); c.in.up = du.get<float>();
      exl2_gemv_run(c, st.get());
      to_host(y, dy, mn, st.get());
      return;
    }
    if (mode == 4 || mode == 5) {
      std::vector<float> xf(std::size_t(m) * w->k);
      std::vector<std::uint16_t> nw(std::size_t(w->k));
      for (std::size_t i = 0; i < xf.size(); ++i) xf[i] = half_to_float(x[i]);
      for (int i = 0; i < w->k; ++i) nw[std::size_t(i)] = float_to_half(exl_cuda_test_norm_weight(i));
      DeviceBuffer dxf = to_device(xf.data(), xf.size(), "residual", st.get());
      DeviceBuffer dnw = to_device(nw.data(), nw.size(), "norm weight", st.get());
      GemvCall c;
      c.add(l.view, dy.get<float>(), w->n);
      DeviceBuffer dxh;
      if (mode == 4) {
        c.mode = k_x_norm;
        c.in.xf = dxf.get<float>(); c.in.norm_w = dnw.get<__half>(); c.in.eps = EXL_CUDA_TEST_NORM_EPS; c.in.ldx = w->k;
      } else {
        dxh.allocate(nullptr, xf.size() * 2, "normed x");
        rms_norm(dxf.get<float>(), m, w->k, dnw.get<__half>(), EXL_CUDA_TEST_NORM_EPS, dxh.get<__half>(), st.get(),
                 l.view.perm);
        c.mode = k_x_half; c.in.x = dxh.get<__half>(); c.in.ldx = w->k; c.in.permuted = true;
      }
      c.m = m; c.sm_count = sms; c.ws = gws.view();
      exl2_gemv_run(c, st.get());
      to_host(y, dy, mn, st.get());
      return;
    }
    DeviceBuffer dq;
    if (mode == 1) dq.allocate(nullptr, std::size_t(w->k) * w->n_pad * 2, "dq");
    linear_forward(l, dx.get<__half>(), m, dy.get<float>(), w->n, mode == 1 ? 0 : 1 << 30, sms, gws.view(),
                   dq.get<__half>(), mode == 1 ? std::size_t(w->k) * w->n_pad : 0, cb.get(), st.get());
    to_host(y, dy, mn, st.get());
    if (mode == 6) {  // column c holds output feature col_perm[c]
      const std::vector<float> folded(y, y + mn);
      for (int r = 0; r < m; ++r)
        for (int c = 0; c < w->n; ++c) y[std::size_t(r) * w->n + col_perm[std::size_t(c)]] = folded[std::size_t(r) * w->n + c];
    }
  });
}

int test_exl2_reconstruct(int device, const exl_cuda_exl2* w, uint16_t* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && out, "test_exl2_reconstruct: bad arguments");
    use_device(device);
    Stream st;
    DeviceLinear l;
    upload_linear(as_linear(*w), nullptr, 0, st.get(), l, nullptr);
    const std::size_t n = std::size_t(w->k) * w->n_pad;
    DeviceBuffer d(nullptr, n * 2, "out");
    EXL_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xff, d.bytes(), st.get()));  // poison
    exl2_reconstruct(l.view, d.get<__half>(), st.get());
    to_host(out, d, n, st.get());
  });
}

namespace {

exl_cuda_linear as_linear(const exl_cuda_exl3& w, int in_features, int out_features) {
  exl_cuda_linear l{};
  l.kind = 2;
  l.in_features = in_features > 0 ? in_features : w.k;
  l.out_features = out_features > 0 ? out_features : w.n;
  l.exl3 = w;
  return l;
}

}  // namespace

int test_exl3_matmul(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features, int out_features,
                     float* y, int mode) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && x && y && m > 0 && mode >= 0 && mode <= 2, "test_exl3_matmul: bad arguments");
    use_device(device);
    Stream st;
    CublasHandle cb;
    EXL_CUBLAS_CHECK(cublasSetStream(cb.get(), st.get()));
    DeviceLinear l;
    upload_linear(as_linear(*w, in_features, out_features), nullptr, 0, st.get(), l, nullptr);
    const std::size_t mn = std::size_t(m) * l.n;
    DeviceBuffer dx = to_device(x, std::size_t(m) * l.k, "x", st.get());
    DeviceBuffer dy = to_device(y, mn, "y", st.get());
    if (mode != 2) EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0xff, dy.bytes(), st.get()));  // overwritten: poison
    const int sms = sm_count_of(device);
    // Scratch as the backend sizes it for m rows, so the passes are exercised for large m.
    const Exl3Need need = exl3_need(l.view3, std::size_t(std::min(m, exl3_pass_rows)), sms);
    const std::size_t xr = need.xr, z = need.z;
    DeviceBuffer dxr(nullptr, xr * 2, "xr"), dz(nullptr, (z + need.tickets) * 4, "z");
    EXL_CUDA_CHECK(cudaMemsetAsync(dz.get<float>() + z, 0, need.tickets * 4, st.get()));
    DeviceBuffer dq;
    if (mode == 1) dq.allocate(nullptr, std::size_t(w->k) * w->n * 2, "dq");
    GemvScratch gws;
    gws.allocate(nullptr, st.get());
    linear_forward(l, dx.get<__half>(), m, dy.get<float>(), l.n, mode == 1 ? 0 : 1 << 30, sms, gws.view(),
                   dq.get<__half>(), mode == 1 ? std::size_t(w->k) * w->n : 0, cb.get(), st.get(), mode != 2,
                   Exl3Work{dxr.get<__half>(), xr, dz.get<float>(), z, reinterpret_cast<unsigned*>(dz.get<float>() + z),
                            need.tickets});
    to_host(y, dy, mn, st.get());
  });
}

int test_exl3_group(int device, const exl_cuda_exl3* w, int count, int mode, const float* x, const float* x2,
                    const void* norm_w, int in_features, float eps, int flags, float* y) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && count >= 1 && count <= k_exl3_group_max && mode >= 0 && mode <= 4 && x && y &&
                         in_features > 0 && (mode < 3 || x2) && (mode == 0 || mode >= 3 || norm_w),
                     "test_exl3_group: bad arguments");
    use_device(device);
    Stream st;
    const cudaStream_t s = st.get();
    const int sms = sm_count_of(device);
    const bool grouped = flags & 1, fold = flags & 2;
    std::vector<DeviceLinear> ls(static_cast<std::size_t>(count));
    std::size_t z_elems = 0, tickets = 0, y_elems = 0;
    for (int e = 0; e < count; ++e) {
      EXL_CUDA_REQUIRE(in_features <= w[e].k, "test_exl3_group: in_features past k");
      upload_linear(as_linear(w[e], in_features, 0), nullptr, 0, s, ls[std::size_t(e)], nullptr);
      z_elems += std::size_t(exl3_gemv_splits(ls[std::size_t(e)].view3, sms)) * std::size_t(w[e].n);
      tickets += std::size_t(w[e].n / 128);
      y_elems += std::size_t(w[e].n);
    }
    DeviceBuffer dz(nullptr, (z_elems + tickets) * 4, "z"), dy(nullptr, y_elems * 4, "y");
    unsigned* dt = reinterpret_cast<unsigned*>(dz.get<float>() + z_elems);
    EXL_CUDA_CHECK(cudaMemsetAsync(dt, 0, tickets * 4, s));
    EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0xff, dy.bytes(), s));  // overwritten: poison
    const std::size_t nin = std::size_t(in_features);
    DeviceBuffer dx = to_device(x, nin, "x", s), dx2, dw, dh;
    if (x2) dx2 = to_device(x2, nin, "x2", s);
    if (mode == 1) dw = to_device(static_cast<const uint16_t*>(norm_w), nin, "norm weights", s);
    if (mode == 2) dw = to_device(static_cast<const float*>(norm_w), nin, "norm weights", s);
    if (mode == 0) {
      std::vector<uint16_t> h(nin);
      for (std::size_t i = 0; i < nin; ++i) h[i] = float_to_half(x[i]);
      dh = to_device(h.data(), nin, "x fp16", s);
    }
    Exl3Input in;
    in.mode = mode;
    in.x = dh.get<__half>();
    in.xf = dx.get<float>();
    in.up = dx2.get<float>();
    in.norm16 = mode == 1 ? dw.get<__half>() : nullptr;
    in.norm32 = mode == 2 ? dw.get<float>() : nullptr;
    in.eps = eps;
    in.in_features = in_features;
    std::vector<Exl3Target> t(static_cast<std::size_t>(count));
    std::size_t zo = 0, to = 0, yo = 0;
    for (int e = 0; e < count; ++e) {
      const Exl3Device& v = ls[std::size_t(e)].view3;
      const int splits = exl3_gemv_splits(v, sms);
      t[std::size_t(e)] = Exl3Target{&v, dz.get<float>() + zo, splits, fold ? dt + to : nullptr, v.n, dy.get<float>() + yo,
                                     v.n, true};
      zo += std::size_t(splits) * std::size_t(v.n);
      to += std::size_t(v.n / 128);
      yo += std::size_t(v.n);
    }
    if (grouped) {
      exl3_gemv_group(t.data(), count, in, s);
      if (!fold) exl3_output_group(t.data(), count, s);
    } else {  // the separate launches: the input in fp16, then each layer's fused GEMV and output transform
      DeviceBuffer a(nullptr, nin * 2, "input");
      __half* ah = a.get<__half>();
      switch (mode) {
        case 0: EXL_CUDA_CHECK(cudaMemcpyAsync(ah, dh.get(), nin * 2, cudaMemcpyDeviceToDevice, s)); break;
        case 1: rms_norm(dx.get<float>(), 1, in_features, dw.get<__half>(), eps, ah, s); break;
        case 2: rms_norm_w32(dx.get<float>(), 1, in_features, dw.get<float>(), eps, ah, nullptr, nullptr, s); break;
        case 3: silu_mul(dx.get<float>(), dx2.get<float>(), std::int64_t(nin), ah, s); break;
        default: gelu_tanh_mul(dx.get<float>(), dx2.get<float>(), std::int64_t(nin), ah, s); break;
      }
      for (const Exl3Target& g : t) {
        exl3_gemv_fused(*g.w, ah, in_features, g.z, g.splits, s, g.tickets, g.out_features, g.y, g.ldy, true);
        if (!g.tickets) exl3_output_transform(*g.w, g.z, g.splits, 1, g.out_features, g.y, g.ldy, true, s);
      }
    }
    to_host(y, dy, y_elems, s);
  });
}

int test_exl3_reconstruct(int device, const exl_cuda_exl3* w, uint16_t* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && out, "test_exl3_reconstruct: bad arguments");
    use_device(device);
    Stream st;
    DeviceLinear l;
    upload_linear(as_linear(*w, 0, 0), nullptr, 0, st.get(), l, nullptr);
    const std::size_t n = std::size_t(w->k) * w->n;
    DeviceBuffer d(nullptr, n * 2, "out");
    EXL_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xff, d.bytes(), st.get()));  // poison
    exl3_reconstruct_t(l.view3, d.get<__half>(), st.get());
    std::vector<uint16_t> t(n);  // W-hat^T [n, k] back to W-hat [k, n]
    to_host(t.data(), d, n, st.get());
    for (std::size_t c = 0; c < std::size_t(w->n); ++c)
      for (std::size_t r = 0; r < std::size_t(w->k); ++r) out[r * std::size_t(w->n) + c] = t[c * std::size_t(w->k) + r];
  });
}

int test_exl3_input(int device, const exl_cuda_exl3* w, const uint16_t* x, int m, int in_features, uint16_t* xr) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(w && x && xr && m > 0 && in_features > 0 && in_features <= w->k, "test_exl3_input: bad arguments");
    use_device(device);
    Stream st;
    DeviceLinear l;
    upload_linear(as_linear(*w, in_features, 0), nullptr, 0, st.get(), l, nullptr);
    DeviceBuffer dx = to_device(x, std::size_t(m) * in_features, "x", st.get());
    DeviceBuffer d(nullptr, std::size_t(m) * w->k * 2, "xr");
    EXL_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xff, d.bytes(), st.get()));
    exl3_input_transform(l.view3, dx.get<__half>(), m, in_features, in_features, d.get<__half>(), st.get());
    to_host(xr, d, std::size_t(m) * w->k, st.get());
  });
}

int test_rms_norm(int device, const float* x, int rows, int dim, const uint16_t* w, float eps, uint16_t* y) {
  return guarded([&] {
    use_device(device);
    Stream st;
    DeviceBuffer dx = to_device(x, std::size_t(rows) * dim, "x", st.get());
    DeviceBuffer dw = to_device(w, std::size_t(dim), "w", st.get());
    DeviceBuffer dy(nullptr, std::size_t(rows) * dim * 2, "y");
    EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0xff, dy.bytes(), st.get()));
    rms_norm(dx.get<float>(), rows, dim, dw.get<__half>(), eps, dy.get<__half>(), st.get());
    to_host(y, dy, std::size_t(rows) * dim, st.get());
  });
}

int test_rope(int device, float* x, int tokens, int heads, int head_dim, int past, const float* inv_freq, float mscale,
              float position_divisor, int style) {
  return guarded([&] {
    use_device(device);
    Stream st;
    const std::size_t n = std::size_t(tokens) * heads * head_dim;
    DeviceBuffer dx = to_device(x, n, "x", st.get());
    DeviceBuffer df = to_device(inv_freq, std::size_t(head_dim / 2), "inv_freq", st.get());
    DeviceBuffer dp = to_device(&past, 1, "past", st.get());
    DeviceBuffer cs(nullptr, std::size_t(tokens) * (head_dim / 2) * 8, "rope table");
    const RopeParams rp{df.get<float>(), mscale, position_divisor, head_dim, dp.get<int>(), cs.get<float2>()};
    rope_table(rp, tokens, st.get());
    rope_inplace(dx.get<float>(), tokens, heads, head_dim, cs.get<float2>(), style, st.get());
    to_host(x, dx, n, st.get());
  });
}

int test_attention(int device, const uint16_t* q, const uint16_t* k_cache, const uint16_t* v_cache, int t, int past,
                   int nh, int nkv, int d, float scale, float* out) {
  return guarded([&] {
    use_device(device);
    Stream st;
    const int ctx = past + t;
    DeviceBuffer dq = to_device(q, std::size_t(t) * nh * d, "q", st.get());
    DeviceBuffer dk = to_device(k_cache, std::size_t(ctx) * nkv * d, "k", st.get());
    DeviceBuffer dv = to_device(v_cache, std::size_t(ctx) * nkv * d, "v", st.get());
    DeviceBuffer dp = to_device(&past, 1, "past", st.get());
    // Exercise several splits: 64-key splits up to 16 of them, then longer ones.
    AttentionShape a{t, nh, nkv, d, scale, 64, 1};
    a.splits = (ctx + 63) / 64;
    if (a.splits > 16) { a.split_len = ((ctx + 15) / 16 + 63) / 64 * 64; a.splits = (ctx + a.split_len - 1) / a.split_len; }
    if (t < 32) a.splits = 1 + (ctx * 7) % 150;  // decode kernels: any grid, empty splits included
    a.softcap = t_softcap;
    a.window = t_window;
    DeviceBuffer part(nullptr, attention_partial_floats(a) * 4, "partials");
    DeviceBuffer o(nullptr, std::size_t(t) * nh * d * 4, "out");
    EXL_CUDA_CHECK(cudaMemsetAsync(o.get(), 0xff, o.bytes(), st.get()));
    if (t == 1 && past % 2 == 1 && !attention_general(a)) {
      // Odd lengths take the fused decode step (attention_decode_step): q and the new key go in
      // as fp32 rotated back by a made-up RoPE angle table (so the step's own RoPE restores
      // them), the new K/V row of the cache is poisoned first and must be written by the step,
      // and the splits merge through their tickets (run twice: the tickets reset).
      const int half = d / 2, style = (past / 2) % 2;
      std::vector<float2> cs(static_cast<std::size_t>(half));
      for (int i = 0; i < half; ++i) {
        const double th = 0.37 * i + 0.01 * past + 0.3;
        cs[std::size_t(i)] = make_float2(float(std::cos(th)), float(std::sin(th)));
      }
      auto unrotate = [&](const uint16_t* x, int heads, std::vector<float>& outv) {
        outv.assign(std::size_t(heads) * d, 0.0f);
        for (int h = 0; h < heads; ++h)
          for (int i = 0; i < half; ++i) {
            const int ia = style == 0 ? i : 2 * i, ib = style == 0 ? i + half : 2 * i + 1;
            const double c = cs[std::size_t(i)].x, sn = cs[std::size_t(i)].y;
            const double xa = half_to_float(x[std::size_t(h) * d + ia]), xb = half_to_float(x[std::size_t(h) * d + ib]);
            outv[std::size_t(h) * d + ia] = float(xa * c + xb * sn);
            outv[std::size_t(h) * d + ib] = float(xb * c - xa * sn);
          }
      };
      std::vector<float> q32, k32, v32(std::size_t(nkv) * d);
      unrotate(q, nh, q32);
      unrotate(k_cache + std::size_t(past) * nkv * d, nkv, k32);
      for (std::size_t i = 0; i < v32.size(); ++i) v32[i] = half_to_float(v_cache[std::size_t(past) * nkv * d + i]);
      DeviceBuffer dq32 = to_device(q32.data(), q32.size(), "q fp32", st.get());
      DeviceBuffer dk32 = to_device(k32.data(), k32.size(), "k fp32", st.get());
      DeviceBuffer dv32 = to_device(v32.data(), v32.size(), "v fp32", st.get());
      DeviceBuffer dcs = to_device(cs.data(), cs.size(), "cos sin", st.get());
      DeviceBuffer ctr(nullptr, std::size_t(nkv) * 4, "counters");
      EXL_CUDA_CHECK(cudaMemsetAsync(ctr.get(), 0, ctr.bytes(), st.get()));
      DecodeStepInputs in;
      in.q = dq32.get<float>(); in.k = dk32.get<float>(); in.v = dv32.get<float>(); in.cs = dcs.get<float2>();
      in.style = style; in.counters = ctr.get<unsigned>();
      const std::size_t row = std::size_t(past) * nkv * d * 2;
      for (int rep = 0; rep < 2; ++rep) {
        EXL_CUDA_CHECK(cudaMemsetAsync(dk.get<char>() + row, 0xff, std::size_t(nkv) * d * 2, st.get()));
        EXL_CUDA_CHECK(cudaMemsetAsync(dv.get<char>() + row, 0xff, std::size_t(nkv) * d * 2, st.get()));
        attention_decode_step(a, in, dk.get<__half>(), dv.get<__half>(), dp.get<int>(), part.get<float>(), nullptr,
                              o.get<float>(), st.get());
      }
      // The written V row must be the input's exactly (K went through two roundings).
      std::vector<std::uint16_t> vrow(std::size_t(nkv) * d);
      EXL_CUDA_CHECK(cudaMemcpyAsync(vrow.data(), dv.get<char>() + row, vrow.size() * 2, cudaMemcpyDeviceToHost, st.get()));
      st.sync();
      EXL_CUDA_REQUIRE(std::memcmp(vrow.data(), v_cache + std::size_t(past) * nkv * d, vrow.size() * 2) == 0,
                       "attention_decode_step: the V row written to the cache differs from the input");
      to_host(out, o, std::size_t(t) * nh * d, st.get());
      return;
    }
    // Short chunks: every other call takes the CUDA-core decode kernels instead of the tensor-core ones.
    static int calls = 0;
    const bool was = set_decode_mma(t >= 32 || calls++ % 2 == 0);
    attention(a, dq.get<__half>(), dk.get<__half>(), dv.get<__half>(), dp.get<int>(), part.get<float>(), nullptr,
              o.get<float>(), st.get());
    set_decode_mma(was);
    to_host(out, o, std::size_t(t) * nh * d, st.get());
  });
}

int test_exact_acc(int device, const float* x, int rows, int n, const float* bias, float* out) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(x && out && rows > 0 && n > 0, "test_exact_acc: bad arguments");
    use_device(device);
    Stream st;
    const std::size_t count = std::size_t(rows) * n;
    DeviceBuffer dx = to_device(x, count, "x", st.get());
    DeviceBuffer db;
    if (bias) db = to_device(bias, std::size_t(n), "bias", st.get());
    DeviceBuffer dq(nullptr, count * 8, "exact"), dout(nullptr, count * 4, "out");
    EXL_CUDA_CHECK(cudaMemsetAsync(dq.get(), 0xff, dq.bytes(), st.get()));  // poison
    embedding_step(nullptr, n, nullptr, rows, dx.get<float>(), RopeParams{}, nullptr, 0, st.get(), dq.get<long long>());
    add_bias_exact(dq.get<long long>(), rows, n, n, bias ? db.get<float>() : nullptr, st.get());
    exact_to_float(dq.get<long long>(), std::int64_t(count), dout.get<float>(), st.get());
    to_host(out, dout, count, st.get());
  });
}

int test_silu_mul(int device, const float* gate, const float* up, int64_t n, uint16_t* out) {
  return guarded([&] {
    use_device(device);
    Stream st;
    DeviceBuffer g = to_device(gate, std::size_t(n), "gate", st.get());
    DeviceBuffer u = to_device(up, std::size_t(n), "up", st.get());
    DeviceBuffer o(nullptr, std::size_t(n) * 2, "out");
    silu_mul(g.get<float>(), u.get<float>(), n, o.get<__half>(), st.get());
    to_host(out, o, std::size_t(n), st.get());
  });
}

int test_embedding(int device, const uint16_t* table, int vocab, int dim, const int32_t* ids, int n, float* out) {
  return guarded([&] {
    use_device(device);
    Stream st;
    for (int i = 0; i < n; ++i) EXL_CUDA_REQUIRE(ids[i] >= 0 && ids[i] < vocab, "test_embedding: id out of range");
    DeviceBuffer t = to_device(table, std::size_t(vocab) * dim, "table", st.get());
    DeviceBuffer di = to_device(ids, std::size_t(n), "ids", st.get());
    DeviceBuffer o(nullptr, std::size_t(n) * dim * 4, "out");
    embedding(t.get<__half>(), dim, di.get<std::int32_t>(), n, o.get<float>(), st.get());
    to_host(out, o, std::size_t(n) * dim, st.get());
  });
}

int test_dense_linear(int device, const uint16_t* x, int m, int k, const uint16_t* w, int n, float* y) {
  return guarded([&] {
    use_device(device);
    Stream st;
    CublasHandle cb;
    EXL_CUBLAS_CHECK(cublasSetStream(cb.get(), st.get()));
    exl_cuda_linear src{};
    src.kind = 0; src.in_features = k; src.out_features = n; src.weight = w; src.weight_dtype = EXL_CUDA_F16;
    DeviceLinear l;
    upload_linear(src, nullptr, 0, st.get(), l, nullptr);
    DeviceBuffer dx = to_device(x, std::size_t(m) * k, "x", st.get());
    DeviceBuffer dy(nullptr, std::size_t(m) * n * 4, "y");
    EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0, dy.bytes(), st.get()));
    linear_forward(l, dx.get<__half>(), m, dy.get<float>(), n, 16, sm_count_of(device), GemvWorkspace{}, nullptr, 0,
                   cb.get(), st.get());
    to_host(y, dy, std::size_t(m) * n, st.get());
  });
}

int bench_copy_bandwidth(int device, uint64_t bytes, double* gbs) {
  return guarded([&] {
    use_device(device);
    Stream st;
    Event e0, e1;
    DeviceBuffer a(nullptr, bytes, "copy src"), b(nullptr, bytes, "copy dst");
    EXL_CUDA_CHECK(cudaMemsetAsync(a.get(), 1, bytes, st.get()));
    std::vector<double> ms;
    for (int i = 0; i < 12; ++i) {
      EXL_CUDA_CHECK(cudaEventRecord(e0.get(), st.get()));
      EXL_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st.get()));
      EXL_CUDA_CHECK(cudaEventRecord(e1.get(), st.get()));
      EXL_CUDA_CHECK(cudaEventSynchronize(e1.get()));
      float t = 0;
      EXL_CUDA_CHECK(cudaEventElapsedTime(&t, e0.get(), e1.get()));
      if (i >= 2) ms.push_back(t);
    }
    *gbs = 2.0 * double(bytes) / (median(ms) * 1e-3) / 1e9;
  });
}

// FP16 GEMM on tensor cores (cuBLAS, fp32 accumulation as the prefill path uses it): an m x n x k
// product timed between events, median of repeats after a warm-up; TFLOP/s.
int bench_fp16_gemm(int device, int m, int n, int k, double* tflops) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(tflops && m > 0 && n > 0 && k > 0, "bench_fp16_gemm: bad arguments");
    use_device(device);
    Stream st;
    CublasHandle cb;
    EXL_CUBLAS_CHECK(cublasSetStream(cb.get(), st.get()));
    Event e0, e1;
    DeviceBuffer a(nullptr, std::size_t(m) * k * 2, "GEMM A"), b(nullptr, std::size_t(k) * n * 2, "GEMM B"),
        c(nullptr, std::size_t(m) * n * 4, "GEMM C");
    EXL_CUDA_CHECK(cudaMemsetAsync(a.get(), 0x3c, a.bytes(), st.get()));  // fp16 1.0x: finite values
    EXL_CUDA_CHECK(cudaMemsetAsync(b.get(), 0x3c, b.bytes(), st.get()));
    const float one = 1.0f, zero = 0.0f;
    std::vector<double> ms;
    for (int i = 0; i < 12; ++i) {
      EXL_CUDA_CHECK(cudaEventRecord(e0.get(), st.get()));
      EXL_CUBLAS_CHECK(cublasGemmEx(cb.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b.get(), CUDA_R_16F, n, a.get(),
                                    CUDA_R_16F, k, &zero, c.get(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      EXL_CUDA_CHECK(cudaEventRecord(e1.get(), st.get()));
      EXL_CUDA_CHECK(cudaEventSynchronize(e1.get()));
      float t = 0;
      EXL_CUDA_CHECK(cudaEventElapsedTime(&t, e0.get(), e1.get()));
      if (i >= 2) ms.push_back(t);
    }
    *tflops = 2.0 * double(m) * n * k / (median(ms) * 1e-3) / 1e12;
  });
}

// Times `repeats` back-to-back launches between two events over enough copies of the layer
// (rotated) that the weights do not stay in the 50 MB L2 cache; returns microseconds per call.
int bench_exl2_matmul(int device, const exl_cuda_exl2* w, int m, int mode, int repeats, double* us) {
  return guarded([&] {
    use_device(device);
    Stream st;
    CublasHandle cb;
    EXL_CUBLAS_CHECK(cublasSetStream(cb.get(), st.get()));
    Event e0, e1;
    const double layer = double(w->q_rows) * w->n_pad * 4;
    // mode 2: the fused kernel with programmatic dependent launch (consecutive launches overlap
    // their weight prefetch with the previous launch's tail, as in the decode graph).
    struct PdlScope {
      bool saved = pdl_enabled();
      ~PdlScope() { set_pdl(saved); }
    } pdl_scope;
    set_pdl(mode == 2);
    const int copies = mode == 1 ? 1 : std::max(1, std::min(64, int(std::ceil(400e6 / layer))));
    std::vector<DeviceLinear> ls(static_cast<std::size_t>(copies));
    for (DeviceLinear& l : ls) upload_linear(as_linear(*w), nullptr, 0, st.get(), l, nullptr);
    DeviceBuffer dx(nullptr, std::size_t(m) * w->k * 2, "x");
    fill_random_half(dx.get<__half>(), std::size_t(m) * w->k, 5, -1.0f, 1.0f, st.get());
    DeviceBuffer dy(nullptr, std::size_t(m) * w->n * 4, "y");
    EXL_CUDA_CHECK(cudaMemsetAsync(dy.get(), 0, dy.bytes(), st.get()));
    DeviceBuffer dq;
    if (mode == 1) dq.allocate(nullptr, std::size_t(w->k) * w->n_pad * 2, "dq");
    const int sms = sm_count_of(device);
    GemvScratch gws;
    gws.allocate(nullptr, st.get());
    auto one = [&](int i) {
      linear_forward(ls[std::size_t(i % copies)], dx.get<__half>(), m, dy.get<float>(), w->n, mode == 1 ? 0 : 1 << 30,
                     sms, gws.view(), dq.get<__half>(), mode == 1 ? std::size_t(w->k) * w->n_pad : 0, cb.get(), st.get());
    };
    for (int i = 0; i < 3; ++i) one(i);
    EXL_CUDA_CHECK(cudaEventRecord(e0.get(), st.get()));
    for (int i = 0; i < repeats; ++i) one(i);
    EXL_CUDA_CHECK(cudaEventRecord(e1.get(), st.get()));
    EXL_CUDA_CHECK(cudaEventSynchronize(e1.get()));
    float ms = 0;
    EXL_CUDA_CHECK(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
    *us = ms * 1e3 / repeats;
  });
}

// The device sampler on one host row: uploads the logits, runs the same launch as the decode step
// (with the kept distribution left in the work buffer) and copies the result (and distribution) back.
int test_sample(int device, const float* logits, int vocab, const exl_cuda_sampler* smp, exl_cuda_sample_result* out,
                float* dist) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(logits && vocab > 0 && smp && out, "test_sample: bad arguments");
    use_device(device);
    Stream st;
    DeviceSampler sampler(nullptr, vocab, smp->num_penalty);
    sampler.stage(*smp, dist != nullptr);
    DeviceBuffer dl = to_device(logits, std::size_t(vocab), "logits", st.get());
    sampler.enqueue_upload(st.get());
    sampler.enqueue_sample(dl.get<float>(), st.get());
    if (dist)
      EXL_CUDA_CHECK(cudaMemcpyAsync(dist, sampler.dist_device(), std::size_t(vocab) * 4, cudaMemcpyDeviceToHost,
                                     st.get()));
    st.sync();
    *out = sampler.result();
  });
}

int bench_forward(exl_cuda_backend* b, int n, int past, int repeats, double* us) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(b && us && n > 0 && repeats > 0, "bench_forward: bad arguments");
    CudaBackend& be = *b->impl;
    std::vector<std::int32_t> ids(std::size_t(n), 1);
    // Up to 16 tokens: every row's logits, as speculative verification asks; longer: the last row.
    const int mode = n > 1 && n <= 16 ? 2 : 1;
    std::vector<float> logits(std::size_t(mode == 2 ? n : 1) * be.vocab());
    std::vector<double> t;
    for (int i = 0; i < repeats + 2; ++i) {
      be.set_length_unchecked(past);
      // The first timed forward is the profiler's range (ncu --profile-from-start off).
      if (i == 2) EXL_CUDA_CHECK(cudaProfilerStart());
      const auto t0 = std::chrono::steady_clock::now();
      be.forward(ids.data(), n, mode, logits.data());
      const auto t1 = std::chrono::steady_clock::now();
      if (i == 2) EXL_CUDA_CHECK(cudaProfilerStop());
      if (i >= 2) t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    be.set_length_unchecked(0);
    *us = median(t);
  });
}

}  // namespace exl::cuda

namespace exl::cuda {

int test_kv_cache(int device, int kfmt, int vfmt, const uint16_t* q, const uint16_t* k, const uint16_t* v, int t, int past,
                  int nh, int nkv, int d, float scale, const int* chunks, int n_chunks, float* out, uint8_t* k_data,
                  uint16_t* k_scales, uint8_t* v_data, uint16_t* v_scales, const int32_t* page_table, int store_pages) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(q && k && v && out && t > 0 && past >= 0 && (n_chunks == 0 || chunks), "test_kv_cache: bad arguments");
    use_device(device);
    Stream st;
    const cudaStream_t s = st.get();
    const int ctx = past + t, row = nkv * d;
    const int qb = kv_rotated(kfmt) || kv_rotated(vfmt) ? kv_q_block_tokens(row) : 1;
    // The CPU store's capacity: whole 512-element blocks for Q8/Q4, ctx rows otherwise.
    auto elems_of = [&](int fmt) { return std::size_t(kv_rotated(fmt) ? (ctx + qb - 1) / qb * qb : ctx) * row; };
    // Paged: the stores hold store_pages pages; position p sits in row kv_row(p) of them.
    const int table_len = (ctx + k_kv_page_tokens - 1) / k_kv_page_tokens;
    if (page_table) {
      EXL_CUDA_REQUIRE(store_pages >= table_len, "test_kv_cache: fewer store pages than the context needs");
      for (int i = 0; i < table_len; ++i)
        EXL_CUDA_REQUIRE(page_table[i] >= 0 && page_table[i] < store_pages, "test_kv_cache: page out of range");
    }
    auto kv_row = [&](std::size_t pos) {
      if (!page_table) return pos;
      return std::size_t(page_table[pos / k_kv_page_tokens]) * k_kv_page_tokens + pos % k_kv_page_tokens;
    };
    const std::size_t store_elems = page_table ? std::size_t(store_pages) * k_kv_page_tokens * row : 0;
    DeviceBuffer dpages = page_table ? to_device(page_table, std::size_t(table_len), "page table", s) : DeviceBuffer();
    const int* pages = page_table ? dpages.get<int>() : nullptr;
    const int most = std::max(t, n_chunks ? *std::max_element(chunks, chunks + n_chunks) : 1);
    struct Store {
      DeviceBuffer data, scales, stage;
      int fmt;
    };
    auto make = [&](int fmt, const char* what) {
      const std::size_t elems = page_table ? store_elems : elems_of(fmt);
      Store x{DeviceBuffer(nullptr, kv_store_data_bytes(fmt, elems), what),
              DeviceBuffer(nullptr, kv_rotated(fmt) ? elems / 32 * 2 : 0, "scales"),
              DeviceBuffer(nullptr, std::size_t(most) * row * 2, "staging"), fmt};
      EXL_CUDA_CHECK(cudaMemsetAsync(x.data.get(), 0, x.data.bytes(), s));
      if (x.scales.bytes()) EXL_CUDA_CHECK(cudaMemsetAsync(x.scales.get(), 0, x.scales.bytes(), s));
      return x;
    };
    Store ks = make(kfmt, "K store"), vs = make(vfmt, "V store");
    DeviceBuffer dpast(nullptr, 4, "past");
    DeviceBuffer dq = to_device(q, std::size_t(t) * nh * d, "q", s);
    DeviceBuffer att(nullptr, std::size_t(t) * nh * d * 2, "out");
    std::vector<int> h_past(1);
    // Puts rows [p, p + n) of `src` where the layer step would: an fp16 store directly, else the staging.
    auto stage_rows = [&](Store& x, const uint16_t* src, int p, int n) {
      if (x.fmt != kv_f16) {
        EXL_CUDA_CHECK(cudaMemcpyAsync(x.stage.get(), src + std::size_t(p) * row, std::size_t(n) * row * 2,
                                       cudaMemcpyHostToDevice, s));
        return;
      }
      for (int i = p; i < p + n; ++i)  // row by row: each position to its page
        EXL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(x.data.get()) + kv_row(std::size_t(i)) * row * 2,
                                       src + std::size_t(i) * row, std::size_t(row) * 2, cudaMemcpyHostToDevice, s));
    };
    auto set_past = [&](int p) {
      h_past[0] = p;
      EXL_CUDA_CHECK(cudaMemcpyAsync(dpast.get(), h_past.data(), 4, cudaMemcpyHostToDevice, s));
      EXL_CUDA_CHECK(cudaStreamSynchronize(s));  // h_past is pageable and reused
    };
    auto writes = [&](Store& x) {
      return KvStoreWrite{x.fmt, x.data.get(), x.scales.get<__half>(), x.stage.get<__half>(), pages};
    };
    int p = 0;
    for (int c = 0; c < n_chunks; ++c) {
      EXL_CUDA_REQUIRE(chunks[c] > 0 && chunks[c] <= most, "test_kv_cache: bad chunk");
      set_past(p);
      stage_rows(ks, k, p, chunks[c]);
      stage_rows(vs, v, p, chunks[c]);
      kv_prepare(nullptr, chunks[c], nh, nkv, d, kfmt, ks.stage.get<__half>(), vfmt, vs.stage.get<__half>(), s);
      kv_finish(nullptr, chunks[c], nh, nkv, d, writes(ks), writes(vs), dpast.get<int>(), s);
      p += chunks[c];
    }
    EXL_CUDA_REQUIRE(p == past, "test_kv_cache: the chunks must sum to past");
    // Copies of the stores before this chunk, for the folded form below.
    Store ks2 = make(kfmt, "K store (folded form)"), vs2 = make(vfmt, "V store (folded form)");
    for (auto [dst, src] : {std::pair{&ks2, &ks}, std::pair{&vs2, &vs}}) {
      EXL_CUDA_CHECK(cudaMemcpyAsync(dst->data.get(), src->data.get(), src->data.bytes(), cudaMemcpyDeviceToDevice, s));
      if (src->scales.bytes())
        EXL_CUDA_CHECK(cudaMemcpyAsync(dst->scales.get(), src->scales.get(), src->scales.bytes(), cudaMemcpyDeviceToDevice, s));
    }
    set_past(past);
    stage_rows(ks, k, past, t);
    stage_rows(vs, v, past, t);
    kv_prepare(dq.get<__half>(), t, nh, nkv, d, kfmt, ks.stage.get<__half>(), vfmt, vs.stage.get<__half>(), s);
    AttentionShape a{t, nh, nkv, d, kv_rotated(kfmt) ? scale / 32.0f : scale, 64, 1, pages};
    a.splits = 1 + (ctx * 7) % 150;
    if (t >= 32) { a.split_len = ((ctx + 15) / 16 + 63) / 64 * 64; a.splits = (ctx + a.split_len - 1) / a.split_len; }
    a.softcap = t_softcap;
    a.window = t_window;
    DeviceBuffer part(nullptr, attention_partial_floats(a) * 4, "partials");
    const KvSource ksrc{kfmt, ks.data.get(), ks.scales.get<__half>(), kfmt == kv_f16 ? nullptr : ks.stage.get<__half>()};
    const KvSource vsrc{vfmt, vs.data.get(), vs.scales.get<__half>(), vfmt == kv_f16 ? nullptr : vs.stage.get<__half>()};
    // Short chunks: first the form the decode step uses when o's input permutation is folded
    // (the output scattered into o's stored order by the merge, or by kv_finish's rotation for a
    // rotated V; no store writes), checked below against the plain output position by position.
    const std::size_t on = std::size_t(t) * nh * d;
    std::vector<uint16_t> scattered;
    std::vector<std::int32_t> pos;
    if (t < 32) {
      const std::vector<std::int32_t> perm = synthetic_perm(nh * d, 7 + std::uint64_t(ctx));
      pos.assign(perm.size(), 0);
      for (std::size_t i = 0; i < perm.size(); ++i) pos[std::size_t(perm[i])] = std::int32_t(i);
      DeviceBuffer dpos = to_device(pos.data(), pos.size(), "out_pos", s);
      DeviceBuffer att2(nullptr, on * 2, "out (plain order)"), dst(nullptr, on * 2, "out (o's order)");
      const bool vrot = kv_rotated(vfmt);
      attention(a, dq.get<__half>(), ksrc, vsrc, dpast.get<int>(), part.get<float>(), vrot ? att2.get<__half>() : dst.get<__half>(),
                nullptr, s, vrot ? nullptr : dpos.get<std::int32_t>());
      if (vrot)
        kv_finish(att2.get<__half>(), t, nh, nkv, d, KvStoreWrite{}, KvStoreWrite{vfmt, nullptr, nullptr, nullptr},
                  dpast.get<int>(), s, dst.get<__half>(), dpos.get<std::int32_t>());
      scattered.resize(on);
      to_host(scattered.data(), dst, on, s);
    }
    attention(a, dq.get<__half>(), ksrc, vsrc, dpast.get<int>(), part.get<float>(), att.get<__half>(), nullptr, s);
    // Short chunks: the other decode kernel families too (before the stores' writes re-quantize
    // the partly covered block before `past`), rotated back without writing the stores: the other
    // of CUDA cores / tensor cores, and for Q8/Q4 the other tensor-core form (fp16 tile /
    // dequantized into the fragments).
    auto other_kernels = [&](DeviceBuffer& dst, bool mma, bool reg) {
      const bool was_mma = set_decode_mma(mma), was_reg = set_decode_reg(reg);
      attention(a, dq.get<__half>(), ksrc, vsrc, dpast.get<int>(), part.get<float>(), dst.get<__half>(), nullptr, s);
      if (kv_rotated(vfmt))
        kv_finish(dst.get<__half>(), t, nh, nkv, d, KvStoreWrite{}, KvStoreWrite{vfmt, nullptr, nullptr, nullptr},
                  dpast.get<int>(), s);
      set_decode_mma(was_mma);
      set_decode_reg(was_reg);
    };
    DeviceBuffer alt(nullptr, t < 32 ? on * 2 : 0, "out (other decode kernels)");
    DeviceBuffer alt_tile(nullptr, t < 32 ? on * 2 : 0, "out (other tensor-core form)");
    if (t < 32) {
      other_kernels(alt, !decode_mma(), decode_reg());
      other_kernels(alt_tile, true, !decode_reg());
    }
    kv_finish(att.get<__half>(), t, nh, nkv, d, writes(ks), writes(vs), dpast.get<int>(), s);
    std::vector<uint16_t> oh(on);
    to_host(oh.data(), att, oh.size(), s);
    if (t < 32) {  // every decode kernel family gives the same output
      for (const DeviceBuffer* b : {&alt, &alt_tile}) {
        std::vector<uint16_t> ah(on);
        to_host(ah.data(), *b, ah.size(), s);
        float worst = 0.0f;
        for (std::size_t i = 0; i < on; ++i) worst = std::max(worst, std::fabs(half_to_float(ah[i]) - half_to_float(oh[i])));
        EXL_CUDA_REQUIRE(worst <= 4e-3f, std::string("attention: the decode kernels differ (") +
                                             (b == &alt ? "CUDA cores vs tensor cores" : "fp16 tile vs fragments") +
                                             ") by " + std::to_string(worst));
      }
    }
    // The folded form, as the backend's layer step runs it: RoPE (here with cos 1, sin 0, so q and
    // the rows stay as given) also rotates q and the staged rows and, where kv_fold_store allows,
    // writes the stores; in the decode form the merge rotates the output back. Output and stores
    // equal the separate passes' bit for bit.
    {
      const std::size_t kn = std::size_t(t) * row;
      std::vector<float> q32(on), k32(kn), v32(kn);
      for (std::size_t i = 0; i < on; ++i) q32[i] = half_to_float(q[i]);
      for (std::size_t i = 0; i < kn; ++i) {
        k32[i] = half_to_float(k[std::size_t(past) * row + i]);
        v32[i] = half_to_float(v[std::size_t(past) * row + i]);
      }
      std::vector<float> cs(std::size_t(t) * d, 0.0f);
      for (std::size_t i = 0; i < cs.size(); i += 2) cs[i] = 1.0f;
      DeviceBuffer dq32 = to_device(q32.data(), on, "q (fp32)", s), dk32 = to_device(k32.data(), kn, "k (fp32)", s);
      DeviceBuffer dv32 = to_device(v32.data(), kn, "v (fp32)", s), dcs = to_device(cs.data(), cs.size(), "cos/sin", s);
      DeviceBuffer q2(nullptr, on * 2, "q (folded form)"), out2(nullptr, on * 2, "out (folded form)");
      const bool kst = kfmt != kv_f16, vst = vfmt != kv_f16;
      const bool k_here = kst && kv_fold_store(kfmt, row), v_here = vst && kv_fold_store(vfmt, row);
      RopeKvFold f;
      f.rotate_q = f.rotate_k = kv_rotated(kfmt);
      f.rotate_v = kv_rotated(vfmt);
      if (k_here) f.k = writes(ks2);
      if (v_here) f.v = writes(vs2);
      rope_qkv_cache(dq32.get<float>(), dk32.get<float>(), dv32.get<float>(), t, nh, nkv, d, dpast.get<int>(),
                     dcs.get<float2>(), 0, q2.get<__half>(), (kst ? ks2.stage : ks2.data).get<__half>(),
                     (vst ? vs2.stage : vs2.data).get<__half>(), s, kst, vst, pages, f);
      AttentionShape a2 = a;
      a2.rotate_out = kv_rotated(vfmt) && attention_decode_form(a2);
      const KvSource k2{kfmt, ks2.data.get(), ks2.scales.get<__half>(), kst ? ks2.stage.get<__half>() : nullptr};
      const KvSource v2{vfmt, vs2.data.get(), vs2.scales.get<__half>(), vst ? vs2.stage.get<__half>() : nullptr};
      attention(a2, q2.get<__half>(), k2, v2, dpast.get<int>(), part.get<float>(), out2.get<__half>(), nullptr, s);
      const bool rot_left = kv_rotated(vfmt) && !a2.rotate_out;
      kv_finish(rot_left ? out2.get<__half>() : nullptr, t, nh, nkv, d, k_here ? KvStoreWrite{kfmt} : writes(ks2),
                v_here ? KvStoreWrite{vfmt} : writes(vs2), dpast.get<int>(), s);
      std::vector<uint16_t> o2(on);
      to_host(o2.data(), out2, on, s);
      EXL_CUDA_REQUIRE(o2 == oh, "attention: the folded form's output differs from the separate passes'");
      for (auto [x, y] : {std::pair{&ks, &ks2}, std::pair{&vs, &vs2}}) {
        for (auto [b1, b2] : {std::pair{&x->data, &y->data}, std::pair{&x->scales, &y->scales}}) {
          if (!b1->bytes()) continue;
          std::vector<std::uint8_t> h1(b1->bytes()), h2(b2->bytes());
          to_host(h1.data(), *b1, h1.size(), s);
          to_host(h2.data(), *b2, h2.size(), s);
          EXL_CUDA_REQUIRE(h1 == h2, std::string("KV cache: the folded form's ") + (x == &ks ? "K" : "V") +
                                         (b1 == &x->data ? " store" : " scales") + " differ from kv_finish's");
        }
      }
    }
    const std::size_t orow = std::size_t(nh) * d;
    for (std::size_t i = 0; i < scattered.size(); ++i) {
      const std::size_t r = i / orow * orow;
      EXL_CUDA_REQUIRE(scattered[r + std::size_t(pos[i - r])] == oh[i],
                       "attention: the output scattered into o's stored order differs from the plain output at element " +
                           std::to_string(i));
    }
    for (std::size_t i = 0; i < oh.size(); ++i) out[i] = half_to_float(oh[i]);
    // The stores in position order: a contiguous store as it is, a paged one position by position
    // through the table (elems_of(fmt) / row positions, all inside the table's pages).
    auto read_store = [&](std::uint8_t* dst, const DeviceBuffer& b, int fmt, bool scales) {
      const std::size_t elems = elems_of(fmt);
      const std::size_t pos_bytes = scales ? std::size_t(row) / 32 * 2 : kv_store_data_bytes(fmt, std::size_t(row));
      if (!page_table) {
        to_host(dst, b, elems / std::size_t(row) * pos_bytes, s);
        return;
      }
      std::vector<std::uint8_t> all(b.bytes());
      to_host(all.data(), b, all.size(), s);
      for (std::size_t p = 0; p < elems / std::size_t(row); ++p)
        std::memcpy(dst + p * pos_bytes, all.data() + kv_row(p) * pos_bytes, pos_bytes);
    };
    if (k_data) read_store(k_data, ks.data, kfmt, false);
    if (v_data) read_store(v_data, vs.data, vfmt, false);
    if (k_scales && ks.scales.bytes()) read_store(reinterpret_cast<std::uint8_t*>(k_scales), ks.scales, kfmt, true);
    if (v_scales && vs.scales.bytes()) read_store(reinterpret_cast<std::uint8_t*>(v_scales), vs.scales, vfmt, true);
  });
}

}  // namespace exl::cuda

namespace exl::cuda {

int test_attention_options(float softcap, int window) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(softcap >= 0.0f && window >= 0, "test_attention_options: negative soft-cap or window");
    t_softcap = softcap;
    t_window = window;
  });
}

int test_family_op(int device, int op, float* x, const float* x2, const float* w, int rows, int dim, float eps,
                   float param, int aux, int aux2, void* y) {
  return guarded([&] {
    EXL_CUDA_REQUIRE(x && rows > 0 && dim > 0 && op >= 0 && op <= 6, "test_family_op: bad arguments");
    use_device(device);
    Stream st;
    const cudaStream_t s = st.get();
    const std::size_t n = std::size_t(rows) * dim;
    DeviceBuffer dx = to_device(x, n, "x", s);
    if (op <= 2) {  // RMSNorm with fp32 weights
      EXL_CUDA_REQUIRE(w && (op == 1 || y), "test_family_op: norm weights and output needed");
      DeviceBuffer dw = to_device(w, std::size_t(dim), "w", s);
      if (op == 0) {
        DeviceBuffer dy(nullptr, n * 2, "y");
        rms_norm_w32(dx.get<float>(), rows, dim, dw.get<float>(), eps, dy.get<__half>(), nullptr, nullptr, s);
        to_host(static_cast<std::uint16_t*>(y), dy, n, s);
      } else if (op == 1) {
        rms_norm_w32(dx.get<float>(), rows, dim, dw.get<float>(), eps, nullptr, dx.get<float>(), nullptr, s);
        to_host(x, dx, n, s);
      } else {
        DeviceBuffer dy = to_device(static_cast<const float*>(y), n, "y", s);
        rms_norm_w32(dx.get<float>(), rows, dim, dw.get<float>(), eps, nullptr, nullptr, dy.get<float>(), s);
        to_host(static_cast<float*>(y), dy, n, s);
      }
      return;
    }
    if (op == 3) {
      EXL_CUDA_REQUIRE(x2 && y, "test_family_op: gelu needs up and an output");
      DeviceBuffer du = to_device(x2, n, "up", s);
      DeviceBuffer dy(nullptr, n * 2, "y");
      gelu_tanh_mul(dx.get<float>(), du.get<float>(), std::int64_t(n), dy.get<__half>(), s);
      to_host(static_cast<std::uint16_t*>(y), dy, n, s);
      return;
    }
    if (op == 4 || op == 5) {
      if (op == 4) scale_inplace(dx.get<float>(), std::int64_t(n), param, s);
      else softcap_inplace(dx.get<float>(), std::int64_t(n), param, s);
      to_host(x, dx, n, s);
      return;
    }
    // op 6: RoPE with partial rotary through rope_qkv_cache (x as q, rows tokens at positions 0..).
    const int d = aux, rh = aux2;
    EXL_CUDA_REQUIRE(x2 && d > 0 && d % 2 == 0 && dim % d == 0 && rh > 0 && rh <= d / 2,
                     "test_family_op: RoPE needs inv_freq, head_dim and rotary_half");
    const int heads = dim / d;
    std::vector<float> f(std::size_t(d / 2), 0.0f);
    std::copy(x2, x2 + rh, f.begin());
    DeviceBuffer df = to_device(f.data(), f.size(), "inv_freq", s);
    const int zero = 0;
    DeviceBuffer dp = to_device(&zero, 1, "past", s);
    DeviceBuffer cs(nullptr, std::size_t(rows) * (d / 2) * 8, "rope table");
    rope_table(RopeParams{df.get<float>(), param, 1.0f, d, dp.get<int>(), cs.get<float2>()}, rows, s);
    DeviceBuffer kv(nullptr, std::size_t(rows) * d * 4, "k, v (one head)");
    EXL_CUDA_CHECK(cudaMemsetAsync(kv.get(), 0, kv.bytes(), s));
    DeviceBuffer qh(nullptr, n * 2, "q out"), kc(nullptr, std::size_t(rows) * d * 2, "k cache"),
        vc(nullptr, std::size_t(rows) * d * 2, "v cache");
    rope_qkv_cache(AccIn{dx.get<float>()}, AccIn{kv.get<float>()}, AccIn{kv.get<float>()}, rows, heads, 1, d,
                   dp.get<int>(), cs.get<float2>(), 0, qh.get<__half>(), kc.get<__half>(), vc.get<__half>(), s, false,
                   false, nullptr, RopeKvFold{}, rh < d / 2 ? rh : 0);
    std::vector<std::uint16_t> h(n);
    to_host(h.data(), qh, n, s);
    for (std::size_t i = 0; i < n; ++i) x[i] = half_to_float(h[i]);
  });
}

}  // namespace exl::cuda

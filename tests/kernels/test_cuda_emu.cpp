// The EXL2 GEMV's launch form run by the CUDA emulator (kernels/cuda/emu): the same sources,
// compiled for the CPU, against kernels/reference. The launch form is verified on the GPU, so its
// cases here check the emulator itself (mma fragments, shuffles, copies, tickets).
#include "emu/emu.h"  // first: the emulated built-ins the module's headers use

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compare.h"
#include "cuda_backend.h"
#include "exl/kernels/exl2.h"
#include "exl/kernels/half.h"
#include "exl2_random.h"
#include "exl_test.h"
#include "kernels.h"

using namespace exl;
using namespace exl::test;
namespace cu = exl::cuda;

namespace {

// Runs `fn`, turning the module's exceptions into test failures with their message.
template <class F>
void run_ok(const char* what, F&& fn) {
  try {
    fn();
  } catch (const cu::CudaFailure& e) {
    CHECK_MSG(false, what << ": " << e.message);
  } catch (const std::exception& e) {
    CHECK_MSG(false, what << ": " << e.what());
  }
}

struct Layer {
  Exl2RandomLayer host;
  std::unique_ptr<cu::DeviceLinear> dev;
  Exl2Weight w() const { return host.view(); }
  const cu::Exl2Device& view() const { return dev->view; }
};

Layer make_layer(std::mt19937& rng, int k, int n, cudaStream_t s) {
  Layer L;
  L.host = make_exl2_layer(std::uint32_t(rng()), n, random_exl2_regions(rng, k));
  CHECK_MSG(L.host.ok, L.host.error);
  const Exl2Weight w = L.host.view();
  exl_cuda_linear l{};
  l.kind = 1;
  l.in_features = w.k;
  l.out_features = w.n;
  l.exl2 = exl_cuda_exl2{w.q_weight, w.q_scale, w.q_scale_max, w.q_groups, w.q_perm,
                         w.k,        w.n,       w.n_pad,       w.groups,   w.q_rows};
  L.dev = std::make_unique<cu::DeviceLinear>();
  run_ok("upload_linear", [&] { cu::upload_linear(l, nullptr, 0, s, *L.dev, nullptr, cu::LinearFold{}); });
  return L;
}

// Device memory of the emulator is host memory: a buffer is filled and read in place.
template <class T>
T* ptr(cu::DeviceBuffer& b) {
  return b.get<T>();
}
cu::DeviceBuffer buffer(std::size_t bytes, const char* what, int fill = 0) {
  cu::DeviceBuffer b(nullptr, bytes, what);
  std::memset(b.get(), fill, bytes);
  return b;
}

// fp16 values in [lo, hi): the bits and the exact floats.
void random_half(std::mt19937& rng, std::size_t n, float lo, float hi, std::vector<half_bits>& h, std::vector<float>& f) {
  std::uniform_real_distribution<float> u(lo, hi);
  h.resize(n);
  f.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    h[i] = float_to_half(u(rng));
    f[i] = half_to_float(h[i]);
  }
}

void check_close(const std::vector<float>& got, const std::vector<float>& ref, double tol, const std::string& what) {
  const Diff d = compare(got.data(), ref.data(), ref.size());
  CHECK_MSG(d.rel_l2 <= tol && d.max_abs <= 10 * tol * (d.ref_max + 1e-3),
            what << ": rel_l2 " << d.rel_l2 << " max_abs " << d.max_abs << " ref_max " << d.ref_max);
}

std::vector<float> copy_out(const float* p, std::size_t n) { return std::vector<float>(p, p + n); }

}  // namespace

// The emulator against the GPU-verified launch form: one row and three rows, every width.
EXL_TEST(cuda_emu, gemv_launch_form_matches_reference) {
  cu::Stream st;
  std::mt19937 rng(21);
  exl::emu::configure(4, 1);
  cu::GemvScratch ws;
  ws.allocate(nullptr, st.get());
  for (const auto& [k, n] : {std::pair{256, 200}, std::pair{1184, 72}, std::pair{512, 520}}) {
    const Layer L = make_layer(rng, k, n, st.get());
    for (int m : {1, 3}) {
      std::vector<half_bits> xh;
      std::vector<float> xf;
      random_half(rng, std::size_t(m) * k, -1.0f, 1.0f, xh, xf);
      std::vector<float> ref(std::size_t(m) * n);
      exl2_matmul_ref(L.w(), xf.data(), m, ref.data());
      cu::DeviceBuffer x = buffer(xh.size() * 2, "x"), y = buffer(ref.size() * 4, "y");
      std::memcpy(x.get(), xh.data(), xh.size() * 2);
      run_ok("exl2_gemv", [&] { cu::exl2_gemv(L.view(), ptr<__half>(x), m, k, ptr<float>(y), n, 4, ws.view(), 0, st.get()); });
      check_close(copy_out(ptr<float>(y), ref.size()), ref, 5e-4,
                  "launch form k " + std::to_string(k) + " n " + std::to_string(n) + " m " + std::to_string(m));
    }
  }
}

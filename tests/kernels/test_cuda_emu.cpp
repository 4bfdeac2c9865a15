// The EXL2 GEMV's launch form and the persistent decode pipeline (exl2_pipe.cu) run by the CUDA
// emulator (kernels/cuda/emu): the same sources, compiled for the CPU, against kernels/reference.
// The launch form is verified on the GPU, so its cases here check the emulator itself (mma
// fragments, shuffles, copies, tickets); the pipeline's cases check its protocol (the producer's
// ring and mbarriers, the tail warps' split-K slots and tickets, the stage counters, the init
// regions, the attention stage and its merge) wherever CI runs, with several grid sizes and
// seeded schedules. A deadlock or a bad bulk copy fails the launch with the emulator's message.
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

std::vector<float> reference(const Layer& L, const std::vector<float>& x) {
  std::vector<float> y(std::size_t(L.w().n));
  exl2_matmul_ref(L.w(), x.data(), 1, y.data());
  return y;
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

float round_half(float v) { return half_to_float(float_to_half(v)); }

// The pipeline's normed input: fp16(v * 1/rms * w) (the GEMV's RMSNorm rounding).
std::vector<float> normed(const std::vector<float>& r, const std::vector<half_bits>& w, float eps) {
  double ss = 0.0;
  for (float v : r) ss += double(v) * v;
  const float rinv = 1.0f / std::sqrt(float(ss / double(r.size())) + eps);
  std::vector<float> x(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) x[i] = round_half(r[i] * rinv * half_to_float(w[i]));
  return x;
}

void check_close(const std::vector<float>& got, const std::vector<float>& ref, double tol, const std::string& what) {
  const Diff d = compare(got.data(), ref.data(), ref.size());
  CHECK_MSG(d.rel_l2 <= tol && d.max_abs <= 10 * tol * (d.ref_max + 1e-3),
            what << ": rel_l2 " << d.rel_l2 << " max_abs " << d.max_abs << " ref_max " << d.ref_max);
}

std::vector<float> copy_out(const float* p, std::size_t n) { return std::vector<float>(p, p + n); }

struct PipeVariant {
  int warps;
  bool order, coop;
  int sms;
};
const PipeVariant k_variants[] = {{8, false, false, 3}, {16, true, false, 2}, {8, true, true, 5}, {8, false, false, 1}};

std::string variant_name(const PipeVariant& v) {
  return std::to_string(v.warps) + " warps" + (v.order ? ", stored order" : "") + (v.coop ? ", cooperative" : "") +
         ", " + std::to_string(v.sms) + " blocks";
}

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

// Two stages as the GPU test's mode 9: x . W into y0 while clearing y1 (poisoned) through an init
// region, then x . W added to y1 behind the first stage's counter. Several layers, the 8- and
// 16-warp forms, stored-order input, cooperative launch, grids of 1 to 5 blocks.
EXL_TEST(cuda_emu, pipe_two_stages_match_reference) {
  cu::Stream st;
  std::mt19937 rng(22);
  cu::GemvScratch ws;
  ws.allocate(nullptr, st.get());
  for (const auto& [k, n] : {std::pair{256, 200}, std::pair{1024, 384}, std::pair{160, 4136}, std::pair{2048, 72}}) {
    const Layer L = make_layer(rng, k, n, st.get());
    std::vector<half_bits> xh;
    std::vector<float> xf;
    random_half(rng, std::size_t(k), -1.0f, 1.0f, xh, xf);
    const std::vector<float> ref = reference(L, xf);
    for (const PipeVariant& v : k_variants) {
      exl::emu::configure(v.sms, rng());
      cu::DeviceBuffer x = buffer(xh.size() * 2, "x"), y = buffer(std::size_t(n) * 8, "y");
      std::memcpy(x.get(), xh.data(), xh.size() * 2);
      std::fill(ptr<float>(y) + n, ptr<float>(y) + 2 * n, NAN);
      cu::GemvChainCall ch;
      cu::GemvCall& a = ch.add();
      a.add(L.view(), ptr<float>(y), n);
      a.mode = cu::k_x_half;
      a.in.x = ptr<__half>(x);
      a.in.ldx = k;
      a.m = 1;
      a.sm_count = v.sms;
      a.ws = ws.view();
      a.inits = 1;
      a.init[0].dst = ptr<float>(y) + n;
      a.init[0].count = n;
      cu::GemvCall& b = ch.add();
      b = a;
      b.y[0] = ptr<float>(y) + n;
      b.inits = 0;
      ch.barrier = ws.barrier();
      ch.pipe = true;
      ch.pipe_warps = v.warps;
      ch.pipe_order = v.order;
      ch.pipe_coop = v.coop;
      ch.pipe_sync = ws.pipe_sync();
      const std::string what = "k " + std::to_string(k) + " n " + std::to_string(n) + ", " + variant_name(v);
      const std::uint64_t copies = exl::emu::stats().bulk_copies;
      run_ok(what.c_str(), [&] { cu::exl2_gemv_chain(ch, st.get()); });
      CHECK_MSG(exl::emu::stats().bulk_copies > copies, what << ": the pipeline issued no bulk copies");
      check_close(copy_out(ptr<float>(y), std::size_t(n)), ref, 5e-4, what + ", stage 1");
      check_close(copy_out(ptr<float>(y) + n, std::size_t(n)), ref, 5e-4, what + ", stage 2");
      // The counters are left at zero for the next launch.
      for (int i = 0; i < cu::k_pipe_sync_counters; ++i)
        CHECK_MSG(ws.pipe_sync()[i] == 0u, what << ": stage counter " << i << " left at " << ws.pipe_sync()[i]);
    }
  }
}

// A decoder layer's GEMVs as one launch: o (fp16 input, added to the residual), gate/up (RMSNorm of
// the residual), down (SiLU(gate) * up, added to the residual), the next q/k/v (RMSNorm again);
// the first stage clears the later stages' accumulators through its init regions. Each stage's
// output against the reference computed from the previous stage's reference.
EXL_TEST(cuda_emu, pipe_decoder_layer_chain) {
  cu::Stream st;
  std::mt19937 rng(23);
  cu::GemvScratch ws;
  ws.allocate(nullptr, st.get());
  const int h = 512, inter = 1024, nq = 512, nkv = 128;
  const float eps = 1e-5f;
  const Layer o = make_layer(rng, h, h, st.get()), gate = make_layer(rng, h, inter, st.get()),
              up = make_layer(rng, h, inter, st.get()), down = make_layer(rng, inter, h, st.get()),
              q = make_layer(rng, h, nq, st.get()), kk = make_layer(rng, h, nkv, st.get()),
              vv = make_layer(rng, h, nkv, st.get());
  std::vector<half_bits> xh, nw1, nw2;
  std::vector<float> xf, r0, nf;
  random_half(rng, std::size_t(h), -1.0f, 1.0f, xh, xf);
  random_half(rng, std::size_t(h), -2.0f, 2.0f, nw1, nf);  // (nf: the residual's start, rounded)
  r0 = nf;
  random_half(rng, std::size_t(h), 0.5f, 1.5f, nw1, nf);
  random_half(rng, std::size_t(h), 0.5f, 1.5f, nw2, nf);
  // The reference, stage by stage.
  std::vector<float> r1 = r0;
  const std::vector<float> oy = reference(o, xf);
  for (int i = 0; i < h; ++i) r1[std::size_t(i)] += oy[std::size_t(i)];
  const std::vector<float> xn1 = normed(r1, nw1, eps);
  const std::vector<float> g_ref = reference(gate, xn1), u_ref = reference(up, xn1);
  std::vector<float> xs(static_cast<std::size_t>(inter));
  for (int i = 0; i < inter; ++i) {
    const float g = g_ref[std::size_t(i)];
    xs[std::size_t(i)] = round_half(g / (1.0f + std::exp(-g)) * u_ref[std::size_t(i)]);
  }
  std::vector<float> r2 = r1;
  const std::vector<float> dy = reference(down, xs);
  for (int i = 0; i < h; ++i) r2[std::size_t(i)] += dy[std::size_t(i)];
  const std::vector<float> xn2 = normed(r2, nw2, eps);
  const std::vector<float> q_ref = reference(q, xn2), k_ref = reference(kk, xn2), v_ref = reference(vv, xn2);

  for (const PipeVariant& v : k_variants) {
    exl::emu::configure(v.sms, rng());
    cu::DeviceBuffer x = buffer(std::size_t(h) * 2, "x"), res = buffer(std::size_t(h) * 4, "residual"),
                     w1 = buffer(std::size_t(h) * 2, "norm 1"), w2 = buffer(std::size_t(h) * 2, "norm 2"),
                     g = buffer(std::size_t(inter) * 4, "gate", 0xff), u = buffer(std::size_t(inter) * 4, "up", 0xff),
                     qo = buffer(std::size_t(nq) * 4, "q", 0xff), ko = buffer(std::size_t(nkv) * 4, "k", 0xff),
                     vo = buffer(std::size_t(nkv) * 4, "v", 0xff);
    std::memcpy(x.get(), xh.data(), std::size_t(h) * 2);
    std::memcpy(res.get(), r0.data(), std::size_t(h) * 4);
    std::memcpy(w1.get(), nw1.data(), std::size_t(h) * 2);
    std::memcpy(w2.get(), nw2.data(), std::size_t(h) * 2);
    cu::GemvChainCall ch;
    auto stage = [&](cu::GemvMode mode) -> cu::GemvCall& {
      cu::GemvCall& c = ch.add();
      c.mode = mode;
      c.m = 1;
      c.sm_count = v.sms;
      c.ws = ws.view();
      return c;
    };
    cu::GemvCall& s0 = stage(cu::k_x_half);
    s0.add(o.view(), ptr<float>(res), h);
    s0.in.x = ptr<__half>(x);
    s0.in.ldx = h;
    float* clear[5] = {ptr<float>(g), ptr<float>(u), ptr<float>(qo), ptr<float>(ko), ptr<float>(vo)};
    const int counts[5] = {inter, inter, nq, nkv, nkv};
    for (int i = 0; i < 5; ++i) {
      s0.init[i].dst = clear[i];
      s0.init[i].count = counts[i];
    }
    s0.inits = 5;
    cu::GemvCall& s1 = stage(cu::k_x_norm);
    s1.add(gate.view(), ptr<float>(g), inter).add(up.view(), ptr<float>(u), inter);
    s1.in.xf = ptr<float>(res);
    s1.in.norm_w = ptr<__half>(w1);
    s1.in.eps = eps;
    s1.in.ldx = h;
    cu::GemvCall& s2 = stage(cu::k_x_silu);
    s2.add(down.view(), ptr<float>(res), h);
    s2.in.xf = ptr<float>(g);
    s2.in.up = ptr<float>(u);
    s2.in.ldx = inter;
    cu::GemvCall& s3 = stage(cu::k_x_norm);
    s3.add(q.view(), ptr<float>(qo), nq).add(kk.view(), ptr<float>(ko), nkv).add(vv.view(), ptr<float>(vo), nkv);
    s3.in.xf = ptr<float>(res);
    s3.in.norm_w = ptr<__half>(w2);
    s3.in.eps = eps;
    s3.in.ldx = h;
    ch.barrier = ws.barrier();
    ch.pipe = true;
    ch.pipe_warps = v.warps;
    ch.pipe_order = v.order;
    ch.pipe_coop = v.coop;
    ch.pipe_sync = ws.pipe_sync();
    const std::string what = variant_name(v);
    run_ok(what.c_str(), [&] { cu::exl2_gemv_chain(ch, st.get()); });
    check_close(copy_out(ptr<float>(g), std::size_t(inter)), g_ref, 1e-3, what + ": gate");
    check_close(copy_out(ptr<float>(u), std::size_t(inter)), u_ref, 1e-3, what + ": up");
    check_close(copy_out(ptr<float>(res), std::size_t(h)), r2, 1e-3, what + ": residual after down");
    check_close(copy_out(ptr<float>(qo), std::size_t(nq)), q_ref, 2e-3, what + ": q");
    check_close(copy_out(ptr<float>(ko), std::size_t(nkv)), k_ref, 2e-3, what + ": k");
    check_close(copy_out(ptr<float>(vo), std::size_t(nkv)), v_ref, 2e-3, what + ": v");
  }
}

// The attention stage (RoPE of q and the new key, the K/V row into the cache, split attention and
// the merge by the last split of each KV head) followed by the o projection, in one launch.
EXL_TEST(cuda_emu, pipe_attention_stage) {
  cu::Stream st;
  std::mt19937 rng(24);
  cu::GemvScratch ws;
  ws.allocate(nullptr, st.get());
  struct Case {
    int nh, nkv, d, past, splits, style;
  };
  for (const Case& c : {Case{8, 2, 64, 0, 1, 0}, Case{8, 2, 64, 300, 4, 1}, Case{4, 4, 128, 37, 2, 0},
                        Case{16, 2, 64, 130, 3, 0}}) {
    const int qd = c.nh * c.d, kd = c.nkv * c.d, cap = c.past + 1;
    const Layer o = make_layer(rng, qd, 256, st.get());
    std::vector<float> q(static_cast<std::size_t>(qd)), k(static_cast<std::size_t>(kd)), v(k.size());
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& e : q) e = nd(rng);
    for (float& e : k) e = nd(rng);
    for (float& e : v) e = nd(rng);
    std::vector<half_bits> kc(std::size_t(cap) * kd), vc(kc.size());
    for (std::size_t i = 0; i < std::size_t(c.past) * kd; ++i) {
      kc[i] = float_to_half(nd(rng));
      vc[i] = float_to_half(nd(rng));
    }
    // RoPE table of position `past`.
    std::vector<float> cs(std::size_t(c.d));
    for (int i = 0; i < c.d / 2; ++i) {
      const double ang = c.past * std::pow(10000.0, -2.0 * i / c.d);
      cs[std::size_t(2 * i)] = float(std::cos(ang));
      cs[std::size_t(2 * i + 1)] = float(std::sin(ang));
    }
    auto rope = [&](const float* x, int e) -> float {  // rope_elem
      const int half = c.d / 2;
      if (c.style == 0) {
        if (e < half) return x[e] * cs[std::size_t(2 * e)] - x[e + half] * cs[std::size_t(2 * e + 1)];
        return x[e] * cs[std::size_t(2 * (e - half))] + x[e - half] * cs[std::size_t(2 * (e - half) + 1)];
      }
      const int p = e >> 1;
      return (e & 1) ? x[e] * cs[std::size_t(2 * p)] + x[e - 1] * cs[std::size_t(2 * p + 1)]
                     : x[e] * cs[std::size_t(2 * p)] - x[e + 1] * cs[std::size_t(2 * p + 1)];
    };
    // Reference: the new cache row, then each head's attention over past + 1 keys.
    std::vector<half_bits> k_row(static_cast<std::size_t>(kd)), v_row(static_cast<std::size_t>(kd));
    for (int hk = 0; hk < c.nkv; ++hk)
      for (int e = 0; e < c.d; ++e) {
        k_row[std::size_t(hk * c.d + e)] = float_to_half(rope(k.data() + hk * c.d, e));
        v_row[std::size_t(hk * c.d + e)] = float_to_half(v[std::size_t(hk * c.d + e)]);
      }
    const float scale = 1.0f / std::sqrt(float(c.d));
    std::vector<float> att_ref(static_cast<std::size_t>(qd));
    for (int hq = 0; hq < c.nh; ++hq) {
      const int hk = hq / (c.nh / c.nkv);
      std::vector<float> qr(std::size_t(c.d));
      for (int e = 0; e < c.d; ++e) qr[std::size_t(e)] = rope(q.data() + hq * c.d, e) * scale;
      auto key = [&](int j, int e) {
        return half_to_float(j < c.past ? kc[std::size_t(j) * kd + std::size_t(hk * c.d + e)]
                                        : k_row[std::size_t(hk * c.d + e)]);
      };
      auto val = [&](int j, int e) {
        return half_to_float(j < c.past ? vc[std::size_t(j) * kd + std::size_t(hk * c.d + e)]
                                        : v_row[std::size_t(hk * c.d + e)]);
      };
      std::vector<double> s(std::size_t(c.past + 1));
      double mx = -1e30;
      for (int j = 0; j <= c.past; ++j) {
        double dot = 0.0;
        for (int e = 0; e < c.d; ++e) dot += double(qr[std::size_t(e)]) * key(j, e);
        s[std::size_t(j)] = dot;
        mx = std::max(mx, dot);
      }
      double sum = 0.0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (int e = 0; e < c.d; ++e) {
        double acc = 0.0;
        for (int j = 0; j <= c.past; ++j) acc += s[std::size_t(j)] * val(j, e);
        att_ref[std::size_t(hq * c.d + e)] = float(acc / sum);
      }
    }
    for (const PipeVariant& var : k_variants) {
      if (var.order) continue;  // (the attention stage's output is read in feature order)
      exl::emu::configure(var.sms, rng());
      cu::DeviceBuffer qb = buffer(q.size() * 4, "q"), kb = buffer(k.size() * 4, "k"), vb = buffer(v.size() * 4, "v"),
                       csb = buffer(cs.size() * 4, "cs"), cnt = buffer(std::size_t(c.nkv) * 4, "counters"),
                       kcb = buffer(kc.size() * 2, "k cache"), vcb = buffer(vc.size() * 2, "v cache"),
                       pastb = buffer(4, "past"),
                       part = buffer(std::size_t(c.nh) * c.splits * (c.d + 2) * 4, "partials", 0xff),
                       out = buffer(std::size_t(qd) * 2, "attention out", 0xff), y = buffer(256 * 4, "y");
      std::memcpy(qb.get(), q.data(), q.size() * 4);
      std::memcpy(kb.get(), k.data(), k.size() * 4);
      std::memcpy(vb.get(), v.data(), v.size() * 4);
      std::memcpy(csb.get(), cs.data(), cs.size() * 4);
      std::memcpy(kcb.get(), kc.data(), std::size_t(c.past) * kd * 2);
      std::memcpy(vcb.get(), vc.data(), std::size_t(c.past) * kd * 2);
      *ptr<int>(pastb) = c.past;
      cu::PipeAttention pa;
      pa.shape.t = 1;
      pa.shape.nh = c.nh;
      pa.shape.nkv = c.nkv;
      pa.shape.d = c.d;
      pa.shape.scale = scale;
      pa.shape.splits = c.splits;
      pa.in.q = ptr<float>(qb);
      pa.in.k = ptr<float>(kb);
      pa.in.v = ptr<float>(vb);
      pa.in.cs = ptr<float2>(csb);
      pa.in.style = c.style;
      pa.in.counters = ptr<unsigned>(cnt);
      pa.k_cache = ptr<__half>(kcb);
      pa.v_cache = ptr<__half>(vcb);
      pa.past = ptr<int>(pastb);
      pa.part = ptr<float>(part);
      pa.out = ptr<__half>(out);
      cu::GemvChainCall ch;
      cu::GemvCall& s0 = ch.add();
      s0.add(o.view(), ptr<float>(y), 256);
      s0.mode = cu::k_x_half;
      s0.in.x = ptr<__half>(out);
      s0.in.ldx = qd;
      s0.m = 1;
      s0.sm_count = var.sms;
      s0.ws = ws.view();
      ch.pipe = true;
      ch.pipe_warps = var.warps;
      ch.pipe_coop = var.coop;
      ch.pipe_sync = ws.pipe_sync();
      ch.attention = &pa;
      const std::string what = "nh " + std::to_string(c.nh) + " nkv " + std::to_string(c.nkv) + " d " +
                               std::to_string(c.d) + " past " + std::to_string(c.past) + " splits " +
                               std::to_string(c.splits) + ", " + variant_name(var);
      run_ok(what.c_str(), [&] { cu::exl2_gemv_chain(ch, st.get()); });
      // The new row in the cache, exactly.
      const half_bits* kn = ptr<half_bits>(kcb) + std::size_t(c.past) * kd;
      const half_bits* vn = ptr<half_bits>(vcb) + std::size_t(c.past) * kd;
      CHECK_MSG(std::memcmp(kn, k_row.data(), k_row.size() * 2) == 0, what << ": the new key row differs");
      CHECK_MSG(std::memcmp(vn, v_row.data(), v_row.size() * 2) == 0, what << ": the new value row differs");
      std::vector<float> att(static_cast<std::size_t>(qd));
      for (int i = 0; i < qd; ++i) att[std::size_t(i)] = half_to_float(ptr<half_bits>(out)[i]);
      check_close(att, att_ref, 2e-3, what + ": attention");
      check_close(copy_out(ptr<float>(y), 256), reference(o, att), 5e-4, what + ": o projection of it");
      for (int i = 0; i < c.nkv; ++i) CHECK_MSG(ptr<unsigned>(cnt)[i] == 0u, what << ": merge ticket " << i << " left set");
    }
  }
}

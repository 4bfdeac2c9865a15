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

// One layer's one-row GEMV call: y[:n] += x[:k] (fp16) . W.
cu::GemvCall one_row(const Layer& L, float* y, int n, const __half* x, int k, int sms, const cu::GemvWorkspace& ws) {
  cu::GemvCall c;
  c.add(L.view(), y, n);
  c.mode = cu::k_x_half;
  c.in.x = x;
  c.in.ldx = k;
  c.m = 1;
  c.sm_count = sms;
  c.ws = ws;
  return c;
}

struct PipeVariant {
  int warps;
  bool order, coop;
  int sms;
};
const PipeVariant k_variants[] = {{8, false, false, 3}, {16, true, false, 2}, {8, true, true, 5}, {8, false, false, 1}};

// The chain as the decode pipeline in variant v.
void as_pipeline(cu::GemvChainCall& ch, const PipeVariant& v, const cu::GemvScratch& ws) {
  ch.barrier = ws.barrier();
  ch.pipe = true;
  ch.pipe_warps = v.warps;
  ch.pipe_order = v.order;
  ch.pipe_coop = v.coop;
  ch.pipe_sync = ws.pipe_sync();
}

std::string variant_name(const PipeVariant& v) {
  return std::to_string(v.warps) + " warps" + (v.order ? ", stored order" : "") + (v.coop ? ", cooperative" : "") +
         ", " + std::to_string(v.sms) + " blocks";
}


// (cos, sin) of position `pos` for head_dim d, interleaved as the kernels' float2 table.
std::vector<float> rope_cs(int d, int pos) {
  std::vector<float> cs(static_cast<std::size_t>(d));
  for (int i = 0; i < d / 2; ++i) {
    const double ang = pos * std::pow(10000.0, -2.0 * i / d);
    cs[std::size_t(2 * i)] = float(std::cos(ang));
    cs[std::size_t(2 * i + 1)] = float(std::sin(ang));
  }
  return cs;
}
// Element e of a head after RoPE (rope_elem: style 0 rotates halves, 1 interleaved pairs).
float rope_ref(const float* x, int e, int d, int style, const std::vector<float>& cs) {
  const int half = d / 2;
  if (style == 0) {
    if (e < half) return x[e] * cs[std::size_t(2 * e)] - x[e + half] * cs[std::size_t(2 * e + 1)];
    return x[e] * cs[std::size_t(2 * (e - half))] + x[e - half] * cs[std::size_t(2 * (e - half) + 1)];
  }
  const int p = e >> 1;
  return (e & 1) ? x[e] * cs[std::size_t(2 * p)] + x[e - 1] * cs[std::size_t(2 * p + 1)]
                 : x[e] * cs[std::size_t(2 * p)] - x[e + 1] * cs[std::size_t(2 * p + 1)];
}
// One decode step's attention: the new K/V row (RoPE'd key, fp16) and each head's output over
// the `past` cached rows (fp16, [past][nkv * d]) and the new one, in double.
struct AttnRef {
  std::vector<half_bits> k_row, v_row;
  std::vector<float> out;
};
AttnRef attention_ref(int nh, int nkv, int d, int past, int style, const std::vector<float>& q,
                      const std::vector<float>& k, const std::vector<float>& v, const half_bits* kc,
                      const half_bits* vc) {
  const int kd = nkv * d;
  const std::vector<float> cs = rope_cs(d, past);
  AttnRef r;
  r.k_row.resize(std::size_t(kd));
  r.v_row.resize(std::size_t(kd));
  r.out.resize(std::size_t(nh) * d);
  for (int hk = 0; hk < nkv; ++hk)
    for (int e = 0; e < d; ++e) {
      r.k_row[std::size_t(hk * d + e)] = float_to_half(rope_ref(k.data() + hk * d, e, d, style, cs));
      r.v_row[std::size_t(hk * d + e)] = float_to_half(v[std::size_t(hk * d + e)]);
    }
  const float scale = 1.0f / std::sqrt(float(d));
  for (int hq = 0; hq < nh; ++hq) {
    const int hk = hq / (nh / nkv);
    std::vector<float> qr(static_cast<std::size_t>(d));
    for (int e = 0; e < d; ++e) qr[std::size_t(e)] = rope_ref(q.data() + hq * d, e, d, style, cs) * scale;
    auto at = [&](const half_bits* cache, const std::vector<half_bits>& row, int j, int e) {
      return half_to_float(j < past ? cache[std::size_t(j) * kd + std::size_t(hk * d + e)] : row[std::size_t(hk * d + e)]);
    };
    std::vector<double> sc(static_cast<std::size_t>(past + 1));
    double mx = -1e30;
    for (int j = 0; j <= past; ++j) {
      double dot = 0.0;
      for (int e = 0; e < d; ++e) dot += double(qr[std::size_t(e)]) * at(kc, r.k_row, j, e);
      sc[std::size_t(j)] = dot;
      mx = std::max(mx, dot);
    }
    double sum = 0.0;
    for (double& e : sc) sum += (e = std::exp(e - mx));
    for (int e = 0; e < d; ++e) {
      double acc = 0.0;
      for (int j = 0; j <= past; ++j) acc += sc[std::size_t(j)] * at(vc, r.v_row, j, e);
      r.out[std::size_t(hq * d + e)] = float(acc / sum);
    }
  }
  return r;
}
std::vector<float> random_floats(std::mt19937& rng, std::size_t n, float sd) {
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<float> v(n);
  for (float& e : v) e = nd(rng);
  return v;
}
std::vector<half_bits> random_halves(std::mt19937& rng, std::size_t n, float sd) {
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<half_bits> v(n);
  for (half_bits& e : v) e = float_to_half(nd(rng));
  return v;
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
      a = one_row(L, ptr<float>(y), n, ptr<__half>(x), k, v.sms, ws.view());
      a.inits = 1;
      a.init[0].dst = ptr<float>(y) + n;
      a.init[0].count = n;
      cu::GemvCall& b = ch.add();
      b = a;
      b.y[0] = ptr<float>(y) + n;
      b.inits = 0;
      as_pipeline(ch, v, ws);
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
    as_pipeline(ch, v, ws);
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
    const std::vector<float> q = random_floats(rng, std::size_t(qd), 1.0f), k = random_floats(rng, std::size_t(kd), 1.0f),
                             v = random_floats(rng, std::size_t(kd), 1.0f);
    std::vector<half_bits> kc = random_halves(rng, std::size_t(cap) * kd, 1.0f), vc = random_halves(rng, kc.size(), 1.0f);
    const std::vector<float> cs = rope_cs(c.d, c.past);
    const AttnRef ar = attention_ref(c.nh, c.nkv, c.d, c.past, c.style, q, k, v, kc.data(), vc.data());
    const std::vector<half_bits>& k_row = ar.k_row;
    const std::vector<half_bits>& v_row = ar.v_row;
    const std::vector<float>& att_ref = ar.out;
    const float scale = 1.0f / std::sqrt(float(c.d));
    for (const PipeVariant& var : k_variants) {
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
      ch.add() = one_row(o, ptr<float>(y), 256, ptr<__half>(out), qd, var.sms, ws.view());
      as_pipeline(ch, var, ws);
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

// The whole one-token step as one pipeline launch (exl2_pipe_step): per layer q/k/v (RMSNorm),
// attention (RoPE, the cache row, split attention), o, gate/up, down, then the head, with the
// stages in a device table. Each q/k/v stage clears the next layer's accumulators (the last one
// the logits), as the backend's decode step does. The logits, the residual and every layer's
// new cache rows against a reference computed layer by layer.
EXL_TEST(cuda_emu, pipe_whole_step) {
  cu::Stream st;
  std::mt19937 rng(25);
  cu::GemvScratch ws;
  ws.allocate(nullptr, st.get());
  const int nl = 2, h = 256, nh = 4, nkv = 2, d = 64, inter = 512, vocab = 1000, past = 70, splits = 2;
  const int qd = nh * d, kd = nkv * d, cap = past + 1;
  const float eps = 1e-5f;
  struct L {
    Layer q, k, v, o, gate, up, down;
    std::vector<half_bits> n1, n2, kc, vc;  // norms; cache rows [0, past)
  };
  std::vector<L> layers(static_cast<std::size_t>(nl));
  for (L& l : layers) {
    l.q = make_layer(rng, h, qd, st.get());
    l.k = make_layer(rng, h, kd, st.get());
    l.v = make_layer(rng, h, kd, st.get());
    l.o = make_layer(rng, qd, h, st.get());
    l.gate = make_layer(rng, h, inter, st.get());
    l.up = make_layer(rng, h, inter, st.get());
    l.down = make_layer(rng, inter, h, st.get());
    std::vector<float> unused;
    random_half(rng, std::size_t(h), 0.5f, 1.5f, l.n1, unused);
    random_half(rng, std::size_t(h), 0.5f, 1.5f, l.n2, unused);
    l.kc = random_halves(rng, std::size_t(cap) * kd, 1.0f);
    l.vc = random_halves(rng, std::size_t(cap) * kd, 1.0f);
  }
  const Layer head = make_layer(rng, h, vocab, st.get());
  std::vector<half_bits> fnorm;
  std::vector<float> unused, x0 = random_floats(rng, std::size_t(h), 1.0f);
  random_half(rng, std::size_t(h), 0.5f, 1.5f, fnorm, unused);

  // The reference, layer by layer.
  std::vector<float> x = x0;
  std::vector<AttnRef> att_ref;
  for (const L& l : layers) {
    const std::vector<float> xn = normed(x, l.n1, eps);
    const AttnRef ar = attention_ref(nh, nkv, d, past, 0, reference(l.q, xn), reference(l.k, xn), reference(l.v, xn),
                                     l.kc.data(), l.vc.data());
    std::vector<float> att(static_cast<std::size_t>(qd));
    for (int i = 0; i < qd; ++i) att[std::size_t(i)] = round_half(ar.out[std::size_t(i)]);
    const std::vector<float> oy = reference(l.o, att);
    for (int i = 0; i < h; ++i) x[std::size_t(i)] += oy[std::size_t(i)];
    const std::vector<float> xn2 = normed(x, l.n2, eps);
    const std::vector<float> g = reference(l.gate, xn2), u = reference(l.up, xn2);
    std::vector<float> xs(static_cast<std::size_t>(inter));
    for (int i = 0; i < inter; ++i) {
      const float gi = g[std::size_t(i)];
      xs[std::size_t(i)] = round_half(gi / (1.0f + std::exp(-gi)) * u[std::size_t(i)]);
    }
    const std::vector<float> dy = reference(l.down, xs);
    for (int i = 0; i < h; ++i) x[std::size_t(i)] += dy[std::size_t(i)];
    att_ref.push_back(ar);
  }
  const std::vector<float> logits_ref = reference(head, normed(x, fnorm, eps));

  for (const PipeVariant& var : k_variants) {
    exl::emu::configure(var.sms, rng());
    // Buffers as the backend keeps them: q/k/v and gate/up in two sets used by turns.
    cu::DeviceBuffer xb = buffer(std::size_t(h) * 4, "x"), logits = buffer(std::size_t(vocab) * 4, "logits", 0xff),
                     att = buffer(std::size_t(qd) * 2, "attention out", 0xff),
                     part = buffer(std::size_t(nh) * splits * (d + 2) * 4, "partials", 0xff),
                     cnt = buffer(std::size_t(nkv) * 4, "counters"), pastb = buffer(4, "past"),
                     csb = buffer(std::size_t(d) * 4, "cs"), fn = buffer(std::size_t(h) * 2, "final norm");
    std::vector<cu::DeviceBuffer> qkv, gu, norms, kcache, vcache;
    for (int i = 0; i < 2; ++i) {
      qkv.push_back(buffer(std::size_t(qd + 2 * kd) * 4, "qkv", i == 0 ? 0 : 0xff));
      gu.push_back(buffer(std::size_t(2 * inter) * 4, "gate/up", i == 0 ? 0 : 0xff));
    }
    for (const L& l : layers) {
      norms.push_back(buffer(std::size_t(h) * 2, "norm 1"));
      std::memcpy(norms.back().get(), l.n1.data(), std::size_t(h) * 2);
      norms.push_back(buffer(std::size_t(h) * 2, "norm 2"));
      std::memcpy(norms.back().get(), l.n2.data(), std::size_t(h) * 2);
      kcache.push_back(buffer(l.kc.size() * 2, "k cache"));
      std::memcpy(kcache.back().get(), l.kc.data(), std::size_t(past) * kd * 2);
      vcache.push_back(buffer(l.vc.size() * 2, "v cache"));
      std::memcpy(vcache.back().get(), l.vc.data(), std::size_t(past) * kd * 2);
    }
    std::memcpy(xb.get(), x0.data(), std::size_t(h) * 4);
    std::memcpy(fn.get(), fnorm.data(), std::size_t(h) * 2);
    *ptr<int>(pastb) = past;
    const std::vector<float> cs = rope_cs(d, past);
    std::memcpy(csb.get(), cs.data(), cs.size() * 4);

    cu::PipeStep step;
    step.gemv.reserve(64);
    auto gemv = [&](cu::GemvMode mode) -> cu::GemvCall& {
      cu::GemvCall& c = step.gemv.emplace_back();
      c.mode = mode;
      c.m = 1;
      c.sm_count = var.sms;
      c.ws = ws.view();
      step.order.push_back(int(step.gemv.size()) - 1);
      return c;
    };
    for (int li = 0; li < nl; ++li) {
      const L& l = layers[std::size_t(li)];
      float* q32 = ptr<float>(qkv[std::size_t(li % 2)]);
      float* g32 = ptr<float>(gu[std::size_t(li % 2)]);
      cu::GemvCall& c = gemv(cu::k_x_norm);
      c.add(l.q.view(), q32, qd).add(l.k.view(), q32 + qd, kd).add(l.v.view(), q32 + qd + kd, kd);
      c.in.xf = ptr<float>(xb);
      c.in.norm_w = ptr<__half>(norms[std::size_t(2 * li)]);
      c.in.eps = eps;
      c.in.ldx = h;
      if (li + 1 < nl) {  // the next layer's accumulators
        c.init[0].dst = ptr<float>(qkv[std::size_t((li + 1) % 2)]);
        c.init[0].count = qd + 2 * kd;
        c.init[1].dst = ptr<float>(gu[std::size_t((li + 1) % 2)]);
        c.init[1].count = 2 * inter;
        c.inits = 2;
      } else {
        c.init[0].dst = ptr<float>(logits);
        c.init[0].count = vocab;
        c.inits = 1;
      }
      cu::PipeAttention& pa = step.attention.emplace_back();
      pa.shape.t = 1;
      pa.shape.nh = nh;
      pa.shape.nkv = nkv;
      pa.shape.d = d;
      pa.shape.scale = 1.0f / std::sqrt(float(d));
      pa.shape.splits = splits;
      pa.in.q = q32;
      pa.in.k = q32 + qd;
      pa.in.v = q32 + qd + kd;
      pa.in.cs = ptr<float2>(csb);
      pa.in.counters = ptr<unsigned>(cnt);
      pa.k_cache = ptr<__half>(kcache[std::size_t(li)]);
      pa.v_cache = ptr<__half>(vcache[std::size_t(li)]);
      pa.past = ptr<int>(pastb);
      pa.part = ptr<float>(part);
      pa.out = ptr<__half>(att);
      step.order.push_back(-int(step.attention.size()));
      cu::GemvCall& o = gemv(cu::k_x_half);
      o.add(l.o.view(), ptr<float>(xb), h);
      o.in.x = ptr<__half>(att);
      o.in.ldx = qd;
      cu::GemvCall& g = gemv(cu::k_x_norm);
      g.add(l.gate.view(), g32, inter).add(l.up.view(), g32 + inter, inter);
      g.in.xf = ptr<float>(xb);
      g.in.norm_w = ptr<__half>(norms[std::size_t(2 * li + 1)]);
      g.in.eps = eps;
      g.in.ldx = h;
      cu::GemvCall& dn = gemv(cu::k_x_silu);
      dn.add(l.down.view(), ptr<float>(xb), h);
      dn.in.xf = g32;
      dn.in.up = g32 + inter;
      dn.in.ldx = inter;
    }
    cu::GemvCall& hd = gemv(cu::k_x_norm);
    hd.add(head.view(), ptr<float>(logits), vocab);
    hd.in.xf = ptr<float>(xb);
    hd.in.norm_w = ptr<__half>(fn);
    hd.in.eps = eps;
    hd.in.ldx = h;
    step.sync = ws.pipe_sync();
    step.warps = var.warps;
    step.input_order = var.order;
    step.coop = var.coop;
    const std::string what = variant_name(var);
    std::vector<unsigned char> image;
    run_ok(what.c_str(), [&] { image = cu::exl2_pipe_step_table(step); });
    cu::DeviceBuffer table = buffer(std::max<std::size_t>(image.size(), 16), "stage table");
    std::memcpy(table.get(), image.data(), image.size());
    run_ok(what.c_str(), [&] { cu::exl2_pipe_step(step, table.get(), st.get()); });
    check_close(copy_out(ptr<float>(xb), std::size_t(h)), x, 2e-3, what + ": residual after the last layer");
    check_close(copy_out(ptr<float>(logits), std::size_t(vocab)), logits_ref, 3e-3, what + ": logits");
    for (int li = 0; li < nl; ++li) {
      const half_bits* kn = ptr<half_bits>(kcache[std::size_t(li)]) + std::size_t(past) * kd;
      const half_bits* vn = ptr<half_bits>(vcache[std::size_t(li)]) + std::size_t(past) * kd;
      // (q/k/v come from this pipeline's own GEMVs: the rows equal the reference's within rounding)
      std::vector<float> kg(static_cast<std::size_t>(kd)), kr(kg.size()), vg(kg.size()), vr(kg.size());
      for (int i = 0; i < kd; ++i) {
        kg[std::size_t(i)] = half_to_float(kn[i]);
        kr[std::size_t(i)] = half_to_float(att_ref[std::size_t(li)].k_row[std::size_t(i)]);
        vg[std::size_t(i)] = half_to_float(vn[i]);
        vr[std::size_t(i)] = half_to_float(att_ref[std::size_t(li)].v_row[std::size_t(i)]);
      }
      check_close(kg, kr, 3e-3, what + ": layer " + std::to_string(li) + " key row");
      check_close(vg, vr, 3e-3, what + ": layer " + std::to_string(li) + " value row");
    }
    for (int i = 0; i < cu::k_pipe_sync_counters; ++i)
      CHECK_MSG(ws.pipe_sync()[i] == 0u, what << ": stage counter " << i << " left at " << ws.pipe_sync()[i]);
  }
}

// Placement of a model (and an optional draft) on the GPUs, per-device totals, the verdict, the
// bandwidth-bound throughput line and the solvers (largest context, highest bpw).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "exl/error.h"
#include "exl/plan.h"

namespace exl::plan {
namespace {

std::uint64_t total(const DeviceComponents& p) {
  return p.weights + p.embedding + p.head + p.cache + p.cache_temp + p.scratch + p.rope + p.logits + p.cublas +
         p.context + p.rounding + p.margin + p.draft;
}

std::uint64_t default_context_mib(const GpuSpec& g) {
  if (g.context_mib) return g.context_mib;
  const std::string& n = g.name;
  // H200 measured (bench/RESULTS.md, session 7): process peak minus the allocator's bytes and the
  // driver's rounding, 590 MiB in every case (context, cuBLAS handle, the module's kernels).
  if (n.find("H100") != std::string::npos || n.find("H200") != std::string::npos) return 590;
  if (n.find("A100") != std::string::npos) return 448;
  return 320;
}

struct Ctx {
  const ModelShape& m;
  const PlanOptions& o;
  std::int64_t tokens;
  double per_token_layer;
  std::uint64_t round(std::uint64_t b) const {
    if (o.layout != Layout::engine || b == 0) return 0;
    // The driver packs allocations smaller than its granule into shared pages (measured on the
    // H200: the K/V buffers of 1 MiB each cost nothing beyond their size); larger ones round up.
    const std::uint64_t gran = std::max<std::uint64_t>(o.alloc_granularity, 1);
    const std::uint64_t g = b >= gran ? gran : 512;
    return (b + g - 1) / g * g - b;
  }
  std::uint64_t round_all(const std::vector<std::uint64_t>& v) const {
    std::uint64_t r = 0;
    for (std::uint64_t b : v) r += round(b);
    return r;
  }
  std::uint64_t layer_cache() const {
    return std::uint64_t(std::llround(per_token_layer * double(tokens) * std::max(1, o.batch)));
  }
  void add_layer(DeviceComponents& p, int i) const {
    const ModuleBytes& l = m.layers[std::size_t(i)];
    p.weights += l.device;
    p.rounding += round_all(l.buffers);
    const std::uint64_t c = layer_cache();
    p.cache += c;
    p.rounding += cache_rounding();
  }
  // The layer's K and V stores are allocated separately, and so are a quantized store's scales.
  std::uint64_t cache_rounding() const {
    const double d = double(m.config.num_kv_heads) * m.config.head_dim;
    const double t = double(tokens) * std::max(1, o.batch);
    std::uint64_t r = 0;
    for (int bits : {o.cache.k_bits, o.cache.v_bits}) {
      r += round(std::uint64_t(std::llround(t * d * bits / 8.0)));
      if (o.cache.quantized()) r += round(std::uint64_t(std::llround(t * d / 32.0 * 2.0)));
    }
    return r;
  }
  void add_head(DeviceComponents& p) const {
    p.head += m.head.device;
    p.rounding += round_all(m.head.buffers);
    if (o.layout == Layout::engine) {  // logits and the device sampler live with the head
      std::vector<std::uint64_t> hb;
      p.logits += head_scratch_bytes(m, o, tokens, &hb);
      p.rounding += round_all(hb);
    }
    if (o.layout == Layout::exllamav2)
      p.logits += std::uint64_t(std::max(1, o.batch)) * std::uint64_t((m.config.vocab_size + 31) / 32 * 32) * 2;
  }
  // Costs of a device that holds modules, before any module is placed on it.
  DeviceComponents fixed(const GpuSpec& g, bool first) const {
    DeviceComponents p;
    p.context = default_context_mib(g) * kMiB;
    p.margin = o.fragmentation_margin;
    std::vector<std::uint64_t> sb;
    p.scratch = scratch_bytes(m, o, tokens, &sb, false);
    p.rounding += round_all(sb);
    if (o.layout == Layout::engine) {
      p.cublas = 32 * kMiB;
      if (first) {
        p.embedding = m.embedding.device;
        p.rounding += round_all(m.embedding.buffers);
      }
    } else {
      p.rope = 4 * std::uint64_t(tokens) * std::uint64_t(m.config.head_dim);
      if (o.cache.k_bits != 16 || o.cache.v_bits != 16)
        p.cache_temp = 4 * std::uint64_t(std::max(1, o.batch)) * std::uint64_t(tokens) *
                       std::uint64_t(m.config.num_kv_heads) * std::uint64_t(m.config.head_dim);
    }
    return p;
  }
};

// Everything a draft model needs on its GPU beside the target (its own backend, shared context).
std::uint64_t draft_bytes(const ModelShape& d, const PlanOptions& o, std::int64_t context) {
  PlanOptions od = o;
  od.fragmentation_margin = 0;
  const std::int64_t tokens = cache_tokens(d.config, o.cache, context, o.layout);
  Ctx c{d, od, tokens, cache_bytes_per_token_layer(d.config, o.cache)};
  DeviceComponents p = c.fixed(o.gpus.at(0), true);
  p.context = 0;
  for (int i = 0; i < d.config.num_layers; ++i) c.add_layer(p, i);
  c.add_head(p);
  return total(p);
}

double device_seconds(const ModelShape& m, const PlanOptions& o, const DevicePlan& d, std::int64_t pos, bool first) {
  const double bpt = cache_bytes_per_token_layer(m.config, o.cache);
  double bytes = 0;
  if (d.first_layer >= 0)
    for (int i = d.first_layer; i <= d.last_layer; ++i)
      bytes += double(m.layers[std::size_t(i)].read) + bpt * double(pos) * std::max(1, o.batch);
  if (d.has_head) bytes += double(m.head.read);
  if (first) bytes += double(m.embedding.read);
  return d.gpu.bandwidth_gbs > 0 ? bytes / (d.gpu.bandwidth_gbs * 1e9) : 0.0;
}

}  // namespace

const char* verdict_name(Verdict v) {
  return v == Verdict::fits ? "fits" : v == Verdict::tight ? "tight" : "does not fit";
}

std::uint64_t decode_bytes_per_token(const ModelShape& m, const PlanOptions& o, std::int64_t position) {
  std::uint64_t b = m.embedding.read + m.head.read;
  for (const ModuleBytes& l : m.layers) b += l.read;
  const double bpt = cache_bytes_per_token_layer(m.config, o.cache);
  return b + std::uint64_t(std::llround(bpt * double(position) * std::max(1, o.batch) * m.config.num_layers));
}

double decode_bound(double bandwidth_gbs, std::uint64_t bytes_per_token, int batch) {
  return bytes_per_token ? double(std::max(1, batch)) * bandwidth_gbs * 1e9 / double(bytes_per_token) : 0.0;
}

double speculative_bound(double target_step_s, double draft_step_s, int k, double a) {
  if (target_step_s <= 0 || k < 0) return 0.0;
  const double accepted = a >= 1.0 ? double(k + 1) : (1.0 - std::pow(a, k + 1)) / (1.0 - a);
  return accepted / (double(k) * draft_step_s + target_step_s);
}

Plan make_plan(const ModelShape& m, const PlanOptions& o, const ModelShape* draft) {
  if (o.gpus.empty()) throw Error(ErrorKind::invalid_argument, "no GPU given", "", "--gpu");
  if (o.context <= 0) throw Error(ErrorKind::invalid_argument, "context must be positive", "", "--ctx");
  if (o.batch <= 0 || o.max_chunk <= 0) throw Error(ErrorKind::invalid_argument, "batch and max_chunk must be positive", "", "--batch");
  if (!o.gpu_split_gb.empty() && o.gpu_split_gb.size() != o.gpus.size())
    throw Error(ErrorKind::invalid_argument, "gpu split names " + std::to_string(o.gpu_split_gb.size()) + " devices but " +
                std::to_string(o.gpus.size()) + " GPUs are given", "", "--gpu-split");
  for (double g : o.gpu_split_gb)
    if (!(g >= 0)) throw Error(ErrorKind::invalid_argument, "gpu split values must be >= 0 GB", "", "--gpu-split");
  Plan plan;
  plan.cache_tokens = cache_tokens(m.config, o.cache, o.context, o.layout);
  const Ctx c{m, o, plan.cache_tokens, cache_bytes_per_token_layer(m.config, o.cache)};
  const bool manual = !o.gpu_split_gb.empty();
  const std::size_t n = o.gpus.size();
  std::vector<DeviceComponents> parts(n);
  std::vector<std::uint64_t> cap(n);
  std::vector<bool> active(n, false);
  const std::uint64_t dbytes = draft ? draft_bytes(*draft, o, o.context) : 0;
  auto activate = [&](std::size_t d) {
    if (active[d]) return;
    active[d] = true;
    parts[d] = c.fixed(o.gpus[d], d == 0);
  };
  for (std::size_t d = 0; d < n; ++d) {
    const std::uint64_t reserve = d == 0 ? o.reserve_first : o.reserve_other;
    cap[d] = manual ? std::uint64_t(o.gpu_split_gb[d] * double(kGiB))
                    : o.gpus[d].total_bytes() - std::min(o.gpus[d].total_bytes(), reserve);
  }
  activate(0);
  std::vector<DevicePlan> devs(n);
  std::size_t dev = 0;
  // Layers in order; the last one and the head go together (the backend keeps the head on the device
  // of the last layer, so a head that does not fit beside it takes the last layer along).
  const int layers = m.config.num_layers;
  for (int i = 0; i < layers; ++i) {
    const bool head = i == layers - 1;
    auto add = [&](DeviceComponents& p) {
      c.add_layer(p, i);
      if (head) c.add_head(p);
    };
    for (;;) {
      DeviceComponents trial = parts[dev];
      if (!active[dev]) trial = c.fixed(o.gpus[dev], dev == 0);
      add(trial);
      if (total(trial) <= cap[dev] || dev + 1 == n) break;
      ++dev;
    }
    activate(dev);
    add(parts[dev]);
    if (head) devs[dev].has_head = true;
    if (devs[dev].first_layer < 0) devs[dev].first_layer = i;
    devs[dev].last_layer = i;
    if (total(parts[dev]) > cap[dev] && plan.problem.empty())
      plan.problem = "layer " + std::to_string(i) + (head ? " and the head" : "") + (head ? " do" : " does") +
                     " not fit: " + (manual ? "the split allows " : "the GPUs hold ") + std::to_string(cap[dev] >> 20) +
                     " MiB on GPU " + std::to_string(dev) + ", " + std::to_string(total(parts[dev]) >> 20) +
                     " MiB needed there";
  }
  // The draft model goes where the backend puts it (exl::draft_device): on the GPU of the split with
  // the most free memory once the model is placed (GPU 0 without a split).
  std::size_t draft_on = 0;
  if (dbytes > 0) {
    std::int64_t best = INT64_MIN;
    for (std::size_t d = 0; d < n; ++d) {
      if (!active[d] || (d > 0 && devs[d].first_layer < 0)) continue;
      const std::int64_t room = std::int64_t(o.gpus[d].total_bytes()) - std::int64_t(total(parts[d]));
      if (room > best) best = room, draft_on = d;
    }
    parts[draft_on].draft = dbytes;
  }
  plan.draft_device = dbytes > 0 ? int(draft_on) : -1;
  plan.fits = plan.problem.empty();
  plan.margin_bytes = INT64_MAX;
  for (std::size_t d = 0; d < n; ++d) {
    DevicePlan& p = devs[d];
    p.gpu = o.gpus[d];
    p.parts = parts[d];
    const DeviceComponents& q = parts[d];
    p.weights_bytes = q.weights + q.embedding + q.head;
    p.cache_bytes = q.cache + q.cache_temp;
    p.scratch_bytes = q.scratch + q.rope + q.logits;
    p.overhead_bytes = q.cublas + q.context + q.rounding + q.margin;
    p.used_bytes = total(q);
    p.budget_bytes = manual ? cap[d] : 0;
    p.free_bytes = std::int64_t(p.gpu.total_bytes()) - std::int64_t(p.used_bytes);
    if (!active[d]) continue;
    plan.margin_bytes = std::min(plan.margin_bytes, p.free_bytes);
    if (p.free_bytes < 0 && plan.problem.empty())
      plan.problem = "GPU " + std::to_string(d) + " (" + p.gpu.name + ") needs " + std::to_string(p.used_bytes >> 20) +
                     " MiB of " + std::to_string(p.gpu.total_bytes() >> 20) + " MiB";
  }
  plan.fits = plan.problem.empty();
  plan.verdict = Verdict::fits;
  for (std::size_t d = 0; d < n; ++d) {
    if (!active[d]) continue;
    const std::int64_t tight = std::int64_t(std::max<std::uint64_t>(256 * kMiB, devs[d].gpu.total_bytes() / 50));
    if (devs[d].free_bytes < tight) plan.verdict = Verdict::tight;
  }
  if (!plan.fits) plan.verdict = Verdict::does_not_fit;
  if (o.layout == Layout::exllamav2) plan.host_bytes = m.embedding.device;
  plan.devices = std::move(devs);

  // Throughput: devices run one after the other for each token.
  auto seconds = [&](std::int64_t pos) {
    double s = 0;
    for (std::size_t d = 0; d < n; ++d) s += device_seconds(m, o, plan.devices[d], pos, d == 0);
    return s;
  };
  plan.bytes_per_token = decode_bytes_per_token(m, o, o.context);
  const double t_full = seconds(o.context);
  plan.decode_bound_tokens_per_s = t_full > 0 ? double(o.batch) / t_full : 0.0;
  const double t_empty = seconds(0);
  plan.decode_bound_empty = t_empty > 0 ? double(o.batch) / t_empty : 0.0;
  for (int i = 0; i <= 32; ++i) {
    const std::int64_t pos = o.context * i / 32;
    const double t = seconds(pos);
    plan.line.push_back({pos, decode_bytes_per_token(m, o, pos), t > 0 ? double(o.batch) / t : 0.0});
  }
  double flop_s = 0;
  const double per_layer = m.layers.empty() ? 0.0 : double(m.linear_params - m.head.params) / double(m.layers.size());
  for (const DevicePlan& d : plan.devices) {
    if (d.gpu.fp16_tflops <= 0) continue;
    double params = 0;
    if (d.first_layer >= 0) params += per_layer * (d.last_layer - d.first_layer + 1);
    if (d.has_head) params += double(m.head.params);
    flop_s += 2.0 * params / (d.gpu.fp16_tflops * 1e12);
  }
  plan.prefill_bound_tokens_per_s = flop_s > 0 ? 1.0 / flop_s : 0.0;
  if (draft && o.gpus[draft_on].bandwidth_gbs > 0) {
    const double td =
        double(decode_bytes_per_token(*draft, o, o.context)) / (o.gpus[draft_on].bandwidth_gbs * 1e9);
    plan.speculative_tokens_per_s = speculative_bound(t_full, td, o.draft_tokens, o.draft_acceptance);
  }
  return plan;
}

std::int64_t max_context(const ModelShape& m, const PlanOptions& o, const ModelShape* draft) {
  auto fits = [&](std::int64_t ctx) {
    PlanOptions t = o;
    t.context = ctx;
    return make_plan(m, t, draft).fits;
  };
  const std::int64_t step = 256, hi_limit = std::int64_t(1) << 22;
  if (!fits(step)) return 0;
  std::int64_t lo = 1, hi = hi_limit / step;  // in steps; lo fits
  if (fits(hi * step)) return hi * step;
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    (fits(mid * step) ? lo : hi) = mid;
  }
  return lo * step;
}

double max_bpw(const ModelShape& m, const PlanOptions& o, const ModelShape* draft) {
  const int hb = m.head_bits > 0 ? m.head_bits : 6;
  auto fits = [&](int hundredths) {
    return make_plan(shape_from_config(m.config, hundredths / 100.0, hb, o.layout), o, draft).fits;
  };
  int lo = 200, hi = 800;
  if (!fits(lo)) return 0.0;
  if (fits(hi)) return 8.0;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo / 100.0;
}

std::vector<LayerSegment> split_segments(const Plan& plan, const std::vector<int>& devices) {
  if (!plan.fits) throw Error(ErrorKind::invalid_argument, "the split does not fit: " + plan.problem, "", "--gpu-split");
  if (!devices.empty() && devices.size() != plan.devices.size())
    throw Error(ErrorKind::invalid_argument, "split: " + std::to_string(devices.size()) + " device ordinals for " +
                                                 std::to_string(plan.devices.size()) + " GPUs");
  std::vector<LayerSegment> out;
  int next = 0, head_on = -1, last_on = -1;
  for (std::size_t d = 0; d < plan.devices.size(); ++d) {
    const DevicePlan& p = plan.devices[d];
    if (p.has_head) head_on = int(d);
    if (p.first_layer < 0) continue;
    if (p.first_layer != next)
      throw Error(ErrorKind::invalid_argument, "split: GPU " + std::to_string(d) + " starts at layer " +
                                                   std::to_string(p.first_layer) + ", expected " + std::to_string(next));
    if (out.empty() && d != 0)
      throw Error(ErrorKind::invalid_argument, "split: GPU 0 holds no layers (it keeps the embedding); give it a share",
                  "", "--gpu-split");
    LayerSegment g;
    g.device = devices.empty() ? int(d) : devices[d];
    g.layers = p.last_layer - p.first_layer + 1;
    g.vram_limit = p.budget_bytes;
    out.push_back(g);
    next = p.last_layer + 1;
    last_on = int(d);
  }
  if (out.empty()) throw Error(ErrorKind::invalid_argument, "split: no GPU holds a layer", "", "--gpu-split");
  if (head_on != last_on)
    throw Error(ErrorKind::invalid_argument, "split: the head would sit on GPU " + std::to_string(head_on) +
                                                 " without the last layer (GPU " + std::to_string(last_on) +
                                                 "); give GPU " + std::to_string(last_on) + " more room",
                "", "--gpu-split");
  return out;
}

std::vector<LayerSegment> resolve_split(const std::string& text, const ModelShape& model, PlanOptions options) {
  if (text.empty()) return {};
  apply_split(text, options);
  return split_segments(make_plan(model, options));
}

void apply_split(const std::string& text, PlanOptions& options) {
  options.gpu_split_gb.clear();
  if (!text.empty() && text != "auto") {
    std::size_t pos = 0;
    while (pos <= text.size()) {
      const std::size_t comma = std::min(text.find(',', pos), text.size());
      const std::string v = text.substr(pos, comma - pos);
      double gib = 0;
      std::size_t used = 0;
      try {
        gib = std::stod(v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (v.empty() || used != v.size() || !(gib >= 0) || gib > 1e6)
        throw Error(ErrorKind::invalid_argument, "GPU split '" + text + "': '" + v + "' is not a number of GiB",
                    "", "--gpu-split");
      options.gpu_split_gb.push_back(gib);
      pos = comma + 1;
    }
    if (options.gpu_split_gb.size() > options.gpus.size())
      throw Error(ErrorKind::invalid_argument,
                  "GPU split '" + text + "' names " + std::to_string(options.gpu_split_gb.size()) + " GPUs; " +
                      std::to_string(options.gpus.size()) + (options.gpus.size() == 1 ? " is" : " are") + " present",
                  "", "--gpu-split");
    options.gpus.resize(options.gpu_split_gb.size());
  }
  if (options.gpus.empty()) throw Error(ErrorKind::invalid_argument, "GPU split: no GPU present", "", "--gpu-split");
}

std::vector<LayerSegment> parse_layer_split(const std::string& text) {
  std::vector<LayerSegment> out;
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::invalid_argument, "layer split '" + text + "': " + why + " (D:N,D:N,...: CUDA device D "
                                              "holds the next N layers; the last N may be left out for the rest)",
                 "", "--layer-split");
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    if (item.empty()) throw bad("empty entry");
    const std::size_t colon = item.find(':');
    auto number = [&](const std::string& v, const char* what) {
      if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos)
        throw bad(std::string("bad ") + what + " '" + v + "'");
      return std::stoi(v);
    };
    LayerSegment g;
    g.device = number(item.substr(0, colon), "device");
    g.layers = colon == std::string::npos ? 0 : number(item.substr(colon + 1), "layer count");
    out.push_back(g);
    pos = comma + 1;
  }
  for (std::size_t i = 0; i + 1 < out.size(); ++i)
    if (out[i].layers <= 0) throw bad("entry " + std::to_string(i + 1) + " needs a layer count above 0");
  return out;
}

}  // namespace exl::plan

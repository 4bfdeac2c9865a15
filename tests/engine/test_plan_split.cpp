// The planner's layer split (manual and automatic), the GPU table, the solvers and the JSON schema.
#include <cstdio>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/plan.h"
#include "exl_test.h"

using namespace exl;
using namespace exl::plan;

namespace {

PlanOptions options(std::vector<GpuSpec> gpus, std::int64_t ctx, Layout layout = Layout::engine) {
  PlanOptions o;
  o.gpus = std::move(gpus);
  o.context = ctx;
  o.layout = layout;
  return o;
}

void check_contiguous(const Plan& p, int layers) {
  int next = 0;
  bool head_seen = false;
  for (const DevicePlan& d : p.devices) {
    if (d.first_layer < 0) continue;
    CHECK_EQ(d.first_layer, next);
    CHECK(d.last_layer >= d.first_layer);
    next = d.last_layer + 1;
    head_seen = head_seen || d.has_head;
  }
  CHECK_EQ(next, layers);
  CHECK(head_seen);
}

}  // namespace

EXL_TEST(plan, auto_split_in_order) {
  const GpuSpec g = find_gpu("RTX 4090");
  const ModelShape s = shape_from_config(preset_config("llama3-70b"), 4.0, 6, Layout::engine);
  const Plan one = make_plan(s, options({g}, 8192));
  CHECK(!one.fits);
  CHECK_EQ(std::string(verdict_name(one.verdict)), std::string("does not fit"));
  CHECK_MSG(one.problem.find("does not fit") != std::string::npos, one.problem);
  const Plan two = make_plan(s, options({g, g}, 8192));
  CHECK_MSG(two.fits, two.problem);
  check_contiguous(two, 80);
  CHECK_EQ(two.devices[0].first_layer, 0);
  CHECK(two.devices[1].has_head);
  // GPU 0 was filled first: one more layer would not have fitted under its 192 MiB reserve.
  const DevicePlan& d0 = two.devices[0];
  const std::uint64_t next = s.layers[std::size_t(d0.last_layer + 1)].device;
  CHECK(d0.used_bytes + next > g.total_bytes() - 192 * kMiB);
  for (const DevicePlan& d : two.devices) {
    CHECK(d.used_bytes <= d.gpu.total_bytes());
    CHECK_EQ(d.used_bytes, d.weights_bytes + d.cache_bytes + d.scratch_bytes + d.overhead_bytes + d.parts.draft);
    CHECK_EQ(d.free_bytes, std::int64_t(d.gpu.total_bytes()) - std::int64_t(d.used_bytes));
  }
  // Only GPU 0 holds the embedding; each device holding layers has its own context and workspace.
  CHECK(two.devices[0].parts.embedding > 0);
  CHECK_EQ(two.devices[1].parts.embedding, std::uint64_t(0));
  CHECK(two.devices[1].parts.context > 0 && two.devices[1].parts.cublas == 32 * kMiB);
}

EXL_TEST(plan, manual_split_fills_each_allowance) {
  const GpuSpec g = find_gpu("RTX 3090");
  const ModelShape s = shape_from_config(preset_config("llama3-8b"), 4.0, 6, Layout::exllamav2);
  PlanOptions o = options({g, g}, 8192, Layout::exllamav2);
  o.gpu_split_gb = {4, 20};
  const Plan p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  check_contiguous(p, 32);
  const DevicePlan& d0 = p.devices[0];
  CHECK_EQ(d0.budget_bytes, 4 * kGiB);
  CHECK(d0.used_bytes <= 4 * kGiB);
  const std::uint64_t cache_layer = 8192ull * 4096;  // fp16, per layer
  CHECK(d0.used_bytes + s.layers[std::size_t(d0.last_layer + 1)].device + cache_layer > 4 * kGiB);
  CHECK(p.devices[1].has_head);
  // An allowance too small for the whole model: a clear error in the plan, not an exception.
  o.gpu_split_gb = {1.5, 1.5};
  const Plan small = make_plan(s, o);
  CHECK(!small.fits);
  CHECK_MSG(small.problem.find("split allows") != std::string::npos, small.problem);
  // Allowance bigger than the card: the plan follows the split and says the card is too small.
  o.gpu_split_gb = {40, 40};
  const Plan over = make_plan(shape_from_config(preset_config("llama3-70b"), 4.0, 6, Layout::exllamav2), o);
  CHECK(!over.fits);
  CHECK_MSG(over.problem.find("needs") != std::string::npos, over.problem);
  o.gpu_split_gb = {20};
  CHECK_THROWS_ERROR(make_plan(s, o), ErrorKind::invalid_argument, "gpu split");
}

EXL_TEST(plan, gpu_table_is_sane) {
  std::set<std::string> names;
  for (const GpuSpec& g : builtin_gpus()) {
    CHECK_MSG(names.insert(g.name).second, "duplicate " << g.name);
    CHECK_MSG(g.memory_mib >= 4096 && g.memory_mib <= 150000, g.name);
    CHECK_MSG(g.bandwidth_gbs >= 200 && g.bandwidth_gbs <= 5000, g.name);
    CHECK_MSG(g.fp16_tflops >= 15 && g.fp16_tflops <= 1000, g.name);
    CHECK_EQ(find_gpu(g.name).name, g.name);
  }
  CHECK(builtin_gpus().size() >= 50);
  CHECK_EQ(find_gpu("4090").name, std::string("GeForce RTX 4090"));
  CHECK_EQ(find_gpu("NVIDIA GeForce RTX 4090").name, std::string("GeForce RTX 4090"));
  CHECK_EQ(find_gpu("rtx4090").bandwidth_gbs, 1008.0);
  CHECK_EQ(find_gpu("H200").memory_mib, std::uint64_t(143771));
  CHECK(find_gpu("H100 SXM").bandwidth_gbs > find_gpu("H100 PCIe").bandwidth_gbs);
  CHECK(find_gpu("A100 80GB").memory_mib == 2 * find_gpu("A100 40GB").memory_mib);
  CHECK_THROWS_ERROR(find_gpu("Voodoo 5"), ErrorKind::invalid_argument, "unknown GPU");
  const auto path = std::filesystem::temp_directory_path() / "exl_plan_gpus.json";
  {
    std::ofstream f(path);
    f << R"([{"name": "Lab card", "memory_gb": 12, "bandwidth_gbs": 500}])";
  }
  const auto extra = load_gpu_file(path);
  CHECK_EQ(find_gpu("lab card", extra).memory_mib, std::uint64_t(12288));
  {
    std::ofstream f(path);
    f << R"([{"name": "Lab card", "memory_gb": 12}])";
  }
  CHECK_THROWS_ERROR(load_gpu_file(path), ErrorKind::config, "bandwidth_gbs");
  std::filesystem::remove(path);
}

EXL_TEST(plan, solvers_are_tight) {
  const GpuSpec g = find_gpu("RTX 4090");
  const ModelShape s = shape_from_config(preset_config("llama3-8b"), 4.0, 6, Layout::engine);
  PlanOptions o = options({g}, 8192);
  const std::int64_t mc = max_context(s, o);
  CHECK(mc > 8192 && mc % 256 == 0);
  o.context = mc;
  CHECK(make_plan(s, o).fits);
  o.context = mc + 256;
  CHECK(!make_plan(s, o).fits);
  o.context = 8192;
  const double mb = max_bpw(s, o);
  CHECK(mb > 4.0 && mb <= 8.0);
  if (mb < 8.0) {
    CHECK(make_plan(shape_from_config(s.config, mb, 6, o.layout), o).fits);
    CHECK(!make_plan(shape_from_config(s.config, mb + 0.01, 6, o.layout), o).fits);
  }
  // 70B on one 4090: 4.0 bpw never fits; at 32k context (10 GiB of FP16 cache) not even 2.0 bpw.
  const ModelShape big = shape_from_config(preset_config("llama3-70b"), 4.0, 6, Layout::engine);
  CHECK_EQ(max_context(big, o), std::int64_t(0));
  const double big_bpw = max_bpw(big, o);
  CHECK(big_bpw >= 2.0 && big_bpw < 3.0);
  PlanOptions long_ctx = o;
  long_ctx.context = 32768;
  CHECK_EQ(max_bpw(big, long_ctx), 0.0);
  // A Q4 cache holds more context than FP16.
  PlanOptions q = o;
  q.cache = parse_cache("q4");
  CHECK(max_context(s, q) > mc);
}

EXL_TEST(plan, json_schema_is_stable) {
  const ModelShape s = shape_from_config(preset_config("qwen2.5-7b"), 4.0, 6, Layout::engine);
  const ModelShape d = shape_from_config(preset_config("llama3.2-1b"), 4.0, 6, Layout::engine);
  PlanOptions o = options({find_gpu("RTX 4090")}, 8192);
  const Plan p = make_plan(s, o, &d);
  const auto j = nlohmann::json::parse(plan_to_json(s, o, p, 12345, 5.5, &d));
  CHECK_EQ(j.at("schema").get<std::string>(), std::string("exl.plan/1"));
  CHECK(j.at("fits").is_boolean());
  CHECK_EQ(j.at("max_context").get<std::int64_t>(), std::int64_t(12345));
  CHECK_EQ(j.at("max_bpw").get<double>(), 5.5);
  for (const char* k : {"bytes_per_token", "decode_bound_tokens_per_s", "prefill_bound_tokens_per_s",
                        "speculative_tokens_per_s", "margin_bytes"})
    CHECK_MSG(j.at(k).is_number(), k);
  CHECK(j.at("devices").is_array() && j.at("devices").size() == 1);
  for (const char* k : {"total_bytes", "weights_bytes", "cache_bytes", "scratch_bytes", "overhead_bytes", "free_bytes"})
    CHECK_MSG(j["devices"][0].at(k).is_number_integer(), k);
  CHECK(j["devices"][0].at("name").is_string());
  CHECK(j["devices"][0].at("draft_bytes").get<std::uint64_t>() > 0);
  CHECK_EQ(j.at("throughput").size(), std::size_t(33));
  CHECK(j["throughput"][0].at("tokens_per_s").get<double>() > j["throughput"][32].at("tokens_per_s").get<double>());
  // Qwen2 q/k/v biases are fp32 on the device in the engine layout.
  CHECK(s.layers[0].device > shape_from_config([] {
          ModelConfig c = preset_config("qwen2.5-7b");
          c.attention_bias = false;
          return c;
        }(), 4.0, 6, Layout::engine).layers[0].device);
}

// The runtime split (BackendOptions::split) taken from a plan: one segment per GPU holding layers,
// in order, the manual allowance as each segment's VRAM limit.
EXL_TEST(plan, split_segments_follow_the_plan) {
  const GpuSpec g = find_gpu("RTX 4090");
  const ModelShape s = shape_from_config(preset_config("llama3-70b"), 4.0, 6, Layout::engine);
  const Plan two = make_plan(s, options({g, g}, 8192));
  CHECK_MSG(two.fits, two.problem);
  const std::vector<LayerSegment> seg = split_segments(two);
  CHECK_EQ(seg.size(), std::size_t(2));
  CHECK_EQ(seg[0].device, 0);
  CHECK_EQ(seg[1].device, 1);
  CHECK_EQ(seg[0].layers, two.devices[0].last_layer + 1);
  CHECK_EQ(seg[1].layers, 80 - seg[0].layers);
  CHECK_EQ(seg[0].vram_limit, std::uint64_t(0));  // automatic: no allowance
  // Manual: the allowance in GiB becomes the segment's limit; ordinals can be remapped.
  PlanOptions o = options({g, g}, 4096);
  o.gpu_split_gb = {20, 23};
  const Plan manual = make_plan(s, o);
  CHECK_MSG(manual.fits, manual.problem);
  const std::vector<LayerSegment> m = split_segments(manual, {3, 5});
  CHECK_EQ(m.size(), std::size_t(2));
  CHECK_EQ(m[0].device, 3);
  CHECK_EQ(m[1].device, 5);
  CHECK_EQ(m[0].vram_limit, std::uint64_t(20) << 30);
  CHECK_EQ(m[1].vram_limit, std::uint64_t(23) << 30);
  CHECK_EQ(m[0].layers + m[1].layers, 80);
  CHECK_EQ(m[0].layers, manual.devices[0].last_layer - manual.devices[0].first_layer + 1);
  // A third GPU with nothing on it gets no segment.
  PlanOptions three = options({g, g, g}, 4096);
  three.gpu_split_gb = {20, 23, 10};
  const std::vector<LayerSegment> t = split_segments(make_plan(s, three));
  CHECK_EQ(t.size(), std::size_t(2));
  // Too small: the plan's problem, as a clear error.
  PlanOptions small = options({g, g}, 4096);
  small.gpu_split_gb = {10, 10};
  try {
    (void)split_segments(make_plan(s, small));
    CHECK_MSG(false, "a split that does not fit was accepted");
  } catch (const Error& e) {
    CHECK_MSG(std::string(e.what()).find("does not fit") != std::string::npos, e.what());
  }
}

// Layouts the backend cannot run: the head on a GPU after the last layer's, GPU 0 without layers.
EXL_TEST(plan, split_segments_refuse_what_the_backend_cannot_place) {
  Plan p;
  p.fits = true;
  p.devices.resize(2);
  p.devices[0].first_layer = 0;
  p.devices[0].last_layer = 79;
  p.devices[1].has_head = true;
  auto refuses = [](const Plan& plan, const std::string& needle) {
    try {
      (void)split_segments(plan);
      CHECK_MSG(false, "accepted (expected '" << needle << "')");
    } catch (const Error& e) {
      CHECK_MSG(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  refuses(p, "head would sit on GPU 1");
  p.devices[0] = DevicePlan{};
  p.devices[1].first_layer = 0;
  p.devices[1].last_layer = 79;
  refuses(p, "GPU 0 holds no layers");
  p.devices[0].first_layer = 0;
  p.devices[0].last_layer = 9;
  p.devices[1].first_layer = 11;
  refuses(p, "expected 10");
  p.devices[1].first_layer = 10;
  const std::vector<LayerSegment> ok = split_segments(p);
  CHECK_EQ(ok.size(), std::size_t(2));
  CHECK_EQ(ok[0].layers, 10);
  CHECK_EQ(ok[1].layers, 70);
  CHECK_EQ(split_segments(p, {1, 0})[0].device, 1);
  p.fits = false;
  p.problem = "layer 3 does not fit";
  refuses(p, "layer 3 does not fit");
}

EXL_TEST(plan, parse_layer_split) {
  std::vector<LayerSegment> s = parse_layer_split("0:12,0");
  CHECK_EQ(s.size(), std::size_t(2));
  CHECK_EQ(s[0].device, 0);
  CHECK_EQ(s[0].layers, 12);
  CHECK_EQ(s[1].device, 0);
  CHECK_EQ(s[1].layers, 0);
  s = parse_layer_split("1:20,0:40,2:20");
  CHECK_EQ(s.size(), std::size_t(3));
  CHECK_EQ(s[2].device, 2);
  CHECK_EQ(s[2].layers, 20);
  s = parse_layer_split("3");
  CHECK_EQ(s.size(), std::size_t(1));
  CHECK_EQ(s[0].device, 3);
  for (const char* bad : {"", ",", "0:", "0:,1", "a:3", "0:0,1", "0:3,,1", "0:-1", "0:3,", "-1:2", "0:9999999"}) {
    try {
      (void)parse_layer_split(bad);
      CHECK_MSG(false, "'" << bad << "' was accepted");
    } catch (const Error& e) {
      CHECK_MSG(std::string(e.what()).find("layer split") != std::string::npos, e.what());
    }
  }
}

// The split as users write it ("", "auto", GiB per GPU) through the planner.
EXL_TEST(plan, resolve_split_from_text) {
  const GpuSpec g = find_gpu("RTX 4090");
  const ModelShape s = shape_from_config(preset_config("llama3-70b"), 4.0, 6, Layout::engine);
  const PlanOptions o = options({g, g, g}, 4096);
  CHECK(resolve_split("", s, o).empty());
  const std::vector<LayerSegment> a = resolve_split("auto", s, o);
  CHECK_EQ(a.size(), std::size_t(2));  // two 4090s hold it; the third stays empty
  CHECK_EQ(a[0].layers + a[1].layers, 80);
  const std::vector<LayerSegment> m = resolve_split("20,23", s, o);  // the first two GPUs
  CHECK_EQ(m.size(), std::size_t(2));
  CHECK_EQ(m[1].vram_limit, std::uint64_t(23) << 30);
  PlanOptions manual = options({g, g}, 4096);
  manual.gpu_split_gb = {20, 23};
  CHECK_EQ(m[0].layers, split_segments(make_plan(s, manual))[0].layers);
  for (const char* bad : {"20,", "x", "20,23,10,5", "-3,40", "20;23", "1e9"}) {
    try {
      (void)resolve_split(bad, s, o);
      CHECK_MSG(false, "'" << bad << "' was accepted");
    } catch (const Error& e) {
      CHECK_MSG(std::string(e.what()).find("GPU split") != std::string::npos, e.what());
    }
  }
  try {
    (void)resolve_split("10,10", s, o);
    CHECK_MSG(false, "a split that does not fit was accepted");
  } catch (const Error& e) {
    CHECK_MSG(std::string(e.what()).find("does not fit") != std::string::npos, e.what());
  }
}

// The split solver on 1-4 GPUs of unequal sizes, with reserves, against layouts worked out by hand.
// The model: 10 layers of exactly 1 GiB, a 0.5 GiB head, a 0.25 GiB embedding (test-tiny's shapes
// otherwise, so its scratch and cache are a few MiB); every GPU's fixed cost is its 256 MiB CUDA
// context, 32 MiB cuBLAS workspace and 64 MiB margin (352 MiB, plus those few MiB), GPU 0's also the
// embedding; reserves 192 MiB on GPU 0 and 64 MiB on the others.
EXL_TEST(plan, split_solver_hand_computed_layouts) {
  ModelShape s = shape_from_config(preset_config("test-tiny"), 4.0, 6, Layout::engine);
  s.config.num_layers = 10;
  s.layers.assign(10, ModuleBytes{});
  for (ModuleBytes& l : s.layers) { l.device = kGiB; l.read = kGiB; l.max_dq_elems = 4096; }
  s.head.device = s.head.read = kGiB / 2;
  s.head.buffers.clear();
  s.embedding.device = kGiB / 4;
  s.embedding.buffers.clear();
  auto gpu = [](double gib) {
    GpuSpec g;
    g.name = "GPU " + std::to_string(gib);
    g.memory_mib = std::uint64_t(gib * 1024);
    g.bandwidth_gbs = 1000;
    g.context_mib = 256;
    return g;
  };
  auto layout = [&](const Plan& p) {
    std::string out;
    for (const DevicePlan& d : p.devices) {
      if (!out.empty()) out += " | ";
      out += d.first_layer < 0 ? "-" : std::to_string(d.first_layer) + "-" + std::to_string(d.last_layer);
      if (d.has_head) out += "+h";
    }
    return out;
  };
  PlanOptions o = options({gpu(12)}, 256);
  // One GPU: 352 + 256 + 10 x 1024 + 512 = 11360 MiB of 12096 (12 GiB less the reserve).
  Plan p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  CHECK_EQ(layout(p), std::string("0-9+h"));
  // The head never sits alone: on 11 GiB (11072 MiB usable) all 10 layers fit (608 + 10240 = 10848)
  // but not the head beside them (11360), so layer 9 goes along with it to GPU 1.
  o.gpus = {gpu(11), gpu(4)};
  p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  CHECK_EQ(layout(p), std::string("0-8 | 9-9+h"));
  CHECK_EQ(split_segments(p).size(), std::size_t(2));
  // Four GPUs, automatic: GPU 0 (3.5 GiB, 3392 MiB usable): 608 + 2 layers = 2656 (a third: 3680);
  // GPU 1 (2.5 GiB, 2496): 352 + 2 layers = 2400; GPU 2 (4.5 GiB, 4544): 352 + 4 layers = 4448;
  // GPU 3 (3 GiB, 3008): 352 + 2 layers + head = 2912.
  o.gpus = {gpu(3.5), gpu(2.5), gpu(4.5), gpu(3)};
  p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  CHECK_EQ(layout(p), std::string("0-1 | 2-3 | 4-7 | 8-9+h"));
  std::vector<LayerSegment> seg = split_segments(p);
  CHECK_EQ(seg.size(), std::size_t(4));
  CHECK_EQ(seg[2].layers, 4);
  // The first three alone: layers 8 and 9 and the head are left over, on GPU 2 past its room.
  o.gpus.resize(3);
  p = make_plan(s, o);
  CHECK(!p.fits);
  CHECK_MSG(p.problem.find("layer 8 does not fit") != std::string::npos, p.problem);
  // Two GPUs: GPU 0 as before, GPU 1 (8 GiB, 8128 usable): 352 + 7 layers = 7520, an eighth layer
  // (8544) does not fit: layer 9 lands on GPU 1 regardless (the last device) and overflows.
  o.gpus = {gpu(3.5), gpu(8)};
  p = make_plan(s, o);
  CHECK(!p.fits);
  CHECK_EQ(layout(p), std::string("0-1 | 2-9+h"));
  // Bigger second GPU: fits, same layout.
  o.gpus = {gpu(3.5), gpu(10)};
  p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  CHECK_EQ(layout(p), std::string("0-1 | 2-9+h"));
  // A draft model goes on the GPU with the most room left: GPU 1 (10240 - 9056 = 1184 MiB free,
  // GPU 0 3584 - 2656 = 928), as exl::draft_device picks at load; one GPU: GPU 0.
  const ModelShape draft = shape_from_config(preset_config("test-tiny"), 4.0, 6, Layout::engine);
  p = make_plan(s, o, &draft);
  CHECK_EQ(p.draft_device, 1);
  CHECK_EQ(p.devices[0].parts.draft, std::uint64_t(0));
  CHECK(p.devices[1].parts.draft > 0);
  CHECK(p.speculative_tokens_per_s > 0);
  PlanOptions single = options({gpu(12)}, 256);
  CHECK_EQ(make_plan(s, single, &draft).draft_device, 0);
  CHECK_EQ(make_plan(s, single).draft_device, -1);
  // A larger reserve on GPU 0 (1 GiB): 3.5 GiB less 1 GiB = 2560 usable, one layer (1632) fits.
  o.reserve_first = kGiB;
  p = make_plan(s, o);
  CHECK_EQ(layout(p), std::string("0-0 | 1-9+h"));
  o.reserve_first = 192 * kMiB;
  // Manual, four GPUs of unequal allowances (GiB): GPU 0 1.9 (1945 MiB): 608 + 1 layer = 1632;
  // GPU 1 3.5: 352 + 3 layers = 3424; GPU 2 2.5: 352 + 2 = 2400; GPU 3 5 (5120): 352 + 4 layers +
  // head = 4960 on a 6 GiB card.
  o.gpus = {gpu(3.5), gpu(4), gpu(4.5), gpu(6)};
  o.gpu_split_gb = {1.9, 3.5, 2.5, 5};
  p = make_plan(s, o);
  CHECK_MSG(p.fits, p.problem);
  CHECK_EQ(layout(p), std::string("0-0 | 1-3 | 4-5 | 6-9+h"));
  seg = split_segments(p);
  CHECK_EQ(seg.size(), std::size_t(4));
  CHECK_EQ(seg[1].layers, 3);
  CHECK_EQ(seg[3].vram_limit, std::uint64_t(5) * kGiB);
  // Three of them: the same allowances cannot hold layers 6-9.
  o.gpus.resize(3);
  o.gpu_split_gb.resize(3);
  p = make_plan(s, o);
  CHECK(!p.fits);
  CHECK_MSG(p.problem.find("split allows") != std::string::npos, p.problem);
  CHECK_THROWS_ERROR(split_segments(p), ErrorKind::invalid_argument, "does not fit");
}

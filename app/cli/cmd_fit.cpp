// exl fit: "does it fit, and how fast will it be" before loading (the planner of engine/src/plan).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "exl/error.h"
#include "exl/plan.h"

namespace exl::cli {
namespace {

using namespace exl::plan;

std::optional<std::string> flag(const Args& a, const char* long_name, const char* short_name = nullptr) {
  if (auto v = a.get(long_name)) return v;
  if (short_name) return a.get(short_name);
  return std::nullopt;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ',')) {
    while (!cur.empty() && cur.front() == ' ') cur.erase(cur.begin());
    while (!cur.empty() && cur.back() == ' ') cur.pop_back();
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

double parse_number(const std::string& text, const char* flag_name) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (!(v >= 0)) throw std::invalid_argument("negative");
    return v;
  } catch (const std::exception&) {
    throw Error(ErrorKind::invalid_argument, "not a number: '" + text + "'", "", flag_name);
  }
}

// "24", "24GiB", "24GB" (10^9), "24576MiB" -> MiB.
std::uint64_t parse_memory_mib(const std::string& text) {
  const double v = parse_number(text, "--vram");
  std::string unit;
  for (char c : text)
    if (std::isalpha(static_cast<unsigned char>(c))) unit += char(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "gib" || unit == "g") return std::uint64_t(v * 1024.0);
  if (unit == "gb") return std::uint64_t(v * 1e9 / double(kMiB));
  if (unit == "mib" || unit == "m") return std::uint64_t(v);
  throw Error(ErrorKind::invalid_argument, "memory unit must be GiB, GB or MiB: '" + text + "'", "", "--vram");
}

std::vector<GpuSpec> gpus_from_args(const Args& a, std::string& note) {
  std::vector<GpuSpec> extra;
  if (auto f = a.get("--gpus-file")) extra = load_gpu_file(*f);
  std::vector<GpuSpec> gpus;
  if (auto g = a.get("--gpu")) {
    for (const std::string& name : split_list(*g)) {
      // "2x RTX 4090" repeats an entry
      int count = 1;
      std::string n = name;
      if (const auto x = n.find_first_of("xX"); x != std::string::npos && x > 0 && std::isdigit(static_cast<unsigned char>(n[0])) &&
          n.find_first_not_of("0123456789") == x) {
        count = std::stoi(n.substr(0, x));
        n = n.substr(x + 1);
      }
      const GpuSpec spec = find_gpu(n, extra);
      for (int i = 0; i < count; ++i) gpus.push_back(spec);
    }
  }
  const auto vram = flag(a, "--vram", "--gpu-mem");
  const auto bw = flag(a, "--bandwidth", "--gpu-bw");
  if (vram) {
    const std::vector<std::string> mems = split_list(*vram);
    const std::vector<std::string> bws = bw ? split_list(*bw) : std::vector<std::string>{};
    if (bws.empty()) throw Error(ErrorKind::invalid_argument, "--vram needs --bandwidth GB/s", "", "--bandwidth");
    for (std::size_t i = 0; i < mems.size(); ++i) {
      GpuSpec g;
      g.name = "custom GPU " + std::to_string(gpus.size());
      g.memory_mib = parse_memory_mib(mems[i]);
      g.bandwidth_gbs = parse_number(bws[std::min(i, bws.size() - 1)], "--bandwidth");
      g.fp16_tflops = a.get_double("--tflops", 0.0);
      gpus.push_back(g);
    }
  }
  if (gpus.empty()) {
    gpus.push_back(find_gpu("GeForce RTX 4090"));
    note = "no --gpu given: planning for one GeForce RTX 4090";
  }
  if (auto ctx_mib = a.get("--context-mib"))
    for (GpuSpec& g : gpus) g.context_mib = std::uint64_t(parse_number(*ctx_mib, "--context-mib"));
  return gpus;
}

ModelShape model_from_args(const Args& a, Layout layout, std::string& what) {
  const auto bpw_text = a.get("--bpw");
  const auto hb_text = flag(a, "--head-bits", "-hb");
  const int head_bits = hb_text ? int(parse_number(*hb_text, "--head-bits")) : 6;
  QuantFormat format = QuantFormat::automatic;
  if (auto f = a.get("--format")) {
    if (*f == "exl2") format = QuantFormat::exl2;
    else if (*f == "exl3") format = QuantFormat::exl3;
    else throw Error(ErrorKind::invalid_argument, "--format must be exl2 or exl3 (got " + *f + ")", "", "--format");
  }
  auto whatif = [&](const ModelConfig& c, const std::string& label) {
    if (!bpw_text) throw Error(ErrorKind::invalid_argument, label + ": give the target bpw with --bpw", "", "--bpw");
    ModelShape s = shape_from_config(c, parse_number(*bpw_text, "--bpw"), head_bits, layout, format);
    const bool exl3 = format == QuantFormat::exl3 ||
                      (format == QuantFormat::automatic && c.quantization && c.quantization->method == "exl3");
    what = label + (exl3 ? " as EXL3" : "") + " at " + *bpw_text + " bpw, head " + std::to_string(head_bits) +
           " bits (what if)";
    return s;
  };
  if (auto p = flag(a, "--preset", "--synth")) {
    ModelConfig c = preset_config(*p);
    if (!bpw_text) {
      ModelShape s = shape_from_config(c, 4.0, head_bits, layout, format);
      s.name = *p;
      what = *p + " (preset) at 4.0 bpw, head " + std::to_string(head_bits) + " bits";
      return s;
    }
    ModelShape s = whatif(c, *p + " (preset)");
    s.name = *p;
    return s;
  }
  if (auto cfg = a.get("--config")) {
    const std::filesystem::path path(*cfg);
    ModelConfig c;
    if (std::filesystem::is_directory(path)) {
      c = read_model_config(path);
    } else {
      std::ifstream f(path, std::ios::binary);
      if (!f) throw Error(ErrorKind::io, "cannot open config", path.string());
      std::stringstream ss;
      ss << f.rdbuf();
      c = parse_model_config(ss.str(), path.string());
      c.dir = path.parent_path();
    }
    return whatif(c, path.string());
  }
  if (auto dir = a.get("--model"); dir && !std::filesystem::exists(*dir) && looks_like_hub_ref(*dir)) {
    // A Hub model not downloaded: its config.json (with quantization_config) read over the API.
    if (bpw_text) return whatif(parse_model_config(hub_config_json(*dir), *dir + " config.json"), *dir);
    // Exact: the safetensors headers read with Range requests into a folder of sparse files.
    struct Scratch {
      std::filesystem::path path = std::filesystem::temp_directory_path() /
                                   ("exl_fit_hub_" + std::to_string(::getpid()));
      ~Scratch() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    } scratch;
    hub_skeleton(*dir, scratch.path);
    ModelShape s = shape_from_folder(scratch.path, layout);
    what = *dir + " (exact, from the safetensors headers read over the Hub)";
    return s;
  }
  if (auto dir = a.get("--model")) {
    if (bpw_text) return whatif(read_model_config(*dir), *dir);
    ModelShape s = shape_from_folder(*dir, layout);
    what = *dir + " (exact, from the safetensors headers)";
    return s;
  }
  throw Error(ErrorKind::invalid_argument, "give a model: -m DIR, --config FILE --bpw B, or --preset NAME", "", "--model");
}

std::string mib(std::uint64_t b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%10.1f MiB", double(b) / double(kMiB));
  return buf;
}

void print_table(const ModelShape& m, const PlanOptions& o, const Plan& p, std::int64_t max_ctx, double mbpw,
                 const std::string& what, const std::string& note, const ModelShape* draft) {
  std::printf("model     %s\n          %d layers, hidden %d, %d heads / %d KV heads, vocab %d; layout %s\n",
              what.c_str(), m.config.num_layers, m.config.hidden_size, m.config.num_heads, m.config.num_kv_heads,
              m.config.vocab_size, layout_name(o.layout));
  std::printf("settings  context %lld (cache holds %lld tokens, %s), batch %d, max chunk %d, %s split\n",
              (long long)o.context, (long long)p.cache_tokens, o.cache.name.c_str(), o.batch, o.max_chunk,
              o.gpu_split_gb.empty() ? "automatic" : "manual");
  if (!note.empty()) std::printf("note      %s\n", note.c_str());
  for (std::size_t i = 0; i < p.devices.size(); ++i) {
    const DevicePlan& d = p.devices[i];
    const DeviceComponents& c = d.parts;
    std::printf("\nGPU %zu: %s, %llu MiB, %.0f GB/s", i, d.gpu.name.c_str(), (unsigned long long)d.gpu.memory_mib,
                d.gpu.bandwidth_gbs);
    if (d.first_layer >= 0) std::printf(", layers %d-%d", d.first_layer, d.last_layer);
    if (d.has_head) std::printf(" + head");
    std::printf("\n");
    const std::pair<const char*, std::uint64_t> rows[] = {
        {"decoder layers", c.weights}, {"embedding (fp16)", c.embedding}, {"head + final norm", c.head},
        {"KV cache", c.cache}, {"cache temp pair", c.cache_temp}, {"scratch", c.scratch}, {"RoPE tables", c.rope},
        {"logits", c.logits}, {"cuBLAS workspace", c.cublas}, {"CUDA context", c.context},
        {"allocation rounding", c.rounding}, {"fragmentation margin", c.margin}, {"draft model", c.draft}};
    for (const auto& [name, bytes] : rows)
      if (bytes) std::printf("  %-22s %s\n", name, mib(bytes).c_str());
    std::printf("  %-22s %s\n", "total", mib(d.used_bytes).c_str());
    if (d.budget_bytes) std::printf("  %-22s %s\n", "split allowance", mib(d.budget_bytes).c_str());
    std::printf("  %-22s %s%s\n", "free", d.free_bytes < 0 ? "-" : " ",
                mib(std::uint64_t(d.free_bytes < 0 ? -d.free_bytes : d.free_bytes)).c_str());
  }
  std::printf("\nverdict   %s", verdict_name(p.verdict));
  if (p.fits) std::printf(" (margin %.2f GiB)", double(p.margin_bytes) / double(kGiB));
  else std::printf(": %s", p.problem.c_str());
  std::printf("\n");
  if (p.host_bytes) std::printf("host RAM  %s (embedding table)\n", mib(p.host_bytes).c_str());
  std::printf("largest context that fits: %lld tokens\n", (long long)max_ctx);
  std::printf("highest bpw that fits at %lld tokens: %.2f\n", (long long)o.context, mbpw);
  std::printf("decode bound: %.1f tokens/s at position %lld (%.1f at 0); %.1f MiB read per token\n",
              p.decode_bound_tokens_per_s, (long long)o.context, p.decode_bound_empty,
              double(p.bytes_per_token) / double(kMiB));
  if (p.prefill_bound_tokens_per_s > 0) std::printf("prefill bound: %.0f tokens/s (FP16 tensor rate)\n", p.prefill_bound_tokens_per_s);
  if (draft)
    std::printf("speculative: %.1f tokens/s with %d drafted tokens at acceptance %.2f (draft %s)\n",
                p.speculative_tokens_per_s, o.draft_tokens, o.draft_acceptance, draft->name.c_str());
}

}  // namespace

int cmd_fit(const Args& a) {
  a.check_known({"--model", "--config", "--preset", "--synth", "--bpw", "--format", "--head-bits", "-hb", "--ctx", "--cache",
                 "--cache-k", "--cache-v", "--batch", "--max-chunk", "--draft", "--draft-bpw", "--draft-tokens",
                 "--accept", "--gpu", "--gpus-file", "--vram", "--gpu-mem", "--bandwidth", "--gpu-bw", "--tflops",
                 "--gpu-split", "-gs", "--auto-split", "--layout", "--context-mib", "--margin-mib", "--json",
                 "--list-gpus"});
  if (a.has("--list-gpus")) {
    for (const GpuSpec& g : builtin_gpus())
      std::printf("%-28s %7llu MiB %6.0f GB/s %6.0f TFLOPS\n", g.name.c_str(), (unsigned long long)g.memory_mib,
                  g.bandwidth_gbs, g.fp16_tflops);
    return 0;
  }
  PlanOptions o;
  o.layout = parse_layout(a.get_or("--layout", "engine"));
  o.context = a.get_int("--ctx", 4096);
  o.cache = parse_cache(a.get_or("--cache", "fp16"));
  if (a.has("--cache-k") || a.has("--cache-v"))
    o.cache = parse_cache("k" + a.get_or("--cache-k", "8") + "v" + a.get_or("--cache-v", "8"));
  o.batch = a.get_int("--batch", 1);
  o.max_chunk = a.get_int("--max-chunk", 2048);
  o.draft_tokens = a.get_int("--draft-tokens", 4);
  o.draft_acceptance = a.get_double("--accept", 0.7);
  if (a.has("--margin-mib")) o.fragmentation_margin = std::uint64_t(a.get_double("--margin-mib", 64)) * kMiB;
  std::string note;
  o.gpus = gpus_from_args(a, note);
  if (auto gs = flag(a, "--gpu-split", "-gs"); gs && !a.has("--auto-split"))
    for (const std::string& v : split_list(*gs)) o.gpu_split_gb.push_back(parse_number(v, "--gpu-split"));
  std::string what;
  const ModelShape m = model_from_args(a, o.layout, what);
  std::optional<ModelShape> draft;
  if (auto d = a.get("--draft")) {
    if (std::filesystem::is_directory(*d)) draft = shape_from_folder(*d, o.layout);
    else {
      draft = shape_from_config(preset_config(*d), a.get_double("--draft-bpw", 4.0), 6, o.layout);
      draft->name = *d;
    }
  }
  const ModelShape* dp = draft ? &*draft : nullptr;
  const Plan p = make_plan(m, o, dp);
  const std::int64_t mc = max_context(m, o, dp);
  const double mb = max_bpw(m, o, dp);
  if (a.has("--json")) std::printf("%s\n", plan_to_json(m, o, p, mc, mb, dp).c_str());
  else print_table(m, o, p, mc, mb, what, note, dp);
  return p.fits ? 0 : 3;
}

}  // namespace exl::cli

// The built-in table of NVIDIA GPUs (memory as the driver reports it, peak bandwidth, dense FP16
// tensor rate with FP32 accumulation, approximate) and user entries from a JSON file.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/plan.h"

namespace exl::plan {
namespace {

// name, memory MiB, bandwidth GB/s, FP16 TFLOPS (FP32 accumulate, dense)
const std::vector<GpuSpec>& table() {
  static const std::vector<GpuSpec> t = {
      // GeForce RTX 20
      {"GeForce RTX 2060", 6144, 336, 26}, {"GeForce RTX 2060 Super", 8192, 448, 29},
      {"GeForce RTX 2070", 8192, 448, 30}, {"GeForce RTX 2070 Super", 8192, 448, 36},
      {"GeForce RTX 2080", 8192, 448, 40}, {"GeForce RTX 2080 Super", 8192, 496, 45},
      {"GeForce RTX 2080 Ti", 11264, 616, 54}, {"Titan RTX", 24576, 672, 130},
      // GeForce RTX 30
      {"GeForce RTX 3050", 8192, 224, 18}, {"GeForce RTX 3060", 12288, 360, 25},
      {"GeForce RTX 3060 Ti", 8192, 448, 32}, {"GeForce RTX 3070", 8192, 448, 41},
      {"GeForce RTX 3070 Ti", 8192, 608, 44}, {"GeForce RTX 3080", 10240, 760, 60},
      {"GeForce RTX 3080 12GB", 12288, 912, 61}, {"GeForce RTX 3080 Ti", 12288, 912, 68},
      {"GeForce RTX 3090", 24576, 936, 71}, {"GeForce RTX 3090 Ti", 24576, 1008, 80},
      // GeForce RTX 40
      {"GeForce RTX 4060", 8192, 272, 30}, {"GeForce RTX 4060 Ti", 8192, 288, 44},
      {"GeForce RTX 4060 Ti 16GB", 16384, 288, 44}, {"GeForce RTX 4070", 12282, 504, 58},
      {"GeForce RTX 4070 Super", 12282, 504, 71}, {"GeForce RTX 4070 Ti", 12282, 504, 80},
      {"GeForce RTX 4070 Ti Super", 16376, 672, 88}, {"GeForce RTX 4080", 16376, 717, 97},
      {"GeForce RTX 4080 Super", 16376, 736, 104}, {"GeForce RTX 4090", 24564, 1008, 165},
      // GeForce RTX 50
      {"GeForce RTX 5060 Ti 16GB", 16311, 448, 47}, {"GeForce RTX 5070", 12227, 672, 62},
      {"GeForce RTX 5070 Ti", 16303, 896, 88}, {"GeForce RTX 5080", 16303, 960, 113},
      {"GeForce RTX 5090", 32607, 1792, 210},
      // RTX A-series (Ampere workstation)
      {"RTX A2000", 6138, 288, 32}, {"RTX A4000", 16376, 448, 77}, {"RTX A4500", 20470, 640, 95},
      {"RTX A5000", 24564, 768, 111}, {"RTX A5500", 24564, 768, 119}, {"RTX A6000", 49140, 768, 155},
      // RTX Ada workstation
      {"RTX 2000 Ada", 16380, 224, 48}, {"RTX 4000 Ada", 20475, 360, 107}, {"RTX 4500 Ada", 24570, 432, 159},
      {"RTX 5000 Ada", 32760, 576, 261}, {"RTX 6000 Ada", 49140, 960, 365},
      // Data centre
      {"T4", 15360, 320, 65}, {"A10", 23028, 600, 125}, {"L4", 23034, 300, 121},
      {"L40", 46068, 864, 181}, {"L40S", 46068, 864, 362},
      {"A100 40GB", 40960, 1555, 312}, {"A100 80GB", 81920, 2039, 312},
      {"H100 PCIe", 81559, 2039, 756}, {"H100 SXM", 81559, 3350, 989}, {"H200", 143771, 4800, 989},
  };
  return t;
}

std::string simplify(std::string s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c)) && c != '-' && c != '_') out += char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* p : {"nvidia", "geforce"})
    if (out.rfind(p, 0) == 0) out = out.substr(std::string(p).size());
  return out;
}

}  // namespace

const std::vector<GpuSpec>& builtin_gpus() { return table(); }

GpuSpec find_gpu(const std::string& name, const std::vector<GpuSpec>& extra) {
  const std::string want = simplify(name);
  std::vector<const GpuSpec*> all;
  for (const GpuSpec& g : extra) all.push_back(&g);
  for (const GpuSpec& g : table()) all.push_back(&g);
  for (const GpuSpec* g : all)
    if (simplify(g->name) == want) return *g;
  // "4090" -> "GeForce RTX 4090": a unique entry ending in the query, or the query without "rtx".
  std::vector<const GpuSpec*> hits;
  for (const GpuSpec* g : all) {
    const std::string s = simplify(g->name);
    if ((s.size() > want.size() && s.compare(s.size() - want.size(), want.size(), want) == 0) ||
        s == "rtx" + want || "rtx" + s == want)
      hits.push_back(g);
  }
  if (hits.size() == 1) return *hits[0];
  std::string close;
  for (const GpuSpec* g : all)
    if (!want.empty() && simplify(g->name).find(want.substr(0, std::min<std::size_t>(want.size(), 4))) != std::string::npos)
      close += (close.empty() ? "" : ", ") + g->name;
  throw Error(ErrorKind::invalid_argument,
              (hits.size() > 1 ? "ambiguous GPU name '" : "unknown GPU '") + name + "'" +
                  (close.empty() ? std::string(" (exl fit --list-gpus shows the table)") : "; did you mean: " + close),
              "", "--gpu");
}

GpuSpec gpu_spec_for_device(const std::string& name, std::uint64_t total_bytes, double driver_bandwidth_gbs) {
  GpuSpec g;
  try {
    g = find_gpu(name);
  } catch (const Error&) {
    // Not in the table: the driver's figures below.
  }
  g.name = name;
  g.memory_mib = total_bytes / kMiB;  // what this device really has
  if (g.bandwidth_gbs <= 0) g.bandwidth_gbs = driver_bandwidth_gbs;
  return g;
}

std::vector<GpuSpec> load_gpu_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, "cannot open the GPU list", path.string());
  std::stringstream ss;
  ss << f.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ss.str());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::format, std::string("not valid JSON: ") + e.what(), path.string());
  }
  if (j.is_object() && j.contains("gpus")) j = j["gpus"];
  if (!j.is_array()) throw Error(ErrorKind::format, "expected an array of GPUs (or {\"gpus\": [...]})", path.string());
  std::vector<GpuSpec> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    const std::string where = "gpus[" + std::to_string(i) + "]";
    auto num = [&](const char* key) -> std::optional<double> {
      if (!e.contains(key)) return std::nullopt;
      if (!e[key].is_number() || e[key].get<double>() <= 0)
        throw Error(ErrorKind::config, std::string("'") + key + "' must be a positive number", path.string(), where + "." + key);
      return e[key].get<double>();
    };
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || e["name"].get<std::string>().empty())
      throw Error(ErrorKind::config, "each GPU needs a non-empty string 'name'", path.string(), where + ".name");
    GpuSpec g;
    g.name = e["name"].get<std::string>();
    if (auto m = num("memory_mib")) g.memory_mib = std::uint64_t(*m);
    else if (auto gb = num("memory_gb")) g.memory_mib = std::uint64_t(*gb * 1024.0);
    else throw Error(ErrorKind::config, "missing 'memory_mib' or 'memory_gb'", path.string(), where + ".memory_mib");
    const auto bw = num("bandwidth_gbs");
    if (!bw) throw Error(ErrorKind::config, "missing 'bandwidth_gbs'", path.string(), where + ".bandwidth_gbs");
    g.bandwidth_gbs = *bw;
    g.fp16_tflops = num("fp16_tflops").value_or(0.0);
    g.context_mib = std::uint64_t(num("context_mib").value_or(0.0));
    out.push_back(g);
  }
  return out;
}

}  // namespace exl::plan

// The EXL3 conversion after the calibration states are made (convert_model with format exl3):
// the bit allocation of every linear, the quantization pass, and the output folder as
// ExLlamaV3's converter writes it (spec EXL3 §1): the shards, the source's other files, then
// quantization_config.json and config.json (with quantization_config) last, each atomically, so an
// interrupted conversion never leaves a folder that looks finished.
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/version.h"

namespace exl::convert_detail {
namespace fs = std::filesystem;

Exl3Codebook exl3_codebook_of(const std::string& name) {
  if (name == "mul1") return Exl3Codebook::mul1;
  if (name == "mcg") return Exl3Codebook::mcg;
  if (name == "3inst") return Exl3Codebook::inst3;
  throw Error(ErrorKind::invalid_argument, "unknown codebook '" + name + "' (mul1, mcg or 3inst)", {}, "-cb");
}

namespace {

int pad128(int v) { return (v + 127) / 128 * 128; }

// The linears of the decoder in module order with their allocation groups and priorities
// (spec §5.10: attention q/k/v and o at priority 2, the gated MLP's gate/up and down at 0), and the head.
std::vector<Exl3AllocItem> allocation_items(const Source& src) {
  std::vector<Exl3AllocItem> items;
  auto add = [&](const std::string& key, const char* proj, const char* group, int priority) {
    const auto [k, n] = src.dims(proj);
    Exl3AllocItem it;
    it.name = key + "." + proj;
    it.group = key + "." + group;
    it.numel = std::uint64_t(pad128(k)) * std::uint64_t(pad128(n));
    it.priority = priority;
    items.push_back(std::move(it));
  };
  for (int l = 0; l < src.layers; ++l) {
    const std::string a = "model.layers." + std::to_string(l) + ".self_attn";
    const std::string m = "model.layers." + std::to_string(l) + ".mlp";
    for (const char* p : {"q_proj", "k_proj", "v_proj"}) add(a, p, "qkv", 2);
    add(a, "o_proj", "o", 2);
    for (const char* p : {"gate_proj", "up_proj"}) add(m, p, "gu", 0);
    add(m, "down_proj", "d", 0);
  }
  Exl3AllocItem head;
  head.name = head.group = "lm_head";
  head.numel = std::uint64_t(pad128(src.shape.hidden)) * std::uint64_t(pad128(src.vocab));
  head.head = true;
  items.push_back(head);
  return items;
}

const char* torch_dtype(DType t) {
  switch (t) {
    case DType::f16: return "torch.float16";
    case DType::bf16: return "torch.bfloat16";
    case DType::f32: return "torch.float32";
    case DType::i16: return "torch.int16";
    case DType::i32: return "torch.int32";
    default: return "torch.uint8";
  }
}

}  // namespace

ConvertResult convert_model_exl3(const ConvertOptions& o, const Source& src, const fs::path& source_dir,
                                 BlockMath& math, Checkpoint* checkpoint, std::vector<std::vector<float>> states,
                                 int rows, const Progress& progress, std::stop_token stop) {
  auto say = [&](const std::string& stage, int step, int steps, const std::string& msg) {
    if (progress) progress(ConvertProgress{stage, step, steps, msg});
  };
  const std::vector<Exl3AllocItem> items = allocation_items(src);
  const Exl3Allocation alloc = exl3_allocate(items, o.bits, o.head_bits, o.hq);
  Exl3Plan plan;
  for (std::size_t i = 0; i + 1 < items.size(); ++i) plan.bits[items[i].name] = alloc.K[i];
  plan.head_bits = o.head_bits;
  plan.codebook = exl3_codebook_of(o.codebook);
  plan.out_scales = parse_out_scales(o.out_scales);
  plan.seed = o.seed;
  ConvertResult res;
  {
    std::map<int, int> per_bits;
    for (std::size_t i = 0; i + 1 < items.size(); ++i) ++per_bits[alloc.K[i]];
    std::string summary;
    for (const auto& [k, count] : per_bits)
      summary += (summary.empty() ? "" : ", ") + std::to_string(count) + " linears at " + std::to_string(k) + " bits";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f bpw allocated: ", alloc.bits);
    say("optimize", 1, 1, buf + summary);
    for (std::size_t i = 0; i + 1 < items.size(); ++i)
      res.strategy.push_back(items[i].name + ": " + std::to_string(alloc.K[i]) + " bits");
  }

  QuantizeOutput q = quantize_exl3(src, math, std::move(states), plan, progress, stop, checkpoint);
  std::uint64_t numel = 0;
  for (std::size_t i = 0; i + 1 < items.size(); ++i) numel += items[i].numel;
  set_result_figures(res, q, numel);
  check_stop(stop);

  say("write", 0, 1, "writing " + o.output_dir.string());
  res.files = write_shards_and_copies(o.output_dir, source_dir, q.tensors, o.max_shard_bytes, "model");
  nlohmann::ordered_json cfg = read_source_config(source_dir);
  nlohmann::ordered_json qc = {{"quant_method", "exl3"},
                               {"version", "exl-studio " + build_info().version},
                               {"bits", alloc.bits},
                               {"head_bits", o.head_bits},
                               {"calibration", {{"rows", rows}, {"cols", o.length}}},
                               {"out_scales", o.out_scales},
                               {"codebook", o.codebook}};
  if (cfg.contains("quantization_config") && cfg["quantization_config"].value("quant_method", "") != "exl3")
    qc["original_quantization_config"] = cfg["quantization_config"];
  cfg["quantization_config"] = qc;
  // quantization_config.json: the same object and every module's stored tensors (spec §1.3).
  nlohmann::ordered_json storage = nlohmann::ordered_json::object();
  for (const TensorData& t : q.tensors) {
    const std::string module = t.name.substr(0, t.name.rfind('.'));
    nlohmann::ordered_json& m = storage[module];
    m["stored_tensors"][t.name] = {{"shape", t.shape}, {"n_bytes", t.bytes.size()}, {"dtype", torch_dtype(t.dtype)}};
    const std::string leaf = t.name.substr(t.name.rfind('.') + 1);
    if (leaf == "trellis") {
      m["quant_format"] = "exl3";
      m["bits_per_weight"] = t.shape.back() / 16;
    } else if (leaf == "mul1") {
      m["mul1_multiplier"] = 0x83DCD12Du;
    } else if (leaf == "mcg") {
      m["mcg_multiplier"] = 0xCBAC1FEDu;
    }
  }
  nlohmann::ordered_json qfile = qc;
  qfile["tensor_storage"] = storage;
  write_file_atomic(o.output_dir / "quantization_config.json", qfile.dump(4));
  res.files.push_back(o.output_dir / "quantization_config.json");
  write_file_atomic(o.output_dir / "config.json", cfg.dump(4));
  res.files.push_back(o.output_dir / "config.json");
  if (checkpoint) checkpoint->remove();
  char buf[128];
  std::snprintf(buf, sizeof buf, "EXL3 %.2f bpw (trellis bits of the decoder), head %s", alloc.bits,
                o.head_bits == 16 ? "FP16" : (std::to_string(o.head_bits) + " bits").c_str());
  say("done", 1, 1, buf);
  return res;
}

}  // namespace exl::convert_detail

// exl inspect / tokenize / detokenize
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "exl/error.h"
#include "exl/model.h"
#include "exl/tokenizer.h"

namespace exl::cli {
namespace {

using nlohmann::json;

// "8b 5%, 4b 95%" style description of one linear layer's bit widths.
json linear_json(const LinearTensors& l) {
  json j;
  j["in"] = l.in_features;
  j["out"] = l.out_features;
  if (l.kind == LinearKind::dense) {
    j["kind"] = "dense";
    j["dtype"] = dtype_name(l.weight->dtype);
    j["bpw"] = 8.0 * double(dtype_size(l.weight->dtype));
    return j;
  }
  if (l.kind == LinearKind::exl3) {
    const Exl3Weight& w = l.exl3->view;
    j["kind"] = "exl3";
    j["bits"] = json::object({{w.bits2 % 2 ? std::to_string(w.bits2 / 2) + ".5" : std::to_string(w.bits2 / 2), 1.0}});
    j["codebook"] = exl3_codebook_name(w.codebook);
    j["padded"] = {w.k, w.n};
    j["bpw"] = l.exl3->bits_per_weight();
    j["storage_bpw"] = double(l.exl3->storage_bits()) / (double(l.in_features) * double(l.out_features));
    return j;
  }
  j["kind"] = "exl2";
  std::map<int, int> rows_per_bits;
  for (const Exl2Group& g : exl2_groups(l.exl2->view)) rows_per_bits[g.bits] += g.rows;
  json bits = json::object();
  for (auto it = rows_per_bits.rbegin(); it != rows_per_bits.rend(); ++it)
    bits[std::to_string(it->first)] = double(it->second) / double(l.in_features);
  j["bits"] = bits;
  j["groups"] = l.exl2->view.groups;
  j["bpw"] = l.exl2->bits_per_weight();
  return j;
}

std::string bits_text(const json& lj) {
  if (lj["kind"] == "dense") return std::string(lj["dtype"]);
  std::ostringstream s;
  bool first = true;
  for (auto& [b, frac] : lj["bits"].items()) {
    s << (first ? "" : " ") << b << "b:" << int(double(frac) * 100.0 + 0.5) << "%";
    first = false;
  }
  char buf[64];
  if (lj["kind"] == "exl3")
    std::snprintf(buf, sizeof buf, " %s (%.2f bpw stored)", std::string(lj["codebook"]).c_str(), double(lj["storage_bpw"]));
  else
    std::snprintf(buf, sizeof buf, " (%.2f bpw)", double(lj["bpw"]));
  return s.str() + buf;
}

}  // namespace

int cmd_inspect(const Args& a) {
  a.check_known({"--model", "--json"});
  auto model = Model::open(a.require("--model"));
  const ModelConfig& c = model->config();
  const ModelSummary s = model->summary();
  json j;
  j["path"] = c.dir.string();
  j["architecture"] = c.architecture;
  j["model_type"] = c.model_type;
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["num_layers"] = c.num_layers;
  j["num_heads"] = c.num_heads;
  j["num_kv_heads"] = c.num_kv_heads;
  j["head_dim"] = c.head_dim;
  j["intermediate_size"] = c.intermediate_size;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rope_theta"] = c.rope.theta;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["parameters"] = s.parameters;
  j["quantized"] = s.quantized;
  j["average_bpw"] = s.average_bpw;
  j["head_bpw"] = s.head_bpw;
  j["bytes_on_disk"] = s.bytes_on_disk;
  if (c.quantization) {
    j["quantization"] = {{"method", c.quantization->method}, {"bits", c.quantization->bits},
                         {"head_bits", c.quantization->head_bits_value}, {"version", c.quantization->version}};
    if (!c.quantization->codebook.empty()) j["quantization"]["codebook"] = c.quantization->codebook;
  }
  if (c.moe.active())
    j["moe"] = {{"num_experts", c.moe.num_experts}, {"experts_per_token", c.moe.top_k},
                {"expert_intermediate_size", c.moe.expert_intermediate}, {"norm_topk_prob", c.moe.norm_topk_prob}};
  json layers = json::array();
  const char* names[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  for (const LayerTensors& l : model->layers()) {
    json lj = json::object();
    const LinearTensors* lin[] = {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down};
    for (int i = 0; i < (l.sparse() ? 4 : 7); ++i) lj[names[i]] = linear_json(*lin[i]);
    if (l.sparse()) {  // a mixture-of-experts layer: the router and every expert's MLP
      lj["router"] = linear_json(l.router);
      json experts = json::array();
      for (const ExpertTensors& x : l.experts)
        experts.push_back({{"gate_proj", linear_json(x.gate)}, {"up_proj", linear_json(x.up)}, {"down_proj", linear_json(x.down)}});
      lj["experts"] = experts;
    }
    layers.push_back(lj);
  }
  j["layers"] = layers;
  j["head"] = linear_json(model->head());
  if (a.has("--json")) {
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("%s (%s) at %s\n", c.architecture.c_str(), c.model_type.c_str(), c.dir.c_str());
  std::printf("  layers %d, hidden %d, heads %d (kv %d, head_dim %d), intermediate %d, vocab %d\n", c.num_layers,
              c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim, c.intermediate_size, c.vocab_size);
  if (c.moe.active()) {
    int sparse = 0;
    for (int i = 0; i < c.num_layers; ++i) sparse += c.moe.is_sparse(i) ? 1 : 0;
    std::printf("  mixture of experts: %d experts of intermediate %d, top-%d per token%s, on %d of %d layers\n",
                c.moe.num_experts, c.moe.expert_intermediate, c.moe.top_k,
                c.moe.norm_topk_prob ? " (weights renormalised)" : "", sparse, c.num_layers);
  }
  std::printf("  parameters %lld, on disk %.2f MB\n", (long long)s.parameters, double(s.bytes_on_disk) / 1e6);
  if (s.quantized && c.quantization && c.quantization->method == "exl3")
    std::printf("  EXL3 (%s): %.2f bpw nominal, head %g bits; stored %.3f bpw over the decoder layers, head %.2f bpw\n",
                c.quantization->codebook.empty() ? "codebook per tensor" : c.quantization->codebook.c_str(),
                c.quantization->bits, c.quantization->head_bits_value, s.average_bpw, s.head_bpw);
  else if (s.quantized)
    std::printf("  %s: average %.3f bpw over the decoder layers, head %.2f bpw\n", s.format == "exl2" ? "EXL2" : s.format == "exl3" ? "EXL3" : "EXL2+EXL3",
                s.average_bpw, s.head_bpw);
  else
    std::printf("  unquantized (%s)\n", dtype_name(model->embedding().dtype));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::printf("  layer %zu:", i);
    for (const char* n : names)
      if (layers[i].contains(n)) std::printf(" %s %s;", n, bits_text(layers[i][n]).c_str());
    if (layers[i].contains("experts")) {
      const json& e0 = layers[i]["experts"][0];
      std::printf(" router %s; %zu experts, expert 0: gate_proj %s; up_proj %s; down_proj %s;",
                  bits_text(layers[i]["router"]).c_str(), layers[i]["experts"].size(), bits_text(e0["gate_proj"]).c_str(),
                  bits_text(e0["up_proj"]).c_str(), bits_text(e0["down_proj"]).c_str());
    }
    std::printf("\n");
  }
  std::printf("  head: %s\n", bits_text(j["head"]).c_str());
  return 0;
}

int cmd_tokenize(const Args& a) {
  a.check_known({"--model", "--special", "--bos", "--file"});
  auto tok = Tokenizer::from_dir(a.require("--model"));
  std::string text;
  if (auto f = a.get("--file")) {
    std::ifstream in(*f, std::ios::binary);
    if (!in) throw Error(ErrorKind::io, "cannot read file", *f);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  } else {
    for (std::size_t i = 0; i < a.positional().size(); ++i) text += (i ? " " : "") + a.positional()[i];
  }
  const auto ids = tok->encode(text, a.has("--special"), a.has("--bos"));
  std::printf("%s\n", json(ids).dump().c_str());
  return 0;
}

int cmd_detokenize(const Args& a) {
  a.check_known({"--model", "--skip-special"});
  auto tok = Tokenizer::from_dir(a.require("--model"));
  std::vector<std::int32_t> ids;
  for (const auto& p : a.positional())
    for (int id : parse_ids(p)) {
      if (id >= tok->vocab_size())
        throw Error(ErrorKind::invalid_argument, "token id " + std::to_string(id) + " outside the vocabulary");
      ids.push_back(id);
    }
  std::printf("%s\n", tok->decode(ids, a.has("--skip-special")).c_str());
  return 0;
}

}  // namespace exl::cli

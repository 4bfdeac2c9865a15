// GGUF -> our Llama-family model: hyperparameters into config.json, tensor names into HF names,
// llama.cpp's Q/K row permutation undone, and the folder written (fp16/bf16 safetensors).
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl/kernels/half.h"
#include "gguf_internal.h"

namespace exl {
namespace {

using json = nlohmann::ordered_json;

struct ArchInfo {
  const char* hf_arch;
  const char* model_type;
  bool permute_qk;
};

ArchInfo arch_info(const GgufFile& f, const std::string& arch) {
  if (arch == "llama") return {"LlamaForCausalLM", "llama", true};
  if (arch == "qwen2") return {"Qwen2ForCausalLM", "qwen2", false};
  throw Error(ErrorKind::unsupported, f.display_name() + ": GGUF architecture '" + arch +
                                          "' is not supported (llama and qwen2 are)", f.display_name(),
              "general.architecture");
}

std::int64_t need_int(const GgufFile& f, const std::string& key) {
  auto v = f.get_int(key);
  if (!v || *v <= 0)
    throw Error(ErrorKind::format, f.display_name() + ": metadata '" + key + "' is missing or not positive",
                f.display_name(), key);
  return *v;
}

// An f32 metadata value as the decimal a person wrote (9.999999747e-06 -> 1e-05).
std::optional<double> get_clean_number(const GgufFile& f, const std::string& key) {
  auto v = f.get_number(key);
  if (!v || f.find(key)->type != GgufValueType::f32) return v;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), float(*v));
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

const GgufTensor& need_tensor(const GgufFile& f, const std::string& name) {
  const GgufTensor* t = f.find_tensor(name);
  if (!t) throw Error(ErrorKind::missing_tensor, f.display_name() + ": tensor '" + name + "' is missing", f.display_name(), name);
  return *t;
}

}  // namespace

GgufImportPlan plan_gguf_import(const GgufFile& f) {
  GgufImportPlan p;
  const auto arch = f.get_string("general.architecture");
  if (!arch) throw Error(ErrorKind::format, f.display_name() + ": metadata 'general.architecture' is missing", f.display_name(), "general.architecture");
  p.architecture = *arch;
  const ArchInfo ai = arch_info(f, *arch);
  const std::string a = *arch + ".";
  const auto layers = need_int(f, a + "block_count");
  const auto hidden = need_int(f, a + "embedding_length");
  const auto ffn = need_int(f, a + "feed_forward_length");
  const auto heads = need_int(f, a + "attention.head_count");
  const auto kv_heads = f.get_int(a + "attention.head_count_kv").value_or(heads);
  if (kv_heads <= 0 || heads % kv_heads != 0)
    throw Error(ErrorKind::format, f.display_name() + ": head_count_kv must divide head_count", f.display_name(), a + "attention.head_count_kv");
  const auto head_dim = f.get_int(a + "attention.key_length").value_or(hidden / heads);
  const GgufTensor& embd = need_tensor(f, "token_embd.weight");
  const auto tokens = f.get_string_array("tokenizer.ggml.tokens");
  const std::int64_t vocab = embd.dims.size() == 2 ? std::int64_t(embd.dims[1]) : std::int64_t(tokens.size());
  if (embd.dims.size() != 2 || std::int64_t(embd.dims[0]) != hidden)
    throw Error(ErrorKind::shape, f.display_name() + ": token_embd.weight is not [vocab, hidden]", f.display_name(), "token_embd.weight");

  json cfg;
  cfg["architectures"] = json::array({ai.hf_arch});
  cfg["model_type"] = ai.model_type;
  cfg["vocab_size"] = vocab;
  cfg["hidden_size"] = hidden;
  cfg["intermediate_size"] = ffn;
  cfg["num_hidden_layers"] = layers;
  cfg["num_attention_heads"] = heads;
  cfg["num_key_value_heads"] = kv_heads;
  if (head_dim != hidden / heads) cfg["head_dim"] = head_dim;
  cfg["max_position_embeddings"] = f.get_int(a + "context_length").value_or(2048);
  cfg["rms_norm_eps"] = get_clean_number(f, a + "attention.layer_norm_rms_epsilon").value_or(1e-5);
  cfg["rope_theta"] = get_clean_number(f, a + "rope.freq_base").value_or(10000.0);
  if (auto st = f.get_string(a + "rope.scaling.type"); st && *st != "none") {
    json rs;
    rs["rope_type"] = *st;
    rs["type"] = *st;
    rs["factor"] = get_clean_number(f, a + "rope.scaling.factor").value_or(1.0);
    if (auto o = f.get_int(a + "rope.scaling.original_context_length")) rs["original_max_position_embeddings"] = *o;
    cfg["rope_scaling"] = rs;
  }
  const bool tied = f.find_tensor("output.weight") == nullptr;
  cfg["tie_word_embeddings"] = tied;
  const bool qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  if (ai.model_type == std::string("llama")) cfg["attention_bias"] = qkv_bias;
  const auto ids = gguf_special_ids(f);
  if (ids.bos) cfg["bos_token_id"] = *ids.bos;
  if (ids.eos) cfg["eos_token_id"] = *ids.eos;
  if (ids.pad) cfg["pad_token_id"] = *ids.pad;
  cfg["torch_dtype"] = "float16";
  p.config_json = cfg.dump(2);

  json gen;
  if (ids.bos) gen["bos_token_id"] = *ids.bos;
  json eos = json::array();
  if (ids.eos) eos.push_back(*ids.eos);
  if (ids.eot && (!ids.eos || *ids.eot != *ids.eos)) eos.push_back(*ids.eot);
  if (eos.size() == 1) gen["eos_token_id"] = eos[0];
  else if (!eos.empty()) gen["eos_token_id"] = eos;
  if (ids.pad) gen["pad_token_id"] = *ids.pad;
  p.generation_config_json = gen.dump(2);

  gguf_build_tokenizer(f, p.tokenizer_json, p.tokenizer_config_json);

  auto add = [&](const std::string& gname, const std::string& hname, bool required, int unpermute) {
    const GgufTensor* t = required ? &need_tensor(f, gname) : f.find_tensor(gname);
    if (!t) return;
    p.tensors.push_back({hname, t, t->shape(), unpermute});
  };
  add("token_embd.weight", "model.embed_tokens.weight", true, 0);
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".";
    const std::string h = "model.layers." + std::to_string(l) + ".";
    add(g + "attn_norm.weight", h + "input_layernorm.weight", true, 0);
    const int pq = ai.permute_qk ? int(heads) : 0, pk = ai.permute_qk ? int(kv_heads) : 0;
    add(g + "attn_q.weight", h + "self_attn.q_proj.weight", true, pq);
    add(g + "attn_q.bias", h + "self_attn.q_proj.bias", false, pq);
    add(g + "attn_k.weight", h + "self_attn.k_proj.weight", true, pk);
    add(g + "attn_k.bias", h + "self_attn.k_proj.bias", false, pk);
    add(g + "attn_v.weight", h + "self_attn.v_proj.weight", true, 0);
    add(g + "attn_v.bias", h + "self_attn.v_proj.bias", false, 0);
    add(g + "attn_output.weight", h + "self_attn.o_proj.weight", true, 0);
    add(g + "ffn_norm.weight", h + "post_attention_layernorm.weight", true, 0);
    add(g + "ffn_gate.weight", h + "mlp.gate_proj.weight", true, 0);
    add(g + "ffn_up.weight", h + "mlp.up_proj.weight", true, 0);
    add(g + "ffn_down.weight", h + "mlp.down_proj.weight", true, 0);
  }
  add("output_norm.weight", "model.norm.weight", true, 0);
  if (!tied) add("output.weight", "lm_head.weight", true, 0);
  return p;
}

std::vector<float> load_import_tensor(const GgufImportTensor& t) {
  std::vector<float> v = gguf_dequantize(*t.src);
  if (t.unpermute_heads <= 0) return v;
  // llama.cpp stores row (h, j, i) for HF row (h, i, j), i in {0,1}, j < head_dim/2.
  const std::int64_t rows = t.shape[0];
  const std::int64_t cols = t.shape.size() > 1 ? t.shape[1] : 1;
  const std::int64_t per_head = rows / t.unpermute_heads;
  if (per_head * t.unpermute_heads != rows || per_head % 2 != 0)
    throw Error(ErrorKind::shape, "tensor '" + t.src->name + "' rows do not split into heads", "", t.src->name);
  const std::int64_t half = per_head / 2;
  std::vector<float> out(v.size());
  for (std::int64_t h = 0; h < t.unpermute_heads; ++h)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < half; ++j) {
        const std::int64_t dst = h * per_head + i * half + j, src = h * per_head + 2 * j + i;
        std::copy_n(v.data() + src * cols, cols, out.data() + dst * cols);
      }
  return out;
}

void import_gguf(const std::filesystem::path& gguf_path, const std::filesystem::path& out_dir, ImportDType dtype,
                 const std::function<void(std::size_t, std::size_t, const std::string&)>& progress) {
  auto f = GgufFile::open(gguf_path);
  GgufImportPlan p = plan_gguf_import(*f);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create " + out_dir.string() + ": " + ec.message(), out_dir.string());

  json header;
  std::uint64_t off = 0;
  for (auto& t : p.tensors) {
    const std::uint64_t n = std::uint64_t(t.src->numel()) * 2;
    header[t.hf_name] = {{"dtype", dtype == ImportDType::f16 ? "F16" : "BF16"}, {"shape", t.shape}, {"data_offsets", {off, off + n}}};
    off += n;
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string hs = header.dump();
  while (hs.size() % 8) hs.push_back(' ');
  const auto st_path = out_dir / "model.safetensors";
  const auto tmp = out_dir / "model.safetensors.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, "cannot write " + tmp.string(), tmp.string());
    const std::uint64_t hl = hs.size();
    out.write(reinterpret_cast<const char*>(&hl), 8);
    out.write(hs.data(), std::streamsize(hs.size()));
    std::vector<std::uint16_t> buf;
    for (std::size_t k = 0; k < p.tensors.size(); ++k) {
      auto& t = p.tensors[k];
      if (progress) progress(k, p.tensors.size(), t.hf_name);
      const std::vector<float> v = load_import_tensor(t);
      buf.resize(v.size());
      for (std::size_t i = 0; i < v.size(); ++i)
        buf[i] = dtype == ImportDType::f16 ? float_to_half(v[i]) : float_to_bf16(v[i]);
      out.write(reinterpret_cast<const char*>(buf.data()), std::streamsize(buf.size() * 2));
    }
    if (progress) progress(p.tensors.size(), p.tensors.size(), "");
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw Error(ErrorKind::io, "writing " + tmp.string() + " failed (disk full?)", tmp.string());
    }
  }
  std::filesystem::rename(tmp, st_path, ec);
  if (ec) throw Error(ErrorKind::io, "cannot rename to " + st_path.string() + ": " + ec.message(), st_path.string());
  auto write_text = [&](const char* name, const std::string& text) {
    const auto path = out_dir / name;
    std::ofstream o(path, std::ios::binary | std::ios::trunc);
    o << text;
    if (!o) throw Error(ErrorKind::io, "cannot write " + path.string(), path.string());
  };
  write_text("config.json", p.config_json);
  write_text("generation_config.json", p.generation_config_json);
  write_text("tokenizer.json", p.tokenizer_json);
  write_text("tokenizer_config.json", p.tokenizer_config_json);
}

}  // namespace exl

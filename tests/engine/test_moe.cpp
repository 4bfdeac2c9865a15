// Mixture-of-experts models on the CPU backend against HF transformers (tests/data/moe, made by
// make_refs.py): Mixtral (8 experts, top-2), Qwen3-MoE (16 experts, top-4, norm_topk_prob, a
// dense layer in mlp_only_layers) and Qwen3-MoE with 24 experts, top-8, without norm_topk_prob.
// Every position's logits within relative L2 1e-4 (fp32 cache) and 1e-3 (fp16 cache) of
// transformers', the long prompt again in chunks of 7; the experts chosen for every token of every
// sparse layer equal transformers' (in order) wherever no two of the top k + 1 probabilities are
// within 1e-5 (fp32 cache; 2e-4 with the fp16 cache); greedy continuations equal up to the first near-tie. Also: routing itself on
// constructed logits, transformers 5's fused expert tensors, the config and loader errors. The
// planner and exl synth on MoE models: test_moe_plan.cpp.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "exl/backend.h"
#include "exl/error.h"
#include "exl/generator.h"
#include "exl/kernels/moe.h"
#include "exl/model.h"
#include "exl/moe_routing.h"
#include "exl/safetensors_writer.h"
#include "family_checks.h"

using namespace exl;
using namespace exl::test;

namespace {

std::string moe_dir(const std::string& name) { return std::string(EXL_MOE_TEST_DATA) + "/" + name; }

FamilyRun open_moe(const std::string& name, int context, CacheType cache) {
  return open_model_in(moe_dir(name), make_cpu_backend({}), {context, cache});
}

// transformers' routing of one prompt: per sparse layer, per token the chosen experts and the
// smallest gap between consecutive probabilities among the top k + 1.
struct RefRouting {
  int layer = 0;
  std::vector<std::vector<int>> experts;
  std::vector<double> min_gap;
};

std::map<std::string, std::vector<RefRouting>> read_routing(const std::string& name) {
  std::ifstream js(moe_dir(name) + "/refs.json");
  const nlohmann::json j = nlohmann::json::parse(js);
  std::map<std::string, std::vector<RefRouting>> out;
  for (const auto& p : j["prompts"])
    for (const auto& r : p["routing"])
      out[p["name"]].push_back({r["layer"], r["experts"].get<std::vector<std::vector<int>>>(),
                                r["min_gap"].get<std::vector<double>>()});
  return out;
}

// Experts per layer, appended step after step: [layer] -> tokens x top_k.
struct RoutingLog {
  std::map<int, std::vector<std::vector<int>>> layers;
  MoeRoutingObserver observer() {
    return [this](int layer, int tokens, int k, const std::int32_t* e) {
      for (int t = 0; t < tokens; ++t) layers[layer].emplace_back(e + std::size_t(t) * std::size_t(k), e + std::size_t(t + 1) * std::size_t(k));
    };
  }
};

// Where the top k + 1 probabilities come closer than this, the choice is a near-tie (the fp32 cache's
// logits are within ~1e-6 of transformers'; the fp16 cache's within ~1e-3, so it takes a wider margin).
void check_routing(const std::string& what, const std::vector<RefRouting>& ref, const RoutingLog& ours, int num_layers,
                   double near_tie) {
  int sparse = 0;
  for (int l = 0; l < num_layers; ++l) sparse += ours.layers.count(l) ? 1 : 0;
  CHECK_EQ(sparse, int(ref.size()));
  int compared = 0, skipped = 0;
  for (const RefRouting& r : ref) {
    const auto it = ours.layers.find(r.layer);
    CHECK_MSG(it != ours.layers.end(), what << ": layer " << r.layer << " was not routed");
    if (it == ours.layers.end()) continue;
    CHECK_EQ(it->second.size(), r.experts.size());
    for (std::size_t t = 0; t < std::min(it->second.size(), r.experts.size()); ++t) {
      if (r.min_gap[t] < near_tie) {
        ++skipped;
        continue;
      }
      ++compared;
      CHECK_MSG(it->second[t] == r.experts[t], what << " layer " << r.layer << " token " << t << ": experts differ");
    }
  }
  CHECK(compared >= 2 * skipped);  // most tokens are compared
  if (options().verbose) std::printf("  %s: routing of %d tokens equal, %d near-ties skipped\n", what.c_str(), compared, skipped);
}

void check_moe_model(const std::string& name) {
  const auto refs = read_refs_in(moe_dir(name));
  const auto routing = read_routing(name);
  CHECK(!refs.empty());
  for (const FamilyPrompt& p : refs) {
    for (CacheType cache : {CacheType::fp32, CacheType::fp16}) {
      const double rel_max = cache == CacheType::fp32 ? 1e-4 : 1e-3;
      const std::string what = name + (cache == CacheType::fp32 ? " fp32 cache" : " fp16 cache");
      FamilyRun r = open_moe(name, p.context, cache);
      std::vector<float> whole, chunked;
      RoutingLog log;
      {
        ScopedMoeRoutingObserver watch(log.observer());
        prefill(*r.backend, p.ids, 2048, LogitsWanted::all, whole);
      }
      compare_family_logits(what, p, whole, rel_max);
      check_routing(what + " " + p.name, routing.at(p.name), log, r.model->config().num_layers,
                    cache == CacheType::fp32 ? 1e-5 : 2e-4);
      // Chunks of 7: the same logits, and the same experts as one chunk.
      r.backend->truncate_cache(0);
      RoutingLog log7;
      {
        ScopedMoeRoutingObserver watch(log7.observer());
        prefill(*r.backend, p.ids, 7, LogitsWanted::all, chunked);
      }
      compare_family_logits(what + " chunks of 7", p, chunked, rel_max);
      CHECK_MSG(relative_l2(whole, chunked) < 1e-5, what << " " << p.name << ": chunked vs one chunk " << relative_l2(whole, chunked));
      int differ = 0;
      for (const auto& [layer, tokens] : log.layers) differ += tokens == log7.layers[layer] ? 0 : 1;
      CHECK_EQ(differ, 0);
    }
    // Greedy, one decode step at a time through the cache.
    check_greedy_steps(name, p, *open_moe(name, p.context, CacheType::fp16).backend);
  }
}

// The folder's tensors rewritten: one left out, one reshaped to [2, 2], and config.json edited.
void write_variant(const TempDir& tmp, const std::string& model, const std::string& drop, const std::string& reshape,
                   const nlohmann::json& config_patch = nlohmann::json::object()) {
  const TensorStore src = TensorStore::open_dir(moe_dir(model));
  std::vector<TensorData> out;
  for (const std::string& name : src.names()) {
    if (name == drop) continue;
    const TensorInfo& t = src.get(name);
    TensorData d{name, t.dtype, t.shape, {}};
    if (name == reshape) d.shape = {2, 2};
    d.bytes.assign(t.data, t.data + std::size_t(d.numel()) * dtype_size(t.dtype));
    out.push_back(std::move(d));
  }
  write_safetensors(tmp / "model.safetensors", out);
  std::ifstream in(moe_dir(model) + "/config.json");
  nlohmann::json cfg = nlohmann::json::parse(in);
  cfg.merge_patch(config_patch);
  std::ofstream(tmp / "config.json") << cfg.dump(1);
}

std::string base_config(const std::string& type, const std::string& arch, const std::string& extra) {
  return R"({"architectures": [")" + arch + R"("], "model_type": ")" + type +
         R"(", "vocab_size": 256, "hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128)" + extra + "}";
}

void expect_config_error(const std::string& text, const std::string& field) {
  try {
    (void)parse_model_config(text, "m/config.json");
    CHECK_MSG(false, "no error for " << field);
  } catch (const Error& e) {
    CHECK_MSG(e.kind() == ErrorKind::config && e.item() == field && e.file() == "m/config.json",
              field << ": " << e.what());
  }
}

}  // namespace

EXL_TEST(moe, mixtral) { check_moe_model("mixtral"); }
EXL_TEST(moe, qwen3_moe) { check_moe_model("qwen3_moe"); }
EXL_TEST(moe, qwen3_moe_top8) { check_moe_model("qwen3_moe_top8"); }

// Routing on logits whose answer is known: probabilities against a double-precision softmax,
// descending order, ties to the lower index, renormalisation to a sum of 1.
EXL_TEST(moe, routing) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  for (const auto& [E, K] : {std::pair{8, 2}, std::pair{16, 4}, std::pair{128, 8}, std::pair{5, 5}}) {
    const int T = 9;
    std::vector<float> logits(std::size_t(T) * E);
    for (float& x : logits) x = nd(rng);
    for (bool renorm : {false, true}) {
      std::vector<std::int32_t> ex(std::size_t(T) * K);
      std::vector<float> w(ex.size());
      moe_route_ref(logits.data(), T, E, K, renorm, ex.data(), w.data());
      for (int t = 0; t < T; ++t) {
        const float* row = logits.data() + std::size_t(t) * E;
        double z = 0;
        for (int e = 0; e < E; ++e) z += std::exp(double(row[e]));
        std::vector<int> order(static_cast<std::size_t>(E), 0);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
        double chosen = 0;
        for (int j = 0; j < K; ++j) chosen += std::exp(double(row[order[std::size_t(j)]])) / z;
        double sum = 0;
        for (int j = 0; j < K; ++j) {
          const int e = ex[std::size_t(t) * K + j];
          CHECK_EQ(e, order[std::size_t(j)]);
          const double p = std::exp(double(row[e])) / z / (renorm ? chosen : 1.0);
          CHECK_NEAR(w[std::size_t(t) * K + j], p, 1e-6 + 1e-5 * p);
          sum += w[std::size_t(t) * K + j];
        }
        if (renorm) CHECK_NEAR(sum, 1.0, 1e-5);
      }
    }
  }
  // Exact ties: the lower index first, as torch.topk on the CPU.
  const float tied[6] = {0.5f, 2.0f, 2.0f, -1.0f, 2.0f, 0.5f};
  std::int32_t ex[4];
  float w[4];
  moe_route_ref(tied, 1, 6, 4, true, ex, w);
  CHECK_EQ(ex[0], 1);
  CHECK_EQ(ex[1], 2);
  CHECK_EQ(ex[2], 4);
  CHECK_EQ(ex[3], 0);
  CHECK_NEAR(w[0], w[2], 1e-7);
}

// transformers 5's fused expert tensors (mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj
// [E, H, I]) load as views of the same weights: the logits equal the Hub layout's bit for bit.
EXL_TEST(moe, fused_expert_tensors) {
  const auto refs = read_refs_in(moe_dir("qwen3_moe_top8"));
  const FamilyPrompt& p = refs.back();
  std::vector<float> hub, fused;
  FamilyRun a = open_moe("qwen3_moe_top8", p.context, CacheType::fp32);
  prefill(*a.backend, p.ids, 2048, LogitsWanted::all, hub);
  FamilyRun b = open_moe("qwen3_moe_fused", p.context, CacheType::fp32);
  CHECK(b.model->tensors().contains("model.layers.0.mlp.experts.gate_up_proj"));
  prefill(*b.backend, p.ids, 2048, LogitsWanted::all, fused);
  CHECK(hub == fused);
  compare_family_logits("qwen3_moe_fused", p, fused, 1e-4);
  // A fused tensor of the wrong shape is refused naming it.
  TempDir tmp("exl_moe_fused");
  write_variant(tmp, "qwen3_moe_fused", "", "model.layers.1.mlp.experts.down_proj");
  try {
    (void)Model::open(tmp.path());
    CHECK_MSG(false, "no error for a misshapen fused expert tensor");
  } catch (const Error& e) {
    CHECK_MSG(e.kind() == ErrorKind::shape && e.item() == "model.layers.1.mlp.experts.down_proj", e.what());
  }
}

// What each config describes: experts, top-k, renormalisation, which layers are sparse.
EXL_TEST(moe, descriptions) {
  const auto mx = Model::open(moe_dir("mixtral"));
  const MoeDescription& m = mx->config().moe;
  CHECK_EQ(m.num_experts, 8);
  CHECK_EQ(m.top_k, 2);
  CHECK_EQ(m.expert_intermediate, 48);
  CHECK(m.norm_topk_prob);
  for (int i = 0; i < 3; ++i) CHECK(mx->layers()[std::size_t(i)].sparse());
  const auto q = Model::open(moe_dir("qwen3_moe"));
  const ModelConfig& qc = q->config();
  CHECK(qc.family.qk_norm);
  CHECK_EQ(qc.moe.num_experts, 16);  // written by transformers 5 as num_local_experts
  CHECK_EQ(qc.moe.top_k, 4);
  CHECK_EQ(qc.moe.expert_intermediate, 32);
  CHECK(qc.moe.norm_topk_prob);
  CHECK(q->layers()[0].sparse() && !q->layers()[1].sparse() && q->layers()[2].sparse());
  CHECK_EQ(q->layers()[1].gate.out_features, 96);
  CHECK(!Model::open(moe_dir("qwen3_moe_top8"))->config().moe.norm_topk_prob);
  // Older field names and the sparse-step pattern.
  const ModelConfig c = parse_model_config(
      base_config("qwen3_moe", "Qwen3MoeForCausalLM",
                  R"(, "num_experts": 32, "num_experts_per_tok": 8, "moe_intermediate_size": 64,
                      "decoder_sparse_step": 2, "mlp_only_layers": [3])"),
      "config.json");
  CHECK_EQ(c.moe.num_experts, 32);
  CHECK(!c.moe.norm_topk_prob);
  for (int i = 0; i < 6; ++i) CHECK_EQ(c.moe.is_sparse(i), i == 1 || i == 5);
  const ModelConfig dm = parse_model_config(base_config("mixtral", "MixtralForCausalLM", ""), "config.json");
  CHECK_EQ(dm.moe.num_experts, 8);
  CHECK_EQ(dm.moe.top_k, 2);
}

EXL_TEST(moe, bad_config_fields) {
  expect_config_error(base_config("mixtral", "MixtralForCausalLM", R"(, "num_local_experts": 4, "num_experts_per_tok": 5)"),
                      "num_experts_per_tok");
  expect_config_error(base_config("mixtral", "MixtralForCausalLM", R"(, "num_local_experts": 0)"), "num_local_experts");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "num_experts": -2)"), "num_experts");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "num_experts_per_tok": "eight")"),
                      "num_experts_per_tok");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "mlp_only_layers": [1, 6])"), "mlp_only_layers");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "mlp_only_layers": 3)"), "mlp_only_layers");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "decoder_sparse_step": 0)"),
                      "decoder_sparse_step");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "moe_intermediate_size": 0)"),
                      "moe_intermediate_size");
  expect_config_error(base_config("qwen3_moe", "Qwen3MoeForCausalLM", R"(, "norm_topk_prob": 1)"), "norm_topk_prob");
  try {
    (void)parse_model_config(base_config("mixtral", "MixtralForCausalLM", R"(, "hidden_act": "gelu")"), "m/config.json");
    CHECK_MSG(false, "no error for Mixtral with GELU experts");
  } catch (const Error& e) {
    CHECK_MSG(e.kind() == ErrorKind::unsupported && e.item() == "hidden_act", e.what());
  }
  // Unknown architectures list the MoE families among the supported ones.
  try {
    (void)parse_model_config(base_config("qwen2_moe", "Qwen2MoeForCausalLM", ""), "m/config.json");
    CHECK_MSG(false, "no error for an unsupported architecture");
  } catch (const Error& e) {
    const std::string w = e.what();
    CHECK_MSG(w.find("MixtralForCausalLM") != std::string::npos && w.find("Qwen3MoeForCausalLM") != std::string::npos, w);
  }
}

// An expert's tensor missing, misshapen, the router missing, or more experts in the checkpoint than
// config.json declares: refused naming the file and the tensor.
EXL_TEST(moe, bad_expert_tensors) {
  struct Case {
    const char* model;
    std::string drop, reshape;
    ErrorKind kind;
    std::string tensor;
    nlohmann::json patch = nlohmann::json::object();
  };
  const Case cases[] = {
      {"mixtral", "model.layers.1.block_sparse_moe.experts.5.w3.weight", "", ErrorKind::missing_tensor,
       "model.layers.1.block_sparse_moe.experts.5.w3.weight"},
      {"mixtral", "", "model.layers.2.block_sparse_moe.experts.7.w2.weight", ErrorKind::shape,
       "model.layers.2.block_sparse_moe.experts.7.w2.weight"},
      {"mixtral", "model.layers.0.block_sparse_moe.gate.weight", "", ErrorKind::missing_tensor,
       "model.layers.0.block_sparse_moe.gate.weight"},
      {"qwen3_moe", "model.layers.2.mlp.experts.15.gate_proj.weight", "", ErrorKind::missing_tensor,
       "model.layers.2.mlp.experts.15.gate_proj.weight"},
      {"qwen3_moe", "", "model.layers.0.mlp.experts.3.down_proj.weight", ErrorKind::shape,
       "model.layers.0.mlp.experts.3.down_proj.weight"},
      {"qwen3_moe", "", "model.layers.0.mlp.gate.weight", ErrorKind::shape, "model.layers.0.mlp.gate.weight"},
      // The dense layer (mlp_only_layers) still needs its MLP (named as every dense linear is: its prefix).
      {"qwen3_moe", "model.layers.1.mlp.up_proj.weight", "", ErrorKind::missing_tensor, "model.layers.1.mlp.up_proj"},
      // 16 experts on disk, 12 in config.json.
      {"qwen3_moe", "", "", ErrorKind::shape, "model.layers.0.mlp.experts.12.gate_proj.weight", {{"num_local_experts", 12}}},
  };
  for (const Case& c : cases) {
    TempDir tmp("exl_bad_moe");
    write_variant(tmp, c.model, c.drop, c.reshape, c.patch);
    try {
      (void)Model::open(tmp.path());
      CHECK_MSG(false, c.model << ": no error for " << c.tensor);
    } catch (const Error& e) {
      CHECK_MSG(e.kind() == c.kind, c.model << ": " << e.what());
      const bool dense_mlp = c.tensor.find(".experts.") == std::string::npos && c.tensor.find(".gate.") == std::string::npos;
      CHECK_MSG(e.item() == c.tensor && (dense_mlp || std::string(e.what()).find("model.safetensors") != std::string::npos),
                c.model << ": the error names '" << e.item() << "' in '" << e.file() << "': " << e.what());
    }
  }
}

// Speculative decoding through an MoE target (its verification steps route several tokens at once):
// n-gram drafts and an MoE draft model give plain greedy's tokens.
EXL_TEST(moe, speculative_decoding_equals_plain_greedy) {
  const auto refs = read_refs_in(moe_dir("mixtral"));
  const FamilyPrompt& p = refs.front();
  FamilyRun target = open_moe("mixtral", 128, CacheType::fp32);
  GenerateOptions o;
  o.max_new_tokens = 24;
  o.ignore_eos = true;
  o.sampler.greedy = true;
  const GenerateResult plain = generate(*target.backend, nullptr, p.ids, o);
  CHECK_EQ(int(plain.ids.size()), 24);
  o.ngram = true;
  o.draft_tokens = 4;
  const GenerateResult ngram = generate(*target.backend, nullptr, p.ids, o);
  CHECK(ngram.ids == plain.ids);
  CHECK(ngram.drafted_tokens > 0);
  FamilyRun draft = open_moe("qwen3_moe_top8", 128, CacheType::fp32);
  o.ngram = false;
  o.draft = draft.backend.get();
  o.draft_tokens = 3;
  const GenerateResult drafted = generate(*target.backend, nullptr, p.ids, o);
  CHECK(drafted.ids == plain.ids);
  CHECK(drafted.drafted_tokens > 0);
}

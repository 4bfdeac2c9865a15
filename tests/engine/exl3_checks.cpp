#include "exl3_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "exl/generator.h"
#include "exl/model.h"
#include "exl/safetensors_writer.h"
#include "exl/tensor_store.h"
#include "model_checks.h"
#include "refs.h"

namespace exl::test {
namespace {

nlohmann::json read_data_json(const std::string& relative) {
  std::ifstream in(exl3_data_dir() / relative);
  if (!in) fail(__FILE__, __LINE__, "cannot read tests/data/exl3/" + relative);
  return nlohmann::json::parse(in);
}

// ExLlamaV3's logits, stored as fp16 blocks (refs/logits_exl3_<model>.json describes them).
std::map<std::string, LogitBlock> read_exl3_logits(const std::string& model) {
  const std::string name = "logits_exl3_" + model;
  std::ifstream bin(exl3_data_dir() / "refs" / (name + ".bin"), std::ios::binary);
  return read_blocks(read_data_json("refs/" + name + ".json"), bin, name + ".bin", true);
}

struct Loaded {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Backend> backend;
};

Loaded load(const std::string& device, const std::string& name, CacheType cache, int ctx) {
  Loaded l;
  l.model = Model::open(exl3_model_dir(name));
  l.backend = make_backend(device, BackendOptions{});
  l.backend->load(l.model);
  l.backend->allocate_cache({ctx, cache});
  return l;
}

}  // namespace

// EXL_EXL3_DATA overrides the source tree's folder (a GPU machine's copy of the tree lies elsewhere).
std::filesystem::path exl3_data_dir() {
  if (const char* d = std::getenv("EXL_EXL3_DATA"); d && *d) return std::filesystem::path(d);
  return std::filesystem::path(EXL_EXL3_TEST_DATA);
}

std::vector<std::string> exl3_model_names() {
  if (!std::filesystem::exists(exl3_data_dir() / "refs" / "manifest.json"))
    skip("no ExLlamaV3 reference models in tests/data/exl3 (made by bench/exl3-device.sh on a GPU machine)");
  std::vector<std::string> out;
  const nlohmann::json manifest = read_data_json("refs/manifest.json");  // outlives the loop (C++20 range-for)
  for (const auto& [name, info] : manifest["models"].items()) out.push_back(name);
  return out;
}

std::filesystem::path exl3_model_dir(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<TempDir>> made;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = made.find(name); it != made.end()) return it->second->path();
  const auto src = exl3_data_dir() / "models" / name;
  if (!std::filesystem::is_directory(src)) fail(__FILE__, __LINE__, "no reference model " + src.string());
  const auto hf = fixture("models/hf/ref-s");
  auto dir = std::make_unique<TempDir>("exl3_" + name);
  for (const auto& e : std::filesystem::directory_iterator(src)) std::filesystem::copy_file(e.path(), dir->path() / e.path().filename());
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) std::filesystem::copy_file(hf / f, dir->path() / f);
  const auto info = read_data_json("refs/manifest.json")["models"][name];
  const std::string shard = info["embedding_shard"];
  if (!std::filesystem::exists(dir->path() / shard)) {
    const TensorStore store = TensorStore::open_dir(hf);
    const TensorInfo& e = store.get("model.embed_tokens.weight");
    write_safetensors(dir->path() / shard, {make_tensor(e.name, e.dtype, e.shape, e.data, e.nbytes)});
  }
  const auto path = dir->path();
  made[name] = std::move(dir);
  return path;
}

void check_exl3_logits(const std::string& device, const std::string& model, CacheType cache) {
  auto refs = read_exl3_logits(model);
  Loaded l = load(device, model, cache, 512);
  for (const Prompt& p : read_prompts()) {
    const LogitBlock& ref = refs.at(p.name);
    l.backend->truncate_cache(0);
    std::vector<float> ours;
    prefill(*l.backend, p.ids, 2048, LogitsWanted::all, ours);
    check_logit_block(model, p.name, ref, ours);
  }
}

void check_exl3_greedy(const std::string& device, const std::string& model) {
  Loaded l = load(device, model, CacheType::fp16, 512);
  check_greedy_continuations(model, read_data_json("refs/greedy_exl3.json")["models"][model], *l.backend);
}

void check_exl3_ppl(const std::string& device, const std::string& model) {
  const auto ids_all = read_json("refs/ppl_ids.json");
  const auto refs = read_data_json("refs/ppl_exl3.json")["models"][model];
  Loaded l = load(device, model, CacheType::fp16, 512);
  // On the CPU (ctest), where the EXL3 path takes about a second per window, the first window of
  // each text against the reference's chunk_mean_nll[0]; on the GPU all four against its ppl.
  const int windows = device == "cpu" ? 1 : 4;
  for (const std::string ds : {"wiki", "tiny"}) {
    std::vector<std::int32_t> ids = ids_all[ds].get<std::vector<std::int32_t>>();
    CHECK_EQ(ids.size(), std::size_t(4 * 512));
    if (windows == 4) {
      check_perplexity(model, *l.backend, ids, ds, refs[ds]["ppl"]);
      continue;
    }
    const auto nll = refs[ds]["chunk_mean_nll"].get<std::vector<double>>();
    CHECK_EQ(nll.size(), 4u);
    double sum = 0;
    for (int w = 0; w < windows; ++w) sum += nll[std::size_t(w)];
    ids.resize(std::size_t(windows) * 512);
    check_perplexity(model, *l.backend, ids, ds + " (first window)", std::exp(sum / windows));
  }
}

}  // namespace exl::test

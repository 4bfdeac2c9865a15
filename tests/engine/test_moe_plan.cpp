// The planner and exl synth on mixture-of-experts models: every expert resident, top_k of them
// read per decoded token (from a folder's headers and from a config), the qwen3-30b-a3b and
// mixtral-8x7b presets' real sizes, and tiny MoE presets written by exl synth (FP16, EXL2, EXL3)
// loading with every expert and running on the CPU.
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "exl/backend.h"
#include "exl/generator.h"
#include "exl/model.h"
#include "exl/plan.h"
#include "exl/synth.h"
#include "exl_test.h"
#include "family_checks.h"

namespace fs = std::filesystem;
using namespace exl;

namespace {

std::string moe_dir(const std::string& name) { return std::string(EXL_MOE_TEST_DATA) + "/" + name; }

// A folder's layers as the planner should count them: every tensor on the device (16-bit, or
// the EXL2 layout the engine uploads) and, of the experts' bytes, top_k / num_experts read.
void check_folder_counts(const fs::path& dir) {
  const plan::ModelShape s = plan::shape_from_folder(dir, plan::Layout::engine);
  const auto model = Model::open(dir);
  const ModelConfig& c = model->config();
  const TensorStore& st = model->tensors();
  for (int i = 0; i < c.num_layers; ++i) {
    const plan::ModuleBytes& m = s.layers[std::size_t(i)];
    std::uint64_t experts = 0;
    int expert_tensors = 0;
    for (const std::string& n : st.names())
      if (n.rfind("model.layers." + std::to_string(i) + ".", 0) == 0 && n.find(".experts.") != std::string::npos) {
        ++expert_tensors;
        experts += st.get(n).nbytes;
      }
    CHECK_EQ(expert_tensors > 0, c.moe.is_sparse(i));
    if (!c.moe.is_sparse(i)) {
      CHECK_EQ(m.read, m.device);
      continue;
    }
    // Read per token: the device bytes less (1 - k / E) of the experts' (their on-device share is
    // what the planner books; for 16-bit tensors exactly their file bytes).
    const double active = double(c.moe.top_k) / double(c.moe.num_experts);
    CHECK(m.read < m.device);
    const double expert_device = double(m.device - m.read) / (1.0 - active);
    CHECK_MSG(expert_device <= double(m.device) && expert_device >= 0.9 * double(experts), dir << " layer " << i);
  }
}

}  // namespace

// The planner: every expert resident, top_k of them read per decoded token, from a folder's
// headers (counted here from the tensor store) and from a config ("what if").
EXL_TEST(moe_plan, planner_counts_experts) {
  for (const char* name : {"mixtral", "qwen3_moe"}) {
    check_folder_counts(moe_dir(name));
    const plan::ModelShape s = plan::shape_from_folder(moe_dir(name), plan::Layout::engine);
    const auto model = Model::open(moe_dir(name));
    const ModelConfig& c = model->config();
    const TensorStore& st = model->tensors();
    for (int i = 0; i < c.num_layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      std::uint64_t all = 0, experts = 0;
      for (const std::string& n : st.names()) {
        if (n.rfind(p, 0) != 0) continue;
        const std::uint64_t b = std::uint64_t(st.get(n).numel()) * 2;  // 16-bit on the device
        all += b;
        if (n.find(".experts.") != std::string::npos) experts += b;
      }
      const plan::ModuleBytes& m = s.layers[std::size_t(i)];
      CHECK_EQ(m.device, all);
      CHECK_EQ(experts > 0, c.moe.is_sparse(i));
      const std::uint64_t read = all - experts + experts / std::uint64_t(c.moe.num_experts) * std::uint64_t(c.moe.top_k);
      CHECK_EQ(m.read, read);
    }
  }
  // Qwen3-30B-A3B: 30.5 B weights of which 3.3 B are active per token (the model card's figures).
  const ModelConfig q = plan::preset_config("qwen3-30b-a3b");
  CHECK_EQ(q.moe.num_experts, 128);
  CHECK_EQ(q.moe.top_k, 8);
  const plan::ModelShape s = plan::shape_from_config(q, 4.0, 6, plan::Layout::engine);
  std::uint64_t device = 0, read = 0;
  for (const plan::ModuleBytes& m : s.layers) {
    device += m.device;
    read += m.read;
  }
  // At about 4 bits a weight: the decoder's 29.9 B, and its 2.7 B active (3.3 B less the embedding and head).
  const double all_weights = double(device) * 8.0 / 4.0, active = double(read) * 8.0 / 4.0;
  CHECK_MSG(all_weights > 28.5e9 && all_weights < 31.0e9, all_weights);
  CHECK_MSG(active > 2.5e9 && active < 2.9e9, active);
  CHECK(plan::decode_bytes_per_token(s, plan::PlanOptions{}, 0) < device / 5);
  const ModelConfig mx = plan::preset_config("mixtral-8x7b");
  CHECK_EQ(mx.moe.num_experts, 8);
  const plan::ModelShape ms = plan::shape_from_config(mx, 4.0, 6, plan::Layout::engine);
  const double mx_weights = double(ms.layers[0].device) * 8.0 / 4.0 * 32.0;
  CHECK_MSG(mx_weights > 45.0e9 && mx_weights < 47.5e9, mx_weights);  // 46.4 B (46.7 B with the embedding and head)
}

// Tiny MoE presets written by exl synth (FP16, EXL2 experts, EXL3 experts; the router stays 16-bit)
// load with every expert and run on the CPU; the planner counts the synthesized folder's experts.
EXL_TEST(moe_plan, tiny_moe_models_synthesize_load_and_run) {
  for (const char* preset : {"test-tiny-qwen3-moe", "test-tiny-mixtral"}) {
    for (const char* form : {"fp16", "exl2", "exl3"}) {
      const fs::path dir = fs::temp_directory_path() /
                           (std::string("exl_test_moe_synth_") + preset + "_" + form + "_" + std::to_string(::getpid()));
      fs::remove_all(dir);
      synth::SynthOptions o;
      o.preset = preset;
      o.output_dir = dir;
      o.fp16 = std::string(form) == "fp16";
      if (std::string(form) == "exl3") o.format = synth::SynthFormat::exl3;
      synth::synth_model(o);
      auto model = Model::open(dir);
      const ModelConfig& c = model->config();
      const ModelConfig want = plan::preset_config(preset);
      CHECK_EQ(c.moe.num_experts, want.moe.num_experts);
      CHECK_EQ(c.moe.top_k, want.moe.top_k);
      CHECK_EQ(c.moe.expert_intermediate, want.moe.expert_intermediate);
      CHECK_EQ(c.moe.norm_topk_prob, want.moe.norm_topk_prob);
      const LayerTensors& l = model->layers()[1];
      CHECK_EQ(int(l.experts.size()), want.moe.num_experts);
      CHECK(l.router.kind == LinearKind::dense);
      const LinearKind kind = o.fp16 ? LinearKind::dense : std::string(form) == "exl2" ? LinearKind::exl2 : LinearKind::exl3;
      CHECK(l.experts.back().down.kind == kind);
      CHECK_EQ(model->summary().quantized, !o.fp16);
      check_folder_counts(dir);
      exl::test::check_synth_prefill(model, c.vocab_size, 24, std::string(preset) + " " + form);
      fs::remove_all(dir);
    }
  }
}

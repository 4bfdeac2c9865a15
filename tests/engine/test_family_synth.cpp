// exl synth and the planner on the model families: the presets qwen3-8b, gemma3-12b and
// phi-4-mini parse into their family descriptions with their real shapes; tiny family presets
// written by exl synth (FP16 and EXL2) load with the family's tensors and run on the CPU; the
// planner counts the families' extra norm weights.
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

EXL_TEST(family_synth, presets_have_the_real_shapes) {
  const ModelConfig q = plan::preset_config("qwen3-8b");
  CHECK(q.architecture == "Qwen3ForCausalLM" && q.family.qk_norm && !q.tie_word_embeddings);
  CHECK(q.num_layers == 36 && q.hidden_size == 4096 && q.head_dim == 128 && q.num_kv_heads == 8 &&
        q.intermediate_size == 12288 && q.vocab_size == 151936);
  const ModelConfig g = plan::preset_config("gemma3-12b");
  CHECK(g.architecture == "Gemma3ForCausalLM" && g.family.sandwich_norms && g.family.qk_norm);
  CHECK(g.num_layers == 48 && g.hidden_size == 3840 && g.head_dim == 256 && g.num_heads == 16 && g.num_kv_heads == 8 &&
        g.intermediate_size == 15360 && g.vocab_size == 262208);
  int local = 0;
  for (const LayerAttention& a : g.layer_attention) local += a.window == 1024;
  CHECK_EQ(local, 40);  // 5 of every 6
  const ModelConfig p = plan::preset_config("phi-4-mini");
  CHECK(p.architecture == "Phi3ForCausalLM" && p.family.fused_qkv && p.tie_word_embeddings);
  CHECK(p.num_layers == 32 && p.hidden_size == 3072 && p.head_dim == 128 && p.num_heads == 24 && p.num_kv_heads == 8 &&
        p.intermediate_size == 8192 && p.vocab_size == 200064);
  CHECK_EQ(p.rope.rotary_dim, 96);
  CHECK(p.rope.scaling == RopeScaling::longrope);
}

// Per layer, the planner adds Gemma's two more hidden-size norms and the q/k norms of head_dim.
EXL_TEST(family_synth, planner_counts_family_norms) {
  for (const char* name : {"gemma3-12b", "qwen3-8b"}) {
    const ModelConfig c = plan::preset_config(name);
    ModelConfig llama_like = c;
    llama_like.family = FamilyDescription{};
    const plan::ModelShape a = plan::shape_from_config(c, 4.0, 6, plan::Layout::engine);
    const plan::ModelShape b = plan::shape_from_config(llama_like, 4.0, 6, plan::Layout::engine);
    const std::uint64_t extra = (c.family.sandwich_norms ? 2ull * c.hidden_size * 2 : 0) + 2ull * c.head_dim * 2;
    CHECK_EQ(a.layers[0].device - b.layers[0].device, extra);
  }
}

EXL_TEST(family_synth, tiny_family_models_load_and_run) {
  for (const char* preset : {"test-tiny-qwen3", "test-tiny-gemma3", "test-tiny-phi3"}) {
    for (bool fp16 : {true, false}) {
      const fs::path dir = fs::temp_directory_path() /
                           (std::string("exl_test_family_synth_") + preset + (fp16 ? "_fp16_" : "_exl2_") + std::to_string(::getpid()));
      fs::remove_all(dir);
      synth::SynthOptions o;
      o.preset = preset;
      o.output_dir = dir;
      o.fp16 = fp16;
      synth::synth_model(o);
      auto model = Model::open(dir);
      const ModelConfig& c = model->config();
      const ModelConfig want = plan::preset_config(preset);
      CHECK(c.model_type == want.model_type);
      CHECK(c.family.qk_norm == want.family.qk_norm && c.family.sandwich_norms == want.family.sandwich_norms &&
            c.family.activation == want.family.activation);
      CHECK_NEAR(c.family.attention_scale, want.family.attention_scale, 1e-7);
      CHECK_EQ(c.rope.rotary_dim, want.rope.rotary_dim);
      CHECK(c.rope.scaling == want.rope.scaling);
      CHECK_EQ(c.rope_local.theta, want.rope_local.theta);
      for (int i = 0; i < c.num_layers; ++i)
        CHECK_EQ(c.layer_attention[std::size_t(i)].window, want.layer_attention[std::size_t(i)].window);
      CHECK_EQ(model->layers()[0].q_norm != nullptr, want.family.qk_norm);
      CHECK_EQ(model->layers()[0].post_feedforward_norm != nullptr, want.family.sandwich_norms);
      CHECK_EQ(model->summary().quantized, !fp16);
      exl::test::check_synth_prefill(model, c.vocab_size, 40, std::string(preset));
      fs::remove_all(dir);
    }
  }
}

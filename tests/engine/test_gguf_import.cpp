// GGUF import of tiny llama models (tests/data/gguf/tiny_llama_*.gguf): config mapping, the Q/K
// row un-permutation (the fixture's q/k rows hold their HF row index), tokenizer rebuilt from
// gpt2 and SentencePiece metadata, and the written folder readable by our loaders.
#include <string>

#include "exl/error.h"
#include "exl/gguf.h"
#include "exl/kernels/linear.h"
#include "exl/model_config.h"
#include "exl/tensor_store.h"
#include "exl/tokenizer.h"
#include "exl_test.h"
#include "test_format_support.h"

namespace {
const std::string kDir = EXL_GGUF_TEST_DATA;
}

EXL_TEST(gguf_import, config_and_tensor_mapping) {
  const auto f = exl::GgufFile::open(kDir + "/tiny_llama_gpt2.gguf");
  const exl::GgufImportPlan p = exl::plan_gguf_import(*f);
  const exl::ModelConfig c = exl::parse_model_config(p.config_json, "config.json");
  CHECK_EQ(c.model_type, std::string("llama"));
  CHECK_EQ(c.num_layers, 2);
  CHECK_EQ(c.hidden_size, 16);
  CHECK_EQ(c.num_heads, 4);
  CHECK_EQ(c.num_kv_heads, 2);
  CHECK_EQ(c.intermediate_size, 32);
  CHECK_EQ(c.max_position_embeddings, 256);
  CHECK_EQ(c.rms_norm_eps, 1e-6f);
  CHECK(c.tie_word_embeddings);
  CHECK_EQ(c.vocab_size, 33);
  CHECK_EQ(p.tensors.size(), std::size_t(2 + 2 * 9));
  CHECK_EQ(p.tensors.front().hf_name, std::string("model.embed_tokens.weight"));
  CHECK_EQ(p.tensors.back().hf_name, std::string("model.norm.weight"));
  for (const auto& t : p.tensors) {
    if (t.hf_name.find("q_proj") == std::string::npos && t.hf_name.find("k_proj") == std::string::npos) continue;
    CHECK(t.unpermute_heads > 0);
    const auto v = exl::load_import_tensor(t);
    for (std::int64_t r = 0; r < t.shape[0]; ++r)
      for (std::int64_t col = 0; col < t.shape[1]; ++col)
        CHECK_EQ(v[std::size_t(r * t.shape[1] + col)], float(r));
  }
}

EXL_TEST(gguf_import, gpt2_tokenizer_and_chat_template) {
  const auto f = exl::GgufFile::open(kDir + "/tiny_llama_gpt2.gguf");
  const exl::GgufImportPlan p = exl::plan_gguf_import(*f);
  const auto tok = exl::Tokenizer::from_json(p.tokenizer_json, p.tokenizer_config_json, p.config_json,
                                             p.generation_config_json);
  const auto ids = tok->encode("<|im_start|>ab ab", true);
  CHECK_EQ(ids.size(), std::size_t(3));
  CHECK_EQ(ids[0], 1);
  CHECK_EQ(tok->piece(ids[1]), std::string("ab"));
  CHECK_EQ(tok->piece(ids[2]), std::string("\xC4\xA0" "ab"));
  CHECK_EQ(tok->decode(ids, true), std::string("ab ab"));
  CHECK(tok->is_special(2));
  const std::vector<std::int32_t> eos = tok->eos_ids();
  CHECK_EQ(eos.size(), std::size_t(1));
  CHECK_EQ(eos[0], 2);
  CHECK(tok->chat_template().find("<|im_start|>") != std::string::npos);
}

EXL_TEST(gguf_import, sentencepiece_tokenizer) {
  const auto f = exl::GgufFile::open(kDir + "/tiny_llama_spm.gguf");
  const exl::GgufImportPlan p = exl::plan_gguf_import(*f);
  const auto tok = exl::Tokenizer::from_json(p.tokenizer_json, p.tokenizer_config_json, p.config_json,
                                             p.generation_config_json);
  const auto ids = tok->encode("ab ab", false, true);
  CHECK(ids.size() >= 3);
  CHECK_EQ(ids[0], 1);  // BOS: llama tokenizers add it by default
  CHECK_EQ(tok->decode(ids, true), std::string("ab ab"));
  // A character outside the vocabulary falls back to its UTF-8 bytes.
  const auto z = tok->encode("z", false, false);
  CHECK_EQ(tok->decode(z, true), std::string("z"));
}

EXL_TEST(gguf_import, writes_a_loadable_folder) {
  exl::test::TempDir dir;
  exl::import_gguf(kDir + "/tiny_llama_gpt2.gguf", dir.path(), exl::ImportDType::f16);
  const auto store = exl::TensorStore::open_dir(dir.path());
  CHECK_EQ(store.names().size(), std::size_t(20));
  const auto& q = store.get("model.layers.1.self_attn.q_proj.weight");
  CHECK(q.dtype == exl::DType::f16);
  CHECK_EQ(q.shape[0], 16);
  const exl::ModelConfig c = exl::read_model_config(dir.path());
  CHECK_EQ(c.num_layers, 2);
  (void)exl::Tokenizer::from_dir(dir.path());
}

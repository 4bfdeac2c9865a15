// The real fixture models (HF fp16 and ExLlamaV2-converted EXL2) open, describe the dimensions the
// fixtures README lists, and every EXL2 linear loads and validates at the folder's bit rate.
#include <cmath>
#include <set>
#include <string>

#include "exl/error.h"
#include "exl/exl2_layer.h"
#include "exl/model_config.h"
#include "exl/tensor_store.h"
#include "exl_test.h"

namespace {

struct Dims {
  int hidden, layers, heads, kv_heads, head_dim, intermediate;
};
constexpr Dims ref_s{384, 6, 6, 2, 64, 1024};
constexpr Dims ref_xs{256, 2, 4, 1, 64, 768};

void check_config(const exl::ModelConfig& c, const Dims& d) {
  CHECK_EQ(c.architecture, std::string("LlamaForCausalLM"));
  CHECK_EQ(c.model_type, std::string("llama"));
  CHECK_EQ(c.vocab_size, 8192);
  CHECK_EQ(c.hidden_size, d.hidden);
  CHECK_EQ(c.num_layers, d.layers);
  CHECK_EQ(c.num_heads, d.heads);
  CHECK_EQ(c.num_kv_heads, d.kv_heads);
  CHECK_EQ(c.head_dim, d.head_dim);
  CHECK_EQ(c.intermediate_size, d.intermediate);
  CHECK_EQ(c.max_position_embeddings, 2048);
  CHECK_NEAR(c.rms_norm_eps, 1e-5, 1e-12);
  CHECK_NEAR(c.rope.theta, 10000.0, 0.0);
  CHECK(c.rope.scaling == exl::RopeScaling::none);
  CHECK_EQ(c.rope.head_dim, d.head_dim);
  CHECK(!c.attention_bias && !c.o_bias && !c.mlp_bias);
  CHECK(c.bos_token_id && *c.bos_token_id == 8184);
  CHECK(c.pad_token_id && *c.pad_token_id == 8188);
  CHECK_EQ(c.eos_token_ids.size(), std::size_t(1));
  CHECK_EQ(c.eos_token_ids[0], 8185);
}

struct LinearSpec {
  std::string prefix;
  int in, out;
};

std::vector<LinearSpec> decoder_linears(const exl::ModelConfig& c) {
  std::vector<LinearSpec> out;
  const int q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string a = "model.layers." + std::to_string(i) + ".self_attn.";
    const std::string m = "model.layers." + std::to_string(i) + ".mlp.";
    out.push_back({a + "q_proj", c.hidden_size, q});
    out.push_back({a + "k_proj", c.hidden_size, kv});
    out.push_back({a + "v_proj", c.hidden_size, kv});
    out.push_back({a + "o_proj", q, c.hidden_size});
    out.push_back({m + "gate_proj", c.hidden_size, c.intermediate_size});
    out.push_back({m + "up_proj", c.hidden_size, c.intermediate_size});
    out.push_back({m + "down_proj", c.intermediate_size, c.hidden_size});
  }
  return out;
}

void check_exl2_layer(const exl::LinearTensors& l, const LinearSpec& s) {
  CHECK(l.kind == exl::LinearKind::exl2);
  CHECK(l.exl2 != nullptr);
  const auto& t = *l.exl2;
  CHECK_EQ(t.view.k, s.in);
  CHECK_EQ(t.view.n, s.out);
  CHECK_EQ(t.view.n_pad, (s.out + 31) / 32 * 32);
  CHECK(t.view.q_perm == t.q_perm.data());
  CHECK(t.view.groups >= 1);
  for (int i = 0; i < s.in; ++i) CHECK_EQ(t.q_perm[t.q_invperm[i]], i);
  // Packed rows: sum over groups of rows_g * bits_g / 32, read back from q_groups.
  int rows = 0;
  for (int g = 0; g < t.view.groups; ++g) {
    const int start = t.view.q_groups[2 * g + 1];
    const int next = g + 1 < t.view.groups ? t.view.q_groups[2 * g + 3] : t.view.q_rows;
    rows += (next - start) * 32 / t.view.q_groups[2 * g];
  }
  CHECK_EQ(rows, s.in);
}

// Opens one EXL2 folder, checks counts and dtypes, loads every linear and the decoder bpw.
void check_exl2_model(const std::string& name, const Dims& d, std::size_t tensors, double target_bpw,
                      int head_bits) {
  const auto dir = exl::test::fixture("models/exl2/" + name);
  const auto c = exl::read_model_config(dir);
  check_config(c, d);
  CHECK(c.quantization.has_value());
  CHECK_EQ(c.quantization->method, std::string("exl2"));
  CHECK_EQ(c.quantization->version, std::string("0.2.7"));
  CHECK_NEAR(c.quantization->bits, target_bpw, 0.0);
  CHECK_EQ(c.quantization->head_bits, head_bits);

  const auto store = exl::TensorStore::open_dir(dir);
  CHECK_EQ(store.files().size(), std::size_t(1));
  CHECK_EQ(store.names().size(), tensors);
  const auto& embed = store.get("model.embed_tokens.weight");
  CHECK(embed.dtype == exl::DType::f16);
  CHECK(embed.shape == (std::vector<std::int64_t>{8192, d.hidden}));
  CHECK(store.get("model.norm.weight").dtype == exl::DType::f16);
  for (const auto& n : store.names()) {
    const auto& t = store.get(n);
    CHECK(t.dtype == exl::DType::f16 || t.dtype == exl::DType::i32 || t.dtype == exl::DType::i16);
    CHECK_EQ(std::size_t(t.numel()) * exl::dtype_size(t.dtype), t.nbytes);
  }

  std::uint64_t bits = 0, weights = 0;
  for (const auto& s : decoder_linears(c)) {
    const auto l = exl::load_linear(store, s.prefix, s.in, s.out);
    check_exl2_layer(l, s);
    bits += l.exl2->storage_bits();
    weights += std::uint64_t(s.in) * l.exl2->view.n_pad;
    CHECK(l.exl2->bits_per_weight() >= 2.0 && l.exl2->bits_per_weight() <= 8.0);
  }
  CHECK_NEAR(double(bits) / double(weights), target_bpw, 0.05);

  // The head is quantized separately, even for the tied ref-xs (spec §3.2).
  const auto head = exl::load_linear(store, "lm_head", d.hidden, 8192);
  check_exl2_layer(head, {"lm_head", d.hidden, 8192});
  CHECK(head.exl2->bits_per_weight() >= head_bits - 0.01 && head.exl2->bits_per_weight() <= 8.0);
}

}  // namespace

EXL_TEST(format, exl2_ref_s_3_0bpw) { check_exl2_model("ref-s-3.0bpw", ref_s, 229, 3.0, 6); }
EXL_TEST(format, exl2_ref_s_4_0bpw) { check_exl2_model("ref-s-4.0bpw", ref_s, 229, 4.0, 6); }
EXL_TEST(format, exl2_ref_s_6_0bpw) { check_exl2_model("ref-s-6.0bpw", ref_s, 229, 6.0, 8); }
EXL_TEST(format, exl2_ref_xs_4_0bpw) {
  check_exl2_model("ref-xs-4.0bpw", ref_xs, 81, 4.0, 6);
  const auto c = exl::read_model_config(exl::test::fixture("models/exl2/ref-xs-4.0bpw"));
  CHECK(c.tie_word_embeddings);
}

EXL_TEST(format, hf_ref_s_sharded_with_index) {
  const auto dir = exl::test::fixture("models/hf/ref-s");
  const auto c = exl::read_model_config(dir);
  check_config(c, ref_s);
  CHECK(!c.quantization.has_value());
  CHECK(!c.tie_word_embeddings);
  const auto store = exl::TensorStore::open_dir(dir);
  CHECK_EQ(store.files().size(), std::size_t(3));
  CHECK_EQ(store.names().size(), std::size_t(57));
  CHECK_EQ(store.total_bytes(), std::size_t(31467264));  // index metadata total_size
  std::set<std::string> files;
  for (const auto& n : store.names()) {
    CHECK(store.get(n).dtype == exl::DType::f16);
    files.insert(store.get(n).file);
  }
  CHECK_EQ(files.size(), std::size_t(3));
  CHECK(store.get("lm_head.weight").file.find("model-00003-of-00003.safetensors") != std::string::npos);
  for (const auto& s : decoder_linears(c)) {
    const auto l = exl::load_linear(store, s.prefix, s.in, s.out);
    CHECK(l.kind == exl::LinearKind::dense);
    CHECK(l.weight->shape == (std::vector<std::int64_t>{s.out, s.in}));
    CHECK(l.bias == nullptr);
  }
  const auto head = exl::load_linear(store, "lm_head", 384, 8192);
  CHECK(head.kind == exl::LinearKind::dense);
}

EXL_TEST(format, hf_ref_xs_single_file_tied) {
  const auto dir = exl::test::fixture("models/hf/ref-xs");
  const auto c = exl::read_model_config(dir);
  check_config(c, ref_xs);
  CHECK(c.tie_word_embeddings);
  const auto store = exl::TensorStore::open_dir(dir);
  CHECK_EQ(store.files().size(), std::size_t(1));
  CHECK_EQ(store.names().size(), std::size_t(20));
  CHECK(!store.contains("lm_head.weight"));
  CHECK_THROWS_ERROR(exl::load_linear(store, "lm_head", 256, 8192), exl::ErrorKind::missing_tensor, "lm_head");
  for (const auto& s : decoder_linears(c))
    CHECK(exl::load_linear(store, s.prefix, s.in, s.out).kind == exl::LinearKind::dense);
}

EXL_TEST(format, safetensors_metadata_and_data_pointers) {
  const auto f = exl::SafetensorsFile::open(exl::test::fixture("models/hf/ref-xs/model.safetensors"));
  CHECK_EQ(f->metadata().size(), std::size_t(1));
  CHECK_EQ(f->metadata().at("format"), std::string("pt"));
  for (const auto& t : f->tensors()) {
    CHECK(t.data != nullptr);
    CHECK(t.nbytes > 0);
    CHECK(t.file == f->path().string());
  }
}

EXL_TEST(format, expected_shape_mismatch_is_a_shape_error) {
  const auto store = exl::TensorStore::open_dir(exl::test::fixture("models/exl2/ref-s-4.0bpw"));
  CHECK_THROWS_ERROR(exl::load_linear(store, "model.layers.0.self_attn.q_proj", 384, 416), exl::ErrorKind::shape,
                     "model.layers.0.self_attn.q_proj.q_weight");
  CHECK_THROWS_ERROR(exl::load_linear(store, "model.layers.0.self_attn.q_proj", 512, 384), exl::ErrorKind::shape,
                     "q_invperm");
  const auto hf = exl::TensorStore::open_dir(exl::test::fixture("models/hf/ref-xs"));
  CHECK_THROWS_ERROR(exl::load_linear(hf, "model.layers.0.mlp.down_proj", 256, 768), exl::ErrorKind::shape,
                     "model.layers.0.mlp.down_proj.weight");
  CHECK_THROWS_ERROR(hf.get("model.layers.9.mlp.up_proj.weight"), exl::ErrorKind::missing_tensor,
                     "model.layers.9.mlp.up_proj.weight");
}

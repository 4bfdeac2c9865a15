// The model description read from config.json (spec §1.2): the Llama layout and the family
// description (FamilyDescription) that says where a family's forward pass departs from Llama's.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "exl/kernels/rope.h"

namespace exl {

struct QuantizationConfig {
  std::string method;      // "exl2", "gptq", ...
  std::string version;
  double bits = 0.0;       // target average bpw
  int head_bits = 0;
  double head_bits_value = 0.0;  // as written (EXL3 heads may be 1.5 / 2.5 / 3.5 bits)
  std::string codebook;          // EXL3: "mul1", "mcg" or "3inst" of newly quantized tensors
};

enum class NormKind : std::uint8_t {
  rms,           // y = x / rms(x) * w (Llama, Qwen, Phi)
  rms_one_plus,  // y = x / rms(x) * (1 + w), in fp32 (Gemma)
};

enum class Activation : std::uint8_t {
  silu,       // SwiGLU: down(silu(gate(x)) * up(x))
  gelu_tanh,  // GeGLU with PyTorch's tanh-approximated GELU (Gemma)
};

// What distinguishes a family's forward pass from Llama's (ARCHITECTURE.md, "Families as data").
// Backends interpret it; a family is a value of this struct, never a forward pass of its own.
struct FamilyDescription {
  NormKind norm = NormKind::rms;
  // Gemma 2/3: every block's output is normed before the residual add too:
  // x += post_attention_norm(attn(input_norm(x))); x += post_feedforward_norm(mlp(pre_feedforward_norm(x))).
  // false (Llama): x += attn(input_norm(x)); x += mlp(post_attention_norm(x)).
  bool sandwich_norms = false;
  bool qk_norm = false;               // per-head norm of q and k before RoPE (Qwen3, Gemma 3), same NormKind
  Activation activation = Activation::silu;
  float embedding_scale = 1.0f;       // embeddings times this (Gemma: sqrt(hidden))
  float attention_scale = 0.0f;       // query scaling; 0 = 1/sqrt(head_dim) (Gemma: query_pre_attn_scalar^-1/2)
  float attn_logit_softcap = 0.0f;    // Gemma 2: scores = cap * tanh(scores / cap); 0 = none
  float final_logit_softcap = 0.0f;   // Gemma 2: logits likewise
  bool fused_qkv = false;             // checkpoint stores self_attn.qkv_proj (Phi-3)
  bool fused_gate_up = false;         // checkpoint stores mlp.gate_up_proj, gate rows first (Phi-3)
};

// Mixture of experts (Mixtral, Qwen3-MoE): a sparse layer's MLP is `num_experts` SwiGLU experts of
// `expert_intermediate` each and a router (a linear hidden -> num_experts). Per token the router's
// logits go through a softmax in fp32, the `top_k` largest probabilities pick the experts (ties to the
// lower index, as torch.topk on the CPU), and the chosen experts' outputs are summed weighted by
// their probabilities, divided by the chosen ones' sum where `norm_topk_prob` (Mixtral always).
struct MoeDescription {
  int num_experts = 0;          // 0: a dense model
  int top_k = 0;
  int expert_intermediate = 0;  // each expert's intermediate size
  bool norm_topk_prob = false;
  std::vector<bool> sparse;     // [num_layers]: the layer's MLP is the experts (else dense, intermediate_size)
  bool active() const { return num_experts > 0; }
  bool is_sparse(int layer) const { return active() && std::size_t(layer) < sparse.size() && sparse[std::size_t(layer)]; }
};

// One decoder layer's attention: its window and which RoPE it uses.
struct LayerAttention {
  int window = 0;           // sliding window in tokens (a query sees the last `window` positions); 0 = full
  bool local_rope = false;  // ModelConfig::rope_local (Gemma 3's local layers) instead of ModelConfig::rope
};

struct ModelConfig {
  std::filesystem::path dir;
  std::string architecture;   // architectures[0]
  std::string model_type;     // llama, mistral, qwen2, qwen3, gemma2, gemma3_text (gemma3), phi3, mixtral, qwen3_moe
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int max_position_embeddings = 2048;
  float rms_norm_eps = 1e-5f;
  RopeParams rope;            // head_dim, theta, scaling filled in
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v (and o for Llama-style attention_bias)
  bool o_bias = false;
  bool mlp_bias = false;
  int sliding_window = 0;     // the configured window (layers that use it: layer_attention)
  FamilyDescription family;
  std::vector<LayerAttention> layer_attention;  // [num_layers]
  MoeDescription moe;         // Mixtral, Qwen3-MoE
  RopeParams rope_local;      // Gemma 3's local layers (rope_local_base_freq, no scaling)
  std::string tensor_prefix = "model.";  // "model.language_model." etc. inside multimodal checkpoints
  std::optional<int> bos_token_id;
  std::vector<int> eos_token_ids;  // every id config.json / generation_config.json declare
  std::optional<int> pad_token_id;
  std::optional<QuantizationConfig> quantization;
};

// The architectures (architectures[0] of config.json) the engine runs, comma-separated.
std::string supported_architectures();

// Features of `c` beyond the Llama computation, by name ("q/k norm", "soft-capping", ...), for a
// backend that runs only that computation to refuse the model with. A sliding window counts only
// when it is shorter than `context` (a window at least as long as the context changes nothing).
std::vector<std::string> features_beyond_llama(const ModelConfig& c, int context);

// RoPE parameters for a context of `context` tokens (LongRoPE picks its long factors when the
// context exceeds original_max_position_embeddings); `local` for the local layers' RoPE.
RopeParams rope_for_context(const ModelConfig& c, int context, bool local = false);

// Reads `dir/config.json` (and generation_config.json for extra EOS ids). Throws Error(config)
// naming the file and field on missing/invalid fields, Error(unsupported) for unknown model types.
ModelConfig read_model_config(const std::filesystem::path& dir);
// Parses config.json text (`display_name` is used in errors).
ModelConfig parse_model_config(const std::string& json_text, const std::string& display_name);

}  // namespace exl

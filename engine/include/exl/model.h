// The model description shared by all backends: config, the tensor store, and every layer's
// tensors resolved and validated (Llama, Mistral, Qwen2, Qwen3, Gemma 2 and 3, Phi-3, Mixtral,
// Qwen3-MoE; the family description in ModelConfig::family and ModelConfig::moe say which
// optional tensors a layer has).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "exl/exl2_layer.h"
#include "exl/model_config.h"
#include "exl/tensor_store.h"
#include "exl/tokenizer.h"

namespace exl {

// One expert of a mixture-of-experts layer: a SwiGLU MLP of ModelConfig::moe.expert_intermediate.
struct ExpertTensors {
  LinearTensors gate, up, down;
};

struct LayerTensors {
  const TensorInfo* input_norm = nullptr;      // [hidden]
  LinearTensors q, k, v, o;
  const TensorInfo* q_norm = nullptr;          // [head_dim] with family.qk_norm
  const TensorInfo* k_norm = nullptr;
  // Llama: the MLP's input norm. Sandwich norms (Gemma): the attention output's norm, and the MLP
  // has pre_feedforward_norm (input) and post_feedforward_norm (output).
  const TensorInfo* post_attention_norm = nullptr;
  const TensorInfo* pre_feedforward_norm = nullptr;
  const TensorInfo* post_feedforward_norm = nullptr;
  LinearTensors gate, up, down;                // dense MLP (absent in a sparse layer: kind dense, weight nullptr)
  // A sparse (mixture-of-experts) layer: the router [num_experts, hidden] and every expert.
  LinearTensors router;
  std::vector<ExpertTensors> experts;
  bool sparse() const { return !experts.empty(); }
  // The norm in front of the MLP, either way.
  const TensorInfo* mlp_norm() const { return pre_feedforward_norm ? pre_feedforward_norm : post_attention_norm; }
};

struct ModelSummary {
  std::int64_t parameters = 0;        // logical weights (embedding, norms, linears, head)
  std::uint64_t bytes_on_disk = 0;    // sum of safetensors file sizes
  double average_bpw = 0.0;           // over the quantized linear layers (excluding the head)
  double head_bpw = 0.0;              // 16 for an FP16 head
  bool quantized = false;             // any EXL2 or EXL3 layer
  std::string format = "fp16";        // "exl2", "exl3", "exl2+exl3" or "fp16"
};

class Model {
 public:
  // Opens `dir`: config.json, every safetensors shard, and tokenizer files when present.
  // Throws exl::Error naming the file and tensor/field on any problem.
  static std::shared_ptr<const Model> open(const std::filesystem::path& dir);

  const ModelConfig& config() const { return config_; }
  const TensorStore& tensors() const { return store_; }
  const TensorInfo& embedding() const { return *embedding_; }   // [vocab, hidden]
  const std::vector<LayerTensors>& layers() const { return layers_; }
  const TensorInfo& final_norm() const { return *final_norm_; }
  const LinearTensors& head() const { return head_; }            // in = hidden, out = vocab
  // nullptr when the folder holds no tokenizer.json.
  std::shared_ptr<const Tokenizer> tokenizer() const { return tokenizer_; }
  ModelSummary summary() const;

 private:
  ModelConfig config_;
  TensorStore store_;
  const TensorInfo* embedding_ = nullptr;
  const TensorInfo* final_norm_ = nullptr;
  std::vector<LayerTensors> layers_;
  LinearTensors head_;
  std::shared_ptr<const Tokenizer> tokenizer_;
  std::vector<std::unique_ptr<TensorInfo>> views_;  // row ranges of fused projections (Phi-3's qkv_proj, gate_up_proj)
};

}  // namespace exl

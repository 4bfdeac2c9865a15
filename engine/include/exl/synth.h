// `exl synth`: EXL2 or EXL3 model folders with random weights of real architectures' shapes (the
// planner's presets), for benchmarks and tests that need no downloads. Valid per spec §2: random
// act-order permutations, groups of 32/64/128 rows with descending bit widths mixed per layer so
// that the decoder's average bpw (as `exl inspect` counts it) lands on the request, 4-bit scale
// codes with fp16 group maxima sized so activations stay O(1), padding columns at 2^(b-1). Packed
// by the converter's packer and written by its safetensors writer (streamed, sharded like the
// converter), with a byte-level BPE tokenizer padded to the vocabulary and config.json carrying
// quantization_config as the converter writes it. Qt-free.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "exl/convert.h"
#include "exl/model_config.h"

namespace exl::synth {

enum class SynthFormat : std::uint8_t { exl2, exl3 };

// One EXL2 linear layer to generate.
struct LinearPlan {
  std::string prefix;  // "model.layers.3.mlp.down_proj", "lm_head"
  int k = 0, n = 0;    // in, out features (n is padded to 32 on disk)
  bool bias = false;   // fp16 bias of n_pad entries (Qwen2 q/k/v)
  GroupLayout layout;  // EXL2: groups in stored order
  int exl3_bits2 = 0;  // EXL3: twice the trellis bit rate (2..16, even; mul1 codebook); 0 = EXL2
  // EXL2: q_weight + q_scale + q_scale_max + q_groups + q_invperm. EXL3 (features padded to 128):
  // trellis + suh + svh + the codebook marker, as ExLlamaV3 counts a layer's storage.
  std::uint64_t storage_bits() const;
};

struct SynthPlan {
  ModelConfig config;
  double target_bpw = 0.0;
  int head_bits = 6;
  std::vector<LinearPlan> decoder;  // module order: per layer q, k, v, o, gate, up, down
  LinearPlan head;
  double decoder_bpw = 0.0;  // Σ storage bits / Σ k·n over the decoder (what `exl inspect` reports)
  double nominal_bpw = 0.0;  // EXL3: Σ K·k·n / Σ k·n, ExLlamaV3's `bits` (config.json has it to 2 decimals)
  double head_bpw = 0.0;
};

// Chooses every decoder linear's groups so that the average lands on `bpw` (2.0 .. 8.0; the
// format's overhead makes about 2.04 the least reachable), varying the mix across layers and the
// group sizes across projections; the head uses the converter's option for `head_bits`.
// Deterministic in (config, bpw, head_bits, seed). Throws Error(invalid_argument) for bad values.
SynthPlan plan_synth(const ModelConfig& config, double bpw, int head_bits, std::uint64_t seed = 1);

// The EXL3 form: each decoder linear gets a whole trellis bit rate K (1..8 bits, mul1 codebook, as
// ExLlamaV3's converter writes by default), varying over the layers around `bpw` (1.6 .. 8.0) with
// error diffusion so that the decoder's average (storage bits over k·n, suh/svh included) lands
// on the request; the head gets `head_bits` (1..8, or 16 for an FP16 head). Features must be
// multiples of 128 (ExLlamaV3's Hadamard blocks) except the head's vocabulary, which is padded.
SynthPlan plan_synth_exl3(const ModelConfig& config, double bpw, int head_bits, std::uint64_t seed = 1);
// Storage bits of one EXL3 linear of k x n features (padded to 128) at bits2 / 2 bits per weight.
std::uint64_t exl3_storage_bits(int k, int n, int bits2);

struct SynthOptions {
  std::string preset;                 // a name of plan::preset_names()
  double bpw = 4.0;
  int head_bits = 6;
  std::uint64_t seed = 1;
  std::filesystem::path output_dir;   // written as DIR.partial, renamed to DIR when complete
  std::uint64_t max_shard_bytes = 8192ull << 20;  // the converter's default
  int threads = 0;                    // 0 = all cores
  bool fp16 = false;                  // an unquantized FP16 model instead (converter input; bpw unused)
  SynthFormat format = SynthFormat::exl2;
};

struct SynthProgress {
  std::uint64_t bytes_done = 0, bytes_total = 0;
  std::string tensor;  // last tensor written
};
using SynthProgressFn = std::function<void(const SynthProgress&)>;

struct SynthResult {
  std::filesystem::path dir;
  double decoder_bpw = 0.0, head_bpw = 0.0;
  std::uint64_t bytes = 0;  // safetensors data written
  std::vector<std::filesystem::path> files;
};

// Writes the model. Errors (Error): invalid_argument for an unknown preset (listing the names),
// a bpw outside 2.0 .. 8.0, bad head bits or an output folder that already holds files; io when
// the folder cannot be created or a write fails (disk full). On any failure DIR.partial is
// removed and DIR is not created.
SynthResult synth_model(const SynthOptions& options, const SynthProgressFn& progress = {});

// The folder's text files (also used by tests).
// fp16: no quantization_config (the FP16 model `--fp16` writes).
std::string synth_config_json(const ModelConfig& c, double bpw, int head_bits, std::uint64_t seed,
                              const std::string& preset, bool fp16 = false, SynthFormat format = SynthFormat::exl2);
// Byte-level BPE: the 256 byte tokens, merges that build short lowercase words up to
// vocab - 5 entries, then <|begin_of_text|>, <|end_of_text|>, <|im_start|>, <|im_end|>, <|pad|>.
std::string synth_tokenizer_json(int vocab);
std::string synth_tokenizer_config_json(int max_position_embeddings);  // ChatML template
int synth_bos_id(int vocab);
int synth_eos_id(int vocab);

}  // namespace exl::synth

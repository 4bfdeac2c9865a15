// Internal pieces of the converter shared by its source files.
#pragma once
#include <chrono>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "block_math.h"
#include "exl/convert.h"
#include "exl/model.h"
#include "exl/safetensors_writer.h"

namespace exl::convert_detail {

// The FP16/BF16/FP32 source model, with its weights widened to fp32 on demand.
struct Source {
  std::shared_ptr<const Model> model;
  BlockShape shape;
  int layers = 0;
  int vocab = 0;

  static Source open(const std::filesystem::path& dir);
  // `shape` with the layer's window and RoPE and the family's attention and activation.
  BlockShape layer_shape(int layer) const;
  AttentionWeights attention(int layer) const;
  MlpWeights mlp(int layer) const;
  std::vector<float> head_weight() const;  // [vocab, hidden] (the embedding when tied)
  std::vector<float> final_norm() const;  // as multiplied by ((1 + w) for Gemma)
  // Embedding rows of `ids` ([tokens, hidden] fp32, times the family's embedding scale); ids
  // outside the table become 0.
  std::vector<float> embed(const std::vector<std::int32_t>& ids) const;
  // Sum over the projections of K * N_pad (the denominator of the decoder bpw, §7.6/§7.8).
  std::uint64_t decoder_numel() const;
  // Dimensions of a projection: (k = in, n = out).
  std::pair<int, int> dims(const std::string& proj) const;
};

std::vector<float> tensor_to_f32(const TensorInfo& t);
std::vector<half_bits> tensor_to_f16(const TensorInfo& t);

// rows x length calibration ids cut from `text` (consecutive, no BOS). Throws
// Error(invalid_argument) when the text has too few tokens.
std::vector<std::vector<std::int32_t>> calibration_rows(const Tokenizer& tok, const std::string& text, int rows,
                                                        int length, int vocab);

using Progress = ConvertProgressFn;

// An interrupted conversion's state in <output>/.exl-resume (convert_resume.cpp). Created at the
// start of a conversion: with `resume`, a state left there (made with the same `fingerprint`, the
// options that decide the result) is read back; without it, a state there is an error. The
// passes report each finished block; the calibration states are saved at most every
// `interval_seconds` (0: after every block). remove() once the model is written.
class Checkpoint {
 public:
  Checkpoint(const std::filesystem::path& output_dir, std::string fingerprint, bool resume, double interval_seconds);
  // A state folder that never got a job.json (the conversion failed before its first save) goes.
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  // What job.json says is done: read back at the start, updated by each save.
  struct Done {
    int measured_blocks = 0;
    bool measure_complete = false;
    int quant_blocks = 0;
    std::uint64_t decoder_bits = 0;
    double last_error = 0.0;
  };
  const Done& done() const { return done_; }
  bool resumed() const { return resumed_; }
  // What was read back: the measured blocks (all of them when complete) and the unquantized states
  // after them; the quantized blocks' tensors in block order (without the embedding) and the
  // quantized states after them. The passes take them over.
  Measurement measured;
  std::vector<std::vector<float>> measure_states;
  std::vector<TensorData> quant_tensors;
  std::vector<std::vector<float>> quant_states;

  void save_measurement(const Measurement& m, const std::vector<std::vector<float>>& states, bool complete);
  void save_block(int index, const std::vector<TensorData>& tensors);
  void save_quantized(int done, std::uint64_t bits, double error, const std::vector<std::vector<float>>& states);
  void remove();

 private:
  bool due() const;
  void write_job();
  std::filesystem::path dir_;
  std::string fingerprint_;
  double interval_ = 30.0;
  bool resumed_ = false;
  std::chrono::steady_clock::time_point last_save_;
  Done done_;
};
void check_stop(std::stop_token stop);

// Measurement pass (§7.4) over `states` (one [length, hidden] fp32 buffer per row).
Measurement measure(const Source& src, BlockMath& math, std::vector<std::vector<float>> states,
                    const Progress& progress, std::stop_token stop, Checkpoint* checkpoint = nullptr);

// Without a measurement pass (--fast): every option of every block scored from its weights alone
// (no calibration data): the block's error is the root of its projections' relative squared
// round-to-nearest errors under the option (RtnErrorEstimate), weighted by their sizes. This sees
// what the bits alone do not: group sizes, scale overhead, and weights that sit badly on the grid
// (e.g. an imported GGUF's 4-bit blocks).
Measurement estimated_measurement(const Source& src, const Progress& progress, std::stop_token stop);

struct QuantizeOutput {
  std::vector<TensorData> tensors;  // module order, ready to write
  std::uint64_t decoder_bits = 0;
  std::uint64_t head_bits = 0;
  std::uint64_t head_numel = 0;
  double last_block_error = 0.0;
};
// Quantization pass (§7.9) with one option per block, then the head (§7.7).
QuantizeOutput quantize(const Source& src, BlockMath& math, std::vector<std::vector<float>> states,
                        const std::vector<BlockOption>& strategy, int head_bits, const Progress& progress,
                        std::stop_token stop, Checkpoint* checkpoint = nullptr);

// The on-disk tensors of one quantized linear (packed, §2.1).
void append_exl2_tensors(const std::string& prefix, const QuantizedLinear& q, const std::vector<float>& bias,
                         std::vector<TensorData>& out);

}  // namespace exl::convert_detail

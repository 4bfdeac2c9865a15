// Internal pieces of the converter shared by its source files.
#pragma once
#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "block_math.h"
#include "exl/convert.h"
#include "exl/kernels/exl3.h"
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
// A finished pass's figures in the conversion's result (bpw over the decoder's `numel`).
inline void set_result_figures(ConvertResult& res, const QuantizeOutput& q, std::uint64_t numel) {
  res.decoder_bits = q.decoder_bits;
  res.decoder_bpw = double(q.decoder_bits) / double(numel);
  res.head_bpw = double(q.head_bits) / double(q.head_numel);
  res.calibration_error = q.last_block_error;
}

// Quantization pass (§7.9) with one option per block, then the head (§7.7).
QuantizeOutput quantize(const Source& src, BlockMath& math, std::vector<std::vector<float>> states,
                        const std::vector<BlockOption>& strategy, int head_bits, const Progress& progress,
                        std::stop_token stop, Checkpoint* checkpoint = nullptr);

// A source tensor as fp16 under `name`; a decoder layer's norm weights (attention half: the input
// norm, q/k norms, Gemma's post-attention norm; MLP half: the post-attention or Gemma's pre/post
// feed-forward norms) under their HF names.
TensorData f16_tensor(const std::string& name, const TensorInfo& t);
void append_block_norms(const Source& src, int layer, bool attention, std::vector<TensorData>& out);

// The on-disk tensors of one quantized linear (packed, §2.1).
void append_exl2_tensors(const std::string& prefix, const QuantizedLinear& q, const std::vector<float>& bias,
                         std::vector<TensorData>& out);

// ---- EXL3 (exl3_quant.cpp, convert_exl3.cpp) ----

enum class OutScales { always, never, automatic };
OutScales parse_out_scales(const std::string& s);  // "always", "never", "auto"; throws otherwise
const char* out_scales_name(OutScales m);

struct Exl3LinearOptions {
  int K = 4;                                   // bits per weight, 1..8
  Exl3Codebook codebook = Exl3Codebook::mul1;
  OutScales out_scales = OutScales::always;
  std::uint64_t seed = 0;                      // the sign vectors
};
struct Exl3QuantizedLinear {
  int k = 0, n = 0, kp = 0, np = 0, K = 0;     // kp, np: padded to multiples of 128
  Exl3Codebook codebook = Exl3Codebook::mul1;
  std::vector<std::uint16_t> trellis;         // [kp/16][np/16][16 K]
  std::vector<half_bits> suh, svh;            // [kp], [np]
  std::vector<float> dequant;                 // [n, k] HF layout: the weight the runtime computes with
  double proxy_error = 0.0;                   // trace(E^T H E) / trace(W^T H W) in the rotated basis
  double scale = 1.0;                         // the global scale found for the encoder
  bool fallback = false;                      // quantized without a Hessian
};
// Quantizes w ([n, k] HF layout, fp32) at o.K bits with the averaged input Hessian `hessian`
// ([k, k], null or empty: no calibration). Throws Error naming `what` on failure.
Exl3QuantizedLinear exl3_quantize_linear(const float* w, int n, int k, const std::vector<double>* hessian,
                                         const Exl3LinearOptions& o, const std::string& what);
// The on-disk tensors of one EXL3 linear (spec §2.1): trellis, suh, svh, the codebook's marker, bias.
void append_exl3_tensors(const std::string& prefix, const Exl3QuantizedLinear& q, const std::vector<float>& bias,
                         std::vector<TensorData>& out);

// The bit allocation of spec §5.10: every linear starts at floor(bpw) bits; whole groups (q/k/v,
// o, gate/up, down of one layer) get one more bit, round-robin by priority and then from the ends
// of the layer stack inwards, while the budget floor(bpw * numel) allows.
struct Exl3AllocItem {
  std::string name;             // the tensor prefix ("model.layers.0.self_attn.q_proj")
  std::string group;            // linears that share one bit width ("model.layers.0.self_attn.qkv")
  std::uint64_t numel = 0;      // padded k * n
  int priority = 0;             // attention 2, MLP 0
  int select_hq_bits = 0;       // what --hq raises the item to above floor(bpw)
  bool head = false;            // lm_head: head_bits, outside the budget
};
struct Exl3Allocation {
  std::vector<int> K;           // per item
  double bits = 0.0;            // the average over the budgeted items, 2 decimals (config "bits")
};
Exl3Allocation exl3_allocate(const std::vector<Exl3AllocItem>& items, double bpw, int head_bits, bool hq);

// What the EXL3 pass quantizes with: bits per linear (by tensor prefix), the head's bits (16:
// kept in fp16), the codebook and out-scale mode, the seed of the sign vectors.
struct Exl3Plan {
  std::map<std::string, int> bits;
  int head_bits = 6;
  Exl3Codebook codebook = Exl3Codebook::mul1;
  OutScales out_scales = OutScales::always;
  std::uint64_t seed = 0;
};
// The EXL3 quantization pass: each half-block's linears quantized from the unquantized block's
// Hessians (its calibration outputs as reference), then the states advanced through the
// quantized block (so later Hessians see the earlier quantization); the head last.
QuantizeOutput quantize_exl3(const Source& src, BlockMath& math, std::vector<std::vector<float>> states,
                             const Exl3Plan& plan, const Progress& progress, std::stop_token stop,
                             Checkpoint* checkpoint = nullptr);

// The source folder's files that are not copied into a converted model (weights, config.json,
// measurement.json, hidden files); a whole file as text (Error io naming it otherwise).
bool is_weight_file(const std::filesystem::path& p);
// The tensors as `<stem>.safetensors` shards in out_dir and copies of the source folder's other
// files (tokenizer, generation config...); returns the shard files.
std::vector<std::filesystem::path> write_shards_and_copies(const std::filesystem::path& out_dir,
                                                           const std::filesystem::path& source_dir,
                                                           const std::vector<TensorData>& tensors,
                                                           std::uint64_t max_shard_bytes, const std::string& stem);
std::string read_text_file(const std::filesystem::path& p);
// The source folder's config.json (Error config naming it when it is not JSON).
nlohmann::ordered_json read_source_config(const std::filesystem::path& dir);
// "mul1", "mcg", "3inst"; throws Error(invalid_argument) otherwise.
Exl3Codebook exl3_codebook_of(const std::string& name);

// The EXL3 conversion (convert_model with format exl3): the allocation, the quantization pass over
// the calibration `states` (`rows` rows), and the output folder (shards, copied files,
// quantization_config.json, config.json last).
ConvertResult convert_model_exl3(const ConvertOptions& o, const Source& src, const std::filesystem::path& source_dir,
                                 BlockMath& math, Checkpoint* checkpoint, std::vector<std::vector<float>> states,
                                 int rows, const Progress& progress, std::stop_token stop);

}  // namespace exl::convert_detail

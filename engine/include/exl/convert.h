// The EXL2 converter (spec §7): calibration, measurement of candidate options per block, the
// bit-allocation optimizer, GPTQ-style quantization with act-order and damping, and the writer
// of the output folder. Qt-free; the per-layer math sits behind BlockMath (CPU, or the exl_cuda
// module's device implementation: ConvertOptions::device).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "exl/kernels/half.h"

namespace exl {

// ---- candidate options (spec §7.3) ----

struct QuantPart {
  int bits = 4;           // 2, 3, 4, 5, 6, 8
  double prop = 1.0;      // proportion of the rows
  int group_size = 128;   // rows per group (32, 64, 128)
};

// One linear layer's option: parts in descending bit order, 4-bit scale codes.
struct QuantOption {
  std::vector<QuantPart> parts;
  std::string describe() const;  // "0.1:4b_128g/0.9:3b_128g s4" like ExLlamaV2's log
  bool operator==(const QuantOption&) const = default;
};

// Groups of one layer in stored order: bit width and rows per group (only the last may be short).
struct GroupLayout {
  std::vector<int> bits;
  std::vector<int> rows;
  int groups() const { return int(bits.size()); }
};
// Throws Error(invalid_argument) if k is not a positive multiple of 32 or the option cannot cover k.
GroupLayout group_layout(const QuantOption& option, int k);

// Storage bits of one quantized linear layer (spec §7.6), n_pad = round_up(n, 32).
std::uint64_t linear_total_bits(const GroupLayout& layout, int k, int n, int bias_len = 0);
std::uint64_t linear_total_bits(const QuantOption& option, int k, int n, int bias_len = 0);

// A block option: one QuantOption per projection name ("q_proj", ... / "gate_proj", ...).
using BlockOption = std::vector<std::pair<std::string, QuantOption>>;
const std::vector<BlockOption>& attention_options();  // 19 (spec §7.3)
const std::vector<BlockOption>& mlp_options();        // 17
QuantOption head_option(int head_bits);               // 2, 3, 4, 5, 6, 8; throws otherwise

// ---- measurement (spec §1.5, §7.4) ----

struct MeasuredOption {
  double accuracy = 0.0;         // 1 - mean relative Frobenius error of the block output
  std::uint64_t total_bits = 0;  // sum over the block's projections
  BlockOption option;
};
struct MeasuredBlock {
  std::string key;  // "model.layers.0.self_attn" / "model.layers.0.mlp"
  std::vector<MeasuredOption> options;
};
struct Measurement {
  std::vector<MeasuredBlock> blocks;  // in module order
};
std::string measurement_to_json(const Measurement& m);
// Accepts our files and ExLlamaV2's (entries that are null, e.g. the norm and head, are skipped).
Measurement measurement_from_json(const std::string& text, const std::string& display_name);
Measurement read_measurement(const std::filesystem::path& path);

// ---- optimizer (spec §7.8) ----

struct OptimizerResult {
  std::vector<int> choice;       // option index per block
  std::uint64_t total_bits = 0;  // sum of the chosen options' bits
  double max_error = 0.0;
};
// Chooses one option per block so that the summed bits stay <= budget_bits while minimising
// sum(error^eta), eta picked (as ExLlamaV2 does) to minimise the largest per-block error.
// Deterministic (dynamic programming over a fine bit grid, then exact greedy refinement).
// Throws Error(invalid_argument) when even the cheapest choice exceeds the budget.
OptimizerResult optimize_strategy(const Measurement& m, std::uint64_t budget_bits);

// ---- quantizing one linear layer (spec §7.5) ----

// Act-order permutation and the upper Cholesky factor of the damped inverse Hessian, permuted.
struct PreparedHessian {
  int k = 0;
  std::vector<std::int32_t> perm;  // stored row j holds original input feature perm[j]
  std::vector<float> u;            // [k, k] row-major upper triangular, H^-1 = U^T U
};
// `h` is the averaged Hessian [k, k] (H = sum X^T X / rows). Throws Error(internal) naming
// `what` if damping cannot make it positive definite.
PreparedHessian prepare_hessian(std::vector<double> h, int k, const std::string& what);

struct QuantizedLinear {
  int k = 0, n = 0, n_pad = 0;
  GroupLayout layout;
  std::vector<std::uint8_t> q;          // [k, n_pad] integers, stored (act-order) rows
  std::vector<std::uint8_t> codes;      // [groups, n_pad] scale codes 0..15
  std::vector<half_bits> scale_max;     // [groups]
  std::vector<std::int32_t> perm;       // [k]
  std::vector<float> dequant;           // [n, k] HF layout, the runtime's exact fp16 values
  std::uint64_t total_bits = 0;
};
// GPTQ over `w` ([n, k] HF layout, fp32) with error feedback through `h` (spec §7.5).
// `rtn` disables the error feedback (round to nearest, act-order kept).
QuantizedLinear gptq_quantize(const float* w, int n, int k, const PreparedHessian& h,
                              const QuantOption& option, bool rtn = false);

// Round-to-nearest error of one linear layer under candidate options, without calibration data:
// what `exl convert --fast` ranks options by. Groups are quantized as gptq_quantize does (scale
// codes from every column, the same scale search, the runtime's fp16 scales) in stored = input
// order, over every `column_step`-th output column; the error of a group is kept, so options
// that share groups (same rows, same bits) cost one evaluation.
class RtnErrorEstimate {
 public:
  RtnErrorEstimate(const float* w, int n, int k, int column_step);
  // Sum of squared errors over the sampled columns divided by their sum of squares.
  double relative_error(const GroupLayout& layout);

 private:
  double group_error(int row, int rows, int bits);
  const float* w_;
  int n_, k_;
  std::vector<int> cols_;
  double energy_ = 0.0;
  std::map<std::tuple<int, int, int>, double> memo_;
};

// ---- the whole conversion ----

enum class ConvertFormat { exl2, exl3 };

struct ConvertOptions {
  ConvertFormat format = ConvertFormat::exl2;
  std::filesystem::path input_dir;
  std::filesystem::path output_dir;
  double bits = 4.125;                          // target decoder bpw
  int head_bits = 6;
  std::optional<std::filesystem::path> measurement_in;   // -m: skip measurement
  std::optional<std::filesystem::path> measurement_out;  // -om: also write it here
  bool measure_only = false;                    // stop after writing the measurement
  std::optional<std::filesystem::path> calibration_file;  // --cal (UTF-8 text)
  int rows = 8;                                 // calibration rows
  int length = 512;                             // tokens per row
  int measure_rows = 0;                         // rows used by the measurement pass (0 = all rows)
  bool fast = false;                            // no measurement pass: options ranked by their rounding
                                                // error on the weights (estimated_measurement)
  std::string device = "cpu";                   // cpu, cuda, cuda:N, or auto (the GPU when usable)
  std::uint64_t max_shard_bytes = 8192ull << 20;
  int threads = 0;                              // 0 = all cores
  // The conversion's state is kept in <output_dir>/.exl-resume while it runs (measured blocks,
  // quantized blocks, calibration states; saved at most every checkpoint_seconds, 0: after every
  // block) and removed when the model is written. `resume` continues an interrupted conversion
  // from there (same input and options); without it, a state left there is an error.
  bool resume = false;
  double checkpoint_seconds = 30.0;
  // EXL3 only (ExLlamaV3's converter's options): `bits` is the average of the decoder's trellis
  // bits (1..8; whole bits per linear, groups get one more bit to meet the average), `head_bits`
  // 1..8 or 16 (kept in FP16); `rows` x `length` calibration tokens (-cr / -cc).
  std::string codebook = "mul1";                // mul1, mcg or 3inst
  std::string out_scales = "always";            // always, never or auto
  bool hq = false;                              // raise attention to floor(bits) + its hq bits
  std::uint64_t seed = 0;                       // the sign vectors' random stream
};

struct ConvertProgress {
  std::string stage;    // "calibration", "measure", "optimize", "quantize", "write", "done"
  int step = 0;         // within the stage
  int steps = 0;
  std::string message;  // one human-readable line
};
using ConvertProgressFn = std::function<void(const ConvertProgress&)>;

struct ConvertResult {
  double decoder_bpw = 0.0;  // as counted in §7.6
  double head_bpw = 0.0;
  std::uint64_t decoder_bits = 0;
  std::vector<std::string> strategy;  // per block: key and chosen option's bpw
  std::vector<std::filesystem::path> files;
  double calibration_error = 0.0;     // mean relative error of the last block output
};

// Converts input_dir to EXL2 or EXL3 (options.format) in output_dir. Throws exl::Error (kind cancelled when `stop` fires;
// checked between blocks). On any failure nothing in output_dir looks like a finished model:
// config.json is written last.
ConvertResult convert_model(const ConvertOptions& options, const ConvertProgressFn& progress = {},
                            std::stop_token stop = {});

// Where a conversion into `output_dir` keeps its state while it runs (ConvertOptions::resume), and
// whether an interrupted one left a state there to continue.
std::filesystem::path conversion_state_dir(const std::filesystem::path& output_dir);
bool has_conversion_state(const std::filesystem::path& output_dir);

// Built-in calibration text (several domains, written for this project; see data/README.md).
const std::string& builtin_calibration_text();

}  // namespace exl

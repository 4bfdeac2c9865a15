// convert_model: the whole job (calibration -> measurement or -m -> optimizer -> quantization
// -> output folder). The output folder gets the shards, then the copied tokenizer/generation
// files, measurement.json, and config.json (with quantization_config) last, each atomically, so
// an interrupted conversion never leaves a folder that looks finished.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <nlohmann/json.hpp>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/log.h"
#include "exl/gguf.h"
#include "exl/kernels/threads.h"

namespace exl {
namespace fs = std::filesystem;
using namespace convert_detail;

std::string convert_detail::read_text_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read file", p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

std::string read_text(const fs::path& p) { return read_text_file(p); }

// A --cal text file, or every regular file of a folder in name order, joined by blank lines.
std::string read_calibration(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_directory(p, ec)) return read_text(p);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(p))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error(ErrorKind::invalid_argument, "the calibration folder holds no files", p.string(), "-c");
  std::string text;
  for (const auto& f : files) text += (text.empty() ? "" : "\n\n") + read_text(f);
  return text;
}

}  // namespace

std::vector<fs::path> convert_detail::write_shards_and_copies(const fs::path& out_dir, const fs::path& source_dir,
                                                              const std::vector<TensorData>& tensors,
                                                              std::uint64_t max_shard_bytes, const std::string& stem) {
  std::vector<fs::path> files = write_safetensors_shards(out_dir, tensors, max_shard_bytes, stem);
  for (const auto& e : fs::directory_iterator(source_dir)) {
    if (!e.is_regular_file() || is_weight_file(e.path())) continue;
    write_file_atomic(out_dir / e.path().filename(), read_text_file(e.path()));
  }
  return files;
}

nlohmann::ordered_json convert_detail::read_source_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  try {
    return nlohmann::ordered_json::parse(read_text_file(p));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::config, std::string("invalid JSON: ") + e.what(), p.string());
  }
}

bool convert_detail::is_weight_file(const fs::path& p) {
  const std::string n = p.filename().string();
  auto ends = [&](const char* s) { return n.size() >= std::strlen(s) && n.ends_with(s); };
  return ends(".safetensors") || ends(".safetensors.index.json") || ends(".bin") || ends(".pt") ||
         ends(".pth") || ends(".gguf") || n == "config.json" || n == "measurement.json" || n.starts_with(".");
}

namespace {

void check_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create the output folder: " + ec.message(), dir.string());
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n == "config.json" || e.path().extension() == ".safetensors")
      throw Error(ErrorKind::invalid_argument, "the output folder already holds a model; use an empty folder",
                  e.path().string());
  }
}

std::string config_with_quantization(const fs::path& in_dir, const ConvertOptions& o, int rows, int length) {
  nlohmann::ordered_json cfg = read_source_config(in_dir);
  cfg["quantization_config"] = {
      {"quant_method", "exl2"},
      {"version", "0.2.7"},
      {"bits", o.bits},
      {"head_bits", o.head_bits},
      {"calibration",
       {{"rows", rows},
        {"length", length},
        {"dataset", o.calibration_file ? o.calibration_file->filename().string() : std::string("(default)")}}}};
  return cfg.dump(4);
}

// A scratch folder removed when it goes out of scope (the import of a .gguf input).
class ScratchDir {
 public:
  explicit ScratchDir(const fs::path& near) {
    for (int i = 0;; ++i) {
      path_ = near.parent_path() / (near.filename().string() + ".gguf-import-" + std::to_string(i));
      if (fs::create_directory(path_)) break;
      if (i > 1000) throw Error(ErrorKind::io, "cannot create a scratch folder beside the output", path_.string());
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// "cpu", "cuda", "cuda:N", or "auto" (the first GPU when the CUDA module and a device are usable,
// the CPU otherwise). `used` names what was chosen.
std::unique_ptr<BlockMath> block_math_for(const std::string& device, std::string& used) {
  if (device == "cpu") {
    used = "cpu";
    return make_cpu_block_math();
  }
  int index = 0;
  if (device.rfind("cuda:", 0) == 0) {
    const std::string n = device.substr(5);
    if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos)
      throw Error(ErrorKind::invalid_argument, "bad device '" + device + "' (cpu, cuda, cuda:N or auto)", {}, "--device");
    index = std::stoi(n);
  } else if (device != "cuda" && device != "auto") {
    throw Error(ErrorKind::invalid_argument, "unknown device '" + device + "' (cpu, cuda, cuda:N or auto)", {},
                "--device");
  }
  if (device == "auto") {
    try {
      auto m = make_cuda_block_math(0);
      used = "cuda:0";
      return m;
    } catch (const Error& e) {
      log(LogLevel::info, std::string("convert: no usable GPU (") + e.what() + "), converting on the CPU");
      used = "cpu";
      return make_cpu_block_math();
    }
  }
  used = "cuda:" + std::to_string(index);
  return make_cuda_block_math(index);
}

// The options that decide a conversion's result, as a resumed conversion must find them.
std::string resume_fingerprint(const ConvertOptions& o) {
  std::error_code ec;
  nlohmann::json f;
  f["input"] = fs::absolute(o.input_dir, ec).lexically_normal().string();
  f["bits"] = o.bits;
  f["head_bits"] = o.head_bits;
  f["rows"] = o.rows;
  f["length"] = o.length;
  f["measure_rows"] = o.measure_rows;
  f["fast"] = o.fast;
  f["calibration"] = o.calibration_file ? o.calibration_file->string() + " (" +
                                              std::to_string(fs::file_size(*o.calibration_file, ec)) + " bytes)"
                                        : std::string("built-in");
  f["measurement"] = o.measurement_in ? o.measurement_in->string() : std::string();
  if (o.format == ConvertFormat::exl3) {
    f["format"] = "exl3";
    f["codebook"] = o.codebook;
    f["out_scales"] = o.out_scales;
    f["hq"] = o.hq;
    f["seed"] = o.seed;
  }
  return f.dump();
}

}  // namespace

ConvertResult convert_model(const ConvertOptions& o, const ConvertProgressFn& progress, std::stop_token stop) {
  auto say = [&](const std::string& stage, int step, int steps, const std::string& msg) {
    if (progress) progress(ConvertProgress{stage, step, steps, msg});
  };
  const bool exl3 = o.format == ConvertFormat::exl3;
  std::string device_used;
  std::unique_ptr<BlockMath> math;
  if (exl3 && o.device != "cpu") {
    // The EXL3 quantizer's Hessian math and tile encoder run on the CPU for now.
    if (o.device != "auto")
      throw Error(ErrorKind::unsupported, "EXL3 conversion runs on the CPU in this version; use --device cpu (or auto)",
                  {}, "--device");
  }
  math = exl3 ? block_math_for("cpu", device_used) : block_math_for(o.device, device_used);
  say("device", 1, 1, "block math on " + device_used);
  if (exl3) {
    if (!(o.bits >= 1.0 && o.bits <= 8.0))
      throw Error(ErrorKind::invalid_argument, "target bpw " + std::to_string(o.bits) + " outside 1.0 .. 8.0 (EXL3)",
                  {}, "-b");
    if (!((o.head_bits >= 1 && o.head_bits <= 8) || o.head_bits == 16))
      throw Error(ErrorKind::invalid_argument, "head bits " + std::to_string(o.head_bits) + " not 1 .. 8 or 16 (EXL3)",
                  {}, "-hb");
    exl3_codebook_of(o.codebook);  // validate
    parse_out_scales(o.out_scales);
    if (o.measurement_in || o.measurement_out || o.measure_only || o.fast)
      throw Error(ErrorKind::invalid_argument, "EXL3 conversion is single-pass: it takes no measurement options");
    if (o.rows < 1 || o.length < 16)
      throw Error(ErrorKind::invalid_argument, "calibration needs at least 1 row of 16 tokens", {}, "-cr / -cc");
  } else {
    if (!(o.bits >= 2.0 && o.bits <= 8.5))
      throw Error(ErrorKind::invalid_argument, "target bpw " + std::to_string(o.bits) + " outside 2.0 .. 8.5");
    head_option(o.head_bits);  // validates
  }
  if (o.threads > 0) set_cpu_threads(o.threads);

  if (o.fast && !o.measurement_in && (o.measure_only || o.measurement_out))
    throw Error(ErrorKind::invalid_argument, "fast conversion makes no measurement to write", {}, "--fast");
  if (!o.measure_only) check_output_dir(o.output_dir);
  else if (!o.measurement_out) throw Error(ErrorKind::invalid_argument, "measure-only needs -om FILE");
  // A .gguf file is imported to FP16 in a scratch folder beside the output first.
  std::optional<ScratchDir> imported;
  std::error_code ec;
  if (o.input_dir.extension() == ".gguf" && fs::is_regular_file(o.input_dir, ec)) {
    imported.emplace(o.measure_only ? fs::absolute(*o.measurement_out) : fs::absolute(o.output_dir));
    import_gguf(o.input_dir, imported->path(), ImportDType::f16, [&](std::size_t done, std::size_t total, const std::string&) {
      if (done == total || done % 32 == 0) say("import", int(done), int(total), "GGUF tensors to FP16");
    });
  }
  const fs::path source_dir = imported ? imported->path() : o.input_dir;
  std::optional<Checkpoint> checkpoint;
  if (!o.measure_only) {
    checkpoint.emplace(o.output_dir, resume_fingerprint(o), o.resume, o.checkpoint_seconds);
    if (checkpoint->resumed())
      say("resume", 1, 1, "continuing the interrupted conversion in " + conversion_state_dir(o.output_dir).string());
  }
  Checkpoint* cp = checkpoint ? &*checkpoint : nullptr;
  const Source src = Source::open(source_dir);
  // The GPU block math runs the Llama block: "auto" takes the CPU for a family that needs more,
  // an explicit GPU is refused before any work.
  if (device_used != "cpu") {
    const FamilyDescription& fam = src.model->config().family;
    bool beyond = fam.qk_norm || fam.sandwich_norms;
    for (int i = 0; i < src.layers; ++i) beyond = beyond || src.layer_shape(i).beyond_llama();
    if (beyond && o.device != "auto")
      throw Error(ErrorKind::unsupported, "the GPU block math runs only the Llama block; convert this " +
                                              src.model->config().architecture + " model with --device cpu (or auto)",
                  {}, "--device");
    if (beyond) {
      math = make_cpu_block_math();
      device_used = "cpu";
      say("device", 1, 1, "block math on cpu (the GPU's runs only the Llama block)");
    }
  }

  const std::string text = o.calibration_file ? read_calibration(*o.calibration_file) : builtin_calibration_text();
  // The built-in text is a fixed size: a tokenizer with long tokens may give fewer rows than asked
  // for, so take as many whole rows as it holds. A --cal file that is too short stays an error.
  int row_count = o.rows;
  if (!o.calibration_file && o.length > 1) {
    const std::size_t have = src.model->tokenizer()->encode(text, false, false).size();
    row_count = std::clamp(int(have / std::size_t(o.length)), 1, std::max(1, o.rows));
  }
  auto rows = calibration_rows(*src.model->tokenizer(), text, row_count, o.length, src.vocab);
  // EXL3: as ExLlamaV3's calibration set, about 15 % of the rows are uniformly random tokens.
  const int random_rows = exl3 ? row_count * 20 / 115 : 0;
  std::mt19937_64 rng(o.seed ^ 0x5DEECE66Dull);
  for (int r = 0; r < random_rows; ++r) {
    std::vector<std::int32_t> ids(std::size_t(o.length));
    for (auto& id : ids) id = std::int32_t(rng() % std::uint64_t(src.vocab));
    rows.push_back(std::move(ids));
  }
  std::vector<std::vector<float>> states;
  for (const auto& r : rows) states.push_back(src.embed(r));
  say("calibration", 1, 1, std::to_string(row_count) + " rows x " + std::to_string(o.length) + " tokens" +
                               (row_count < o.rows ? " (all the built-in text holds)" : "") +
                               (random_rows ? " + " + std::to_string(random_rows) + " rows of random tokens" : ""));
  if (exl3) return convert_model_exl3(o, src, source_dir, *math, cp, std::move(states), int(rows.size()), progress, stop);

  Measurement m;
  if (o.measurement_in) {
    m = read_measurement(*o.measurement_in);
    if (int(m.blocks.size()) != 2 * src.layers)
      throw Error(ErrorKind::invalid_argument,
                  "the measurement lists " + std::to_string(m.blocks.size()) + " blocks, the model has " +
                      std::to_string(2 * src.layers), o.measurement_in->string());
    say("measure", 1, 1, "measurement read from " + o.measurement_in->string());
  } else if (o.fast) {
    m = estimated_measurement(src, progress, stop);
    say("measure", 1, 1, "skipped (fast): options ranked by their rounding error on the weights");
  } else if (cp && cp->done().measure_complete) {
    m = cp->measured;
    say("measure", 1, 1, "measurement read from the interrupted conversion");
  } else {
    std::vector<std::vector<float>> mstates = states;
    if (o.measure_rows > 0 && o.measure_rows < int(mstates.size())) mstates.resize(std::size_t(o.measure_rows));
    m = measure(src, *math, std::move(mstates), progress, stop, cp);
  }
  const std::string mjson = measurement_to_json(m);
  if (o.measurement_out) write_file_atomic(*o.measurement_out, mjson);
  ConvertResult res;
  if (o.measure_only) return res;

  const std::uint64_t numel = src.decoder_numel();
  const std::uint64_t budget = std::uint64_t(std::floor(double(numel) * o.bits));
  const OptimizerResult opt = optimize_strategy(m, budget);
  std::vector<BlockOption> strategy;
  for (std::size_t i = 0; i < m.blocks.size(); ++i) {
    const MeasuredOption& mo = m.blocks[i].options[std::size_t(opt.choice[i])];
    strategy.push_back(mo.option);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: option %d, accuracy %.6f", m.blocks[i].key.c_str(), opt.choice[i], mo.accuracy);
    res.strategy.push_back(buf);
  }
  say("optimize", 1, 1, "decoder " + std::to_string(double(opt.total_bits) / double(numel)) + " bpw planned");

  QuantizeOutput q = quantize(src, *math, std::move(states), strategy, o.head_bits, progress, stop, cp);
  set_result_figures(res, q, numel);
  check_stop(stop);

  say("write", 0, 1, "writing " + o.output_dir.string());
  res.files = write_shards_and_copies(o.output_dir, source_dir, q.tensors, o.max_shard_bytes, "output");
  // (A fast conversion has no measurement: its estimate is not written as if it were one.)
  if (!o.fast || o.measurement_in) write_file_atomic(o.output_dir / "measurement.json", mjson);
  write_file_atomic(o.output_dir / "config.json", config_with_quantization(source_dir, o, row_count, o.length));
  res.files.push_back(o.output_dir / "config.json");
  if (cp) cp->remove();
  say("done", 1, 1, "decoder " + std::to_string(res.decoder_bpw) + " bpw, head " + std::to_string(res.head_bpw) + " bpw");
  return res;
}

}  // namespace exl

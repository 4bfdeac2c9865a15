// The state of an interrupted conversion, kept in <output>/.exl-resume so that `exl convert
// --resume` continues where it stopped:
//   job.json                  the options it was started with (they must match) and what is done
//   measurement.json          the measured blocks so far (complete once the pass has ended)
//   measure_states.bin        the unquantized calibration states after the last measured block
//   quantize_states.bin       the quantized model's states after the last checkpointed block
//   blocks/NNNN.safetensors   each quantized block's tensors, written as the block finishes
// Files are replaced atomically and job.json last, so a crash at any point leaves a consistent
// state (at worst the last few blocks are done again).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/tensor_store.h"

namespace exl::convert_detail {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr char kMagic[4] = {'E', 'X', 'L', 'S'};

void write_states(const fs::path& path, const std::vector<std::vector<float>>& states) {
  std::string bytes(kMagic, 4);
  const std::uint32_t rows = std::uint32_t(states.size()), per_row = states.empty() ? 0 : std::uint32_t(states[0].size());
  bytes.append(reinterpret_cast<const char*>(&rows), 4);
  bytes.append(reinterpret_cast<const char*>(&per_row), 4);
  for (const auto& r : states) {
    if (r.size() != per_row) throw Error(ErrorKind::internal, "calibration rows of different lengths", path.string());
    bytes.append(reinterpret_cast<const char*>(r.data()), r.size() * sizeof(float));
  }
  write_file_atomic(path, bytes);
}

std::vector<std::vector<float>> read_states(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  std::uint32_t rows = 0, per_row = 0;
  if (!in.read(magic, 4) || std::memcmp(magic, kMagic, 4) != 0 || !in.read(reinterpret_cast<char*>(&rows), 4) ||
      !in.read(reinterpret_cast<char*>(&per_row), 4))
    throw Error(ErrorKind::format, "not a converter state file", path.string());
  std::vector<std::vector<float>> states(rows, std::vector<float>(per_row));
  for (auto& r : states)
    if (!in.read(reinterpret_cast<char*>(r.data()), std::streamsize(r.size() * sizeof(float))))
      throw Error(ErrorKind::format, "truncated converter state file", path.string());
  return states;
}

std::string block_file(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d.safetensors", index);
  return buf;
}

}  // namespace

}  // namespace exl::convert_detail

namespace exl {

std::filesystem::path conversion_state_dir(const std::filesystem::path& output_dir) {
  return output_dir / ".exl-resume";
}

bool has_conversion_state(const std::filesystem::path& output_dir) {
  std::error_code ec;
  return std::filesystem::exists(conversion_state_dir(output_dir) / "job.json", ec);
}

}  // namespace exl

namespace exl::convert_detail {

Checkpoint::Checkpoint(const fs::path& output_dir, std::string fingerprint, bool resume, double interval_seconds)
    : dir_(conversion_state_dir(output_dir)), fingerprint_(std::move(fingerprint)), interval_(interval_seconds) {
  last_save_ = std::chrono::steady_clock::now();
  std::error_code ec;
  const bool found = has_conversion_state(output_dir);
  if (found && !resume)
    throw Error(ErrorKind::invalid_argument,
                "an interrupted conversion is kept in this output folder: continue it with --resume, or remove " +
                    dir_.string(),
                output_dir.string());
  if (!found) {
    fs::remove_all(dir_, ec);
    fs::create_directories(dir_ / "blocks", ec);
    if (ec) throw Error(ErrorKind::io, "cannot create the conversion state folder: " + ec.message(), dir_.string());
    return;
  }
  json job;
  try {
    std::ifstream in(dir_ / "job.json");
    job = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::format, std::string("unreadable conversion state: ") + e.what(), (dir_ / "job.json").string());
  }
  if (job.value("fingerprint", std::string()) != fingerprint_)
    throw Error(ErrorKind::invalid_argument,
                "the interrupted conversion in this folder was started with other options (input, bits, head bits, "
                "calibration or --fast); start it again with those, or remove " + dir_.string(),
                (dir_ / "job.json").string());
  done_.measured_blocks = job.value("measured_blocks", 0);
  done_.measure_complete = job.value("measure_complete", false);
  done_.quant_blocks = job.value("quantized_blocks", 0);
  done_.decoder_bits = job.value("decoder_bits", std::uint64_t(0));
  done_.last_error = job.value("last_error", 0.0);
  if (done_.measured_blocks > 0) {
    measured = read_measurement(dir_ / "measurement.json");
    if (int(measured.blocks.size()) < done_.measured_blocks)
      throw Error(ErrorKind::format, "the saved measurement is shorter than job.json says", dir_.string());
    measured.blocks.resize(std::size_t(done_.measured_blocks));
    if (!done_.measure_complete) measure_states = read_states(dir_ / "measure_states.bin");
  }
  if (done_.quant_blocks > 0) {
    quant_states = read_states(dir_ / "quantize_states.bin");
    for (int b = 0; b < done_.quant_blocks; ++b) {
      const TensorStore store = TensorStore::open_files({dir_ / "blocks" / block_file(b)});
      for (const std::string& name : store.names()) {
        const TensorInfo& t = store.get(name);
        TensorData d{t.name, t.dtype, t.shape, {}};
        d.bytes.assign(t.data, t.data + t.nbytes);
        quant_tensors.push_back(std::move(d));
      }
    }
  }
  resumed_ = done_.measured_blocks > 0 || done_.quant_blocks > 0;
}

Checkpoint::~Checkpoint() {
  std::error_code ec;
  if (!fs::exists(dir_ / "job.json", ec)) fs::remove_all(dir_, ec);  // never saved: nothing to resume
}

void Checkpoint::write_job() {
  json job;
  job["fingerprint"] = fingerprint_;
  job["measured_blocks"] = done_.measured_blocks;
  job["measure_complete"] = done_.measure_complete;
  job["quantized_blocks"] = done_.quant_blocks;
  job["decoder_bits"] = done_.decoder_bits;
  job["last_error"] = done_.last_error;
  write_file_atomic(dir_ / "job.json", job.dump(1));
  last_save_ = std::chrono::steady_clock::now();
}

bool Checkpoint::due() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save_).count() >= interval_;
}

void Checkpoint::save_measurement(const Measurement& m, const std::vector<std::vector<float>>& states, bool complete) {
  if (!complete && !due()) return;
  write_file_atomic(dir_ / "measurement.json", measurement_to_json(m));
  if (!complete) write_states(dir_ / "measure_states.bin", states);
  done_.measured_blocks = int(m.blocks.size());
  done_.measure_complete = complete;
  write_job();
}

void Checkpoint::save_block(int index, const std::vector<TensorData>& tensors) {
  write_safetensors(dir_ / "blocks" / block_file(index), tensors);
}

void Checkpoint::save_quantized(int done, std::uint64_t bits, double error, const std::vector<std::vector<float>>& states) {
  if (!due()) return;
  write_states(dir_ / "quantize_states.bin", states);
  done_.quant_blocks = done;
  done_.decoder_bits = bits;
  done_.last_error = error;
  write_job();
}

void Checkpoint::remove() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace exl::convert_detail

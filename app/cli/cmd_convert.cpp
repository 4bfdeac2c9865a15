// exl convert: quantize an HF model (FP16/BF16/FP32 safetensors, or a GGUF file) to EXL2 at a
// target bpw with flags like ExLlamaV2's convert.py, or with --format exl3 to EXL3 with
// ExLlamaV3's convert.py flags. Progress lines go to stderr; Ctrl-C cancels between blocks.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stop_token>

#include "commands.h"
#include "exl/convert.h"
#include "exl/error.h"

namespace exl::cli {
namespace {

std::stop_source g_stop;
extern "C" void on_sigint(int) { g_stop.request_stop(); }

std::string flag(const Args& a, const char* short_name, const char* long_name) {
  if (auto v = a.get(short_name)) return *v;
  if (auto v = a.get(long_name)) return *v;
  return {};
}

}  // namespace

int cmd_convert(const Args& a) {
  // args.cpp maps -o to --out and -m to --model.
  ConvertOptions o;
  const std::string format = a.get_or("--format", "exl2");
  if (format != "exl2" && format != "exl3")
    throw Error(ErrorKind::invalid_argument, "unknown format '" + format + "' (exl2 or exl3)", {}, "--format");
  if (format == "exl3") {
    // ExLlamaV3's convert.py flags: -i -o -b -hb -c (calibration text file or folder), -cr / -cc
    // (calibration rows and tokens per row), -cb codebook, --out_scales, -hq, -r / --resume, -ss.
    // -w (its work folder) is accepted: the state of an unfinished conversion stays in OUT/.exl-resume.
    a.check_known({"--format", "-i", "--in_dir", "--out", "--out_dir", "-b", "--bits", "-hb", "--head_bits", "--head-bits",
                   "-c", "--cal", "-cr", "--cal_rows", "-cc", "--cal_cols", "-cb", "--codebook", "--out_scales", "-hq",
                   "--hq", "-r", "--resume", "-w", "--work_dir", "--device", "--threads", "-ss", "--shard_size",
                   "--seed", "-cpi", "--checkpoint_interval"});
    o.format = ConvertFormat::exl3;
    o.rows = 250;  // ExLlamaV3's defaults (as many text rows as the calibration text holds)
    o.length = 2048;
  } else {
    a.check_known({"--format", "-i", "--in_dir", "--out", "--out_dir", "--model", "-b", "--bits", "-hb", "--head-bits",
                   "--head_bits", "-m", "--measurement", "-om", "--output_measurement", "-c", "--cal", "--rows", "-r",
                   "--length", "-l", "--device", "--threads", "-mr", "--measurement_rows", "-ss", "--shard_size",
                   "--fast", "--resume"});
  }
  const bool exl3 = o.format == ConvertFormat::exl3;
  o.input_dir = flag(a, "-i", "--in_dir");
  if (o.input_dir.empty()) throw Error(ErrorKind::invalid_argument, "convert needs -i HF_DIR");
  const std::string out = flag(a, "--out", "--out_dir");
  const std::string om = flag(a, "-om", "--output_measurement");
  if (!om.empty()) o.measurement_out = om;
  if (out.empty()) {
    if (om.empty()) throw Error(ErrorKind::invalid_argument, "convert needs -o OUT_DIR (or -om FILE to only measure)");
    o.measure_only = true;
  }
  o.output_dir = out;
  const std::string bits = flag(a, "-b", "--bits");
  if (!bits.empty()) o.bits = a.get_double(a.has("-b") ? "-b" : "--bits", o.bits);
  const std::string hb = flag(a, "-hb", "--head-bits");
  if (!hb.empty()) o.head_bits = a.get_int(a.has("-hb") ? "-hb" : "--head-bits", o.head_bits);
  else if (a.has("--head_bits")) o.head_bits = a.get_int("--head_bits", o.head_bits);
  const std::string m = flag(a, "--model", "--measurement");
  if (!m.empty()) o.measurement_in = m;
  const std::string cal = flag(a, "-c", "--cal");
  if (!cal.empty()) o.calibration_file = cal;
  // --fast: no measurement pass (options ranked by their rounding error on the weights), only the quantization
  // pass with its Hessian error feedback: a first model in minutes on the CPU.
  o.fast = a.has("--fast");
  // --resume: continue an interrupted conversion from the state kept in OUT_DIR/.exl-resume.
  o.resume = a.has("--resume") || (exl3 && a.has("-r"));
  if (exl3) {
    o.rows = a.has("-cr") ? a.get_int("-cr", o.rows) : a.get_int("--cal_rows", o.rows);
    o.length = a.has("-cc") ? a.get_int("-cc", o.length) : a.get_int("--cal_cols", o.length);
    o.codebook = a.has("-cb") ? a.require("-cb") : a.get_or("--codebook", o.codebook);
    o.out_scales = a.get_or("--out_scales", o.out_scales);
    o.hq = a.has("-hq") || a.has("--hq");
    o.seed = std::uint64_t(a.get_int("--seed", 0));
    if (a.has("-cpi") || a.has("--checkpoint_interval"))
      o.checkpoint_seconds = a.get_double(a.has("-cpi") ? "-cpi" : "--checkpoint_interval", o.checkpoint_seconds);
  } else {
    o.rows = a.has("-r") ? a.get_int("-r", o.rows) : a.get_int("--rows", o.rows);
    o.length = a.has("-l") ? a.get_int("-l", o.length) : a.get_int("--length", o.length);
  }
  o.measure_rows = a.has("-mr") ? a.get_int("-mr", 0) : a.get_int("--measurement_rows", o.measure_rows);
  o.device = a.get_or("--device", "auto");
  o.threads = a.get_int("--threads", 0);
  const int shard_mb = a.has("-ss") ? a.get_int("-ss", 8192) : a.get_int("--shard_size", 8192);
  o.max_shard_bytes = std::uint64_t(std::max(0, shard_mb)) << 20;

  const auto t0 = std::chrono::steady_clock::now();
  auto progress = [&](const ConvertProgress& p) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string eta;
    if (p.steps > 1 && p.step > 0 && p.step < p.steps) {
      char b[48];
      std::snprintf(b, sizeof b, ", ETA %.0f s", s / p.step * (p.steps - p.step));
      eta = b;
    }
    std::fprintf(stderr, " -- [%s %d/%d %.1f s%s] %s\n", p.stage.c_str(), p.step, p.steps, s, eta.c_str(),
                 p.message.c_str());
  };
  std::signal(SIGINT, on_sigint);
  ConvertResult r;
  try {
    r = convert_model(o, progress, g_stop.get_token());
  } catch (const Error& e) {
    if (!o.measure_only && has_conversion_state(o.output_dir))
      std::fprintf(stderr, " -- the finished part is kept in %s: run the same command with --resume to continue\n",
                   conversion_state_dir(o.output_dir).string().c_str());
    throw;
  }
  std::signal(SIGINT, SIG_DFL);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.measure_only) {
    std::printf("measurement written to %s (%.1f s)\n", om.c_str(), secs);
    return 0;
  }
  for (const std::string& s : r.strategy) std::printf("%s\n", s.c_str());
  std::printf("decoder %.4f bpw, head %.4f bpw, %zu files in %s (%.1f s)\n", r.decoder_bpw, r.head_bpw,
              r.files.size(), o.output_dir.string().c_str(), secs);
  return 0;
}

}  // namespace exl::cli

// exl synth: a random-weight EXL2 or EXL3 model of a preset's shapes (engine/src/synth).
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "exl/error.h"
#include "exl/plan.h"
#include "exl/synth.h"

namespace exl::cli {

synth::SynthFormat synth_format(const Args& a) {
  const std::string f = a.get("--format").value_or("exl2");
  if (f == "exl2") return synth::SynthFormat::exl2;
  if (f == "exl3") return synth::SynthFormat::exl3;
  throw Error(ErrorKind::invalid_argument, "unknown format '" + f + "' (exl2 or exl3)", "", "--format");
}

int cmd_synth(const Args& a) {
  a.check_known({"--preset", "--bpw", "-b", "--head-bits", "-hb", "--seed", "--output", "--out", "--shard-size",
                 "--threads", "--list", "--quiet", "--fp16", "--format"});
  if (a.has("--list")) {
    for (const std::string& n : plan::preset_names()) std::printf("%s\n", n.c_str());
    return 0;
  }
  synth::SynthOptions o;
  o.preset = a.require("--preset");
  o.bpw = a.get("-b") ? a.get_double("-b", 4.0) : a.get_double("--bpw", 4.0);
  o.head_bits = a.get("-hb") ? a.get_int("-hb", 6) : a.get_int("--head-bits", 6);
  o.seed = std::uint64_t(a.get_int("--seed", 1));
  const auto out = a.get("--out") ? a.get("--out") : a.get("--output");  // -o is --out
  if (!out) throw Error(ErrorKind::invalid_argument, "missing the output folder", "", "-o");
  o.output_dir = *out;
  const int shard_mb = a.get_int("--shard-size", 8192);
  if (shard_mb < 0) throw Error(ErrorKind::invalid_argument, "must be >= 0 (MiB; 0 = one file)", "", "--shard-size");
  o.max_shard_bytes = std::uint64_t(shard_mb) << 20;
  o.threads = a.get_int("--threads", 0);
  o.fp16 = a.has("--fp16");
  o.format = synth_format(a);  // an FP16 model of the preset's shapes (the converter's input)
  const bool quiet = a.has("--quiet");
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double last_print = -1.0;
  const synth::SynthResult r = synth::synth_model(o, [&](const synth::SynthProgress& p) {
    if (quiet || p.bytes_total == 0) return;
    const int pct = int(100.0 * double(p.bytes_done) / double(p.bytes_total));
    if (p.bytes_done < p.bytes_total && seconds() - last_print < 0.5) return;  // twice a second, and the end
    last_print = seconds();
    std::fprintf(stderr, "\rexl synth: %3d %%  %8.1f / %.1f MB  %5.1f s  %-48.48s", pct, double(p.bytes_done) / 1e6,
                 double(p.bytes_total) / 1e6, seconds(), p.tensor.c_str());
    std::fflush(stderr);
  });
  if (!quiet) std::fprintf(stderr, "\n");
  if (o.fp16) {
    std::printf("wrote %s: %s, FP16, %.1f MB in %zu file(s), %.1f s\n", r.dir.string().c_str(), o.preset.c_str(),
                double(r.bytes) / 1e6, r.files.size(), seconds());
    return 0;
  }
  std::printf("wrote %s: %s, %s, decoder %.3f bpw (asked %.2f), head %.2f bpw, %.1f MB in %zu file(s), %.1f s\n",
              r.dir.string().c_str(), o.preset.c_str(), o.format == synth::SynthFormat::exl3 ? "EXL3" : "EXL2",
              r.decoder_bpw, o.bpw, r.head_bpw, double(r.bytes) / 1e6,
              r.files.size(), seconds());
  return 0;
}

}  // namespace exl::cli

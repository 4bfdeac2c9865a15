// exl import: a GGUF file (llama / qwen2) into an HF-style folder (config.json, tokenizer.json,
// tokenizer_config.json with the chat template, generation_config.json, model.safetensors) that
// every other command loads. Progress lines go to stderr.
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "exl/error.h"
#include "exl/gguf.h"

namespace exl::cli {

int cmd_import(const Args& a) {
  // args.cpp maps -o to --out.
  a.check_known({"-i", "--input", "--out", "--output", "--dtype"});
  auto in = a.get("-i");
  if (!in) in = a.get("--input");
  auto out = a.get("--out");
  if (!out) out = a.get("--output");
  if (!in || !out) throw Error(ErrorKind::invalid_argument, "import needs -i FILE.gguf -o HF_DIR");
  const std::string dt = a.get_or("--dtype", "fp16");
  ImportDType dtype = ImportDType::f16;
  if (dt == "bf16") dtype = ImportDType::bf16;
  else if (dt != "fp16") throw Error(ErrorKind::invalid_argument, "--dtype must be fp16 or bf16", "", "--dtype");
  const auto t0 = std::chrono::steady_clock::now();
  int last_pct = -1;
  import_gguf(*in, *out, dtype, [&](std::size_t done, std::size_t total, const std::string& name) {
    const int pct = total ? int(done * 100 / total) : 100;
    if (pct / 5 != last_pct / 5 || done == total) {
      std::fprintf(stderr, "\rimport: %3d%% (%zu/%zu tensors) %-48.48s", pct, done, total, name.c_str());
      std::fflush(stderr);
      last_pct = pct;
    }
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "\nimport: wrote %s in %.1f s\n", out->c_str(), s);
  return 0;
}

}  // namespace exl::cli

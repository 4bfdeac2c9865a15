// libFuzzer target: the EXL3 loading path on arbitrary bytes. The input is written as one
// safetensors shard, opened through TensorStore (header validation, memory map), and every
// tensor named `<prefix>.trellis` is loaded as an EXL3 layer (load_exl3: dtypes, shapes, bit
// rate, codebook markers, sign vectors, legacy packed signs, bias), once with the features the
// trellis implies and once as a 384 x 384 layer. Layers that load are decoded by the reference
// decoder (at most 64 tiles, each through every state) and run through the reference linear for
// one row, so the decoder's index arithmetic sees arbitrary rates and words. Any exl::Error is an
// accepted outcome; anything else (another exception, a crash, an ASan/UBSan report) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "exl/error.h"
#include "exl/exl3_layer.h"
#include "exl/kernels/exl3.h"
#include "exl/tensor_store.h"

namespace {

void exercise(const exl::TensorStore& store, const std::string& prefix, int in, int out) {
  std::unique_ptr<exl::Exl3Tensors> l;
  try {
    l = exl::load_exl3(store, prefix, in, out);
  } catch (const exl::Error&) {
    return;
  }
  const exl::Exl3Weight& w = l->view;
  if (w.k <= 0 || w.n <= 0 || w.k % 128 || w.n % 128 || !exl::exl3_valid_bits2(w.bits2, w.codebook)) std::abort();
  if (std::int64_t(w.k / 16) * (w.n / 16) > 64) return;  // keep each input fast
  std::vector<exl::half_bits> what(std::size_t(w.k) * w.n);
  exl::exl3_reconstruct_ref(w, what.data());
  std::vector<float> x(std::size_t(w.k), 0.5f), y(std::size_t(w.n));
  exl::exl3_matmul_ref(w, x.data(), 1, y.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz_exl3_" + std::to_string(::getpid()) + ".safetensors");
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  }
  try {
    const exl::TensorStore store = exl::TensorStore::open_files({path});
    for (const std::string& name : store.names()) {
      const std::string suffix = ".trellis";
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string prefix = name.substr(0, name.size() - suffix.size());
      const exl::TensorInfo& t = store.get(name);
      if (t.shape.size() == 3 && t.shape[0] > 0 && t.shape[1] > 0 && t.shape[0] < 4096 && t.shape[1] < 4096)
        exercise(store, prefix, int(t.shape[0]) * 16, int(t.shape[1]) * 16);
      exercise(store, prefix, 384, 384);
    }
  } catch (const exl::Error&) {
  }
  return 0;
}

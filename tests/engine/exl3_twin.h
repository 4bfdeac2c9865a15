// A random-weight EXL3 model of the fixture ref-s's shape and its dense twin, for end-to-end
// checks that need no ExLlamaV3 output: every linear of the EXL3 model is a random trellis (rates
// and codebooks varied across layers: 1.5 ... 8 bits, mul1 / mcg / 3inst, one layer with the
// legacy packed sign words) with random sign x scale vectors; the twin
// stores each layer's exact weight W = diag(suh) H W-hat H diag(svh) (computed in double from the
// reference decoder, rounded once to fp32) as a dense F32 linear. Embedding and norms are ref-s's.
#pragma once
#include <filesystem>

namespace exl::test {

struct Exl3Twin {
  std::filesystem::path exl3;   // the EXL3 model folder
  std::filesystem::path dense;  // its dense twin
};

// Made once per process (under a temporary folder); skips when the fixtures are missing.
const Exl3Twin& exl3_twin();

}  // namespace exl::test

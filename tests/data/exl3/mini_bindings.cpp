// Binds two unmodified ExLlamaV3 1.6.5 entry points (reconstruct, had_r_128) for reference data.
#include <torch/extension.h>
#include "quant/reconstruct.cuh"
void had_r_128(const at::Tensor& input, const at::Tensor& output, const c10::optional<at::Tensor>& pre_scale,
               const c10::optional<at::Tensor>& post_scale, const float scale);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("reconstruct", &reconstruct, "reconstruct");
  m.def("had_r_128", &had_r_128, "had_r_128");
}

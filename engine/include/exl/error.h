// Typed errors of the engine. The engine throws exl::Error (never aborts); every message names
// what was being read: the file, and the tensor or field where it applies.
#pragma once
#include <stdexcept>
#include <string>

namespace exl {

enum class ErrorKind {
  io,               // file missing, unreadable, mmap failed
  format,           // malformed file contents (safetensors header, JSON, GGUF, ...)
  config,           // config.json / tokenizer_config.json field missing or invalid
  unsupported,      // valid input we do not support (model_type, dtype, bit width)
  missing_tensor,   // a tensor the architecture needs is absent
  shape,            // tensor shape or dtype differs from what the architecture needs
  tokenizer,        // tokenizer.json problems
  invalid_argument, // bad argument from a caller (CLI flag, id out of range, ...)
  out_of_memory,    // host or device allocation failed
  device,           // CUDA / cuBLAS failure
  cancelled,
  internal,
};

const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string file = {}, std::string item = {});

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& file() const noexcept { return file_; }
  // The tensor, field or request involved (may be empty).
  const std::string& item() const noexcept { return item_; }

 private:
  ErrorKind kind_;
  std::string file_;
  std::string item_;
};

}  // namespace exl

#include "exl/error.h"

namespace exl {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::io: return "io";
    case ErrorKind::format: return "format";
    case ErrorKind::config: return "config";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::missing_tensor: return "missing_tensor";
    case ErrorKind::shape: return "shape";
    case ErrorKind::tokenizer: return "tokenizer";
    case ErrorKind::invalid_argument: return "invalid_argument";
    case ErrorKind::out_of_memory: return "out_of_memory";
    case ErrorKind::device: return "device";
    case ErrorKind::cancelled: return "cancelled";
    case ErrorKind::internal: return "internal";
  }
  return "unknown";
}

static std::string compose(ErrorKind kind, const std::string& message, const std::string& file,
                           const std::string& item) {
  std::string s;
  if (!file.empty()) s += file + ": ";
  if (!item.empty()) s += item + ": ";
  s += message;
  (void)kind;
  return s;
}

Error::Error(ErrorKind kind, std::string message, std::string file, std::string item)
    : std::runtime_error(compose(kind, message, file, item)),
      kind_(kind),
      file_(std::move(file)),
      item_(std::move(item)) {}

}  // namespace exl

// Helpers for the bad-input format tests: a safetensors file held as (header JSON, data bytes) so
// tests can corrupt real fixture files. (Their temporary folders: TempDir, exl_test.h.)
#pragma once
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "exl_test.h"

namespace exl::test {

inline std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail(__FILE__, __LINE__, "cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) fail(__FILE__, __LINE__, "cannot write " + p.string());
}

// Links every file of `from` into `to` except those listed (which tests then write themselves).
inline void link_folder(const std::filesystem::path& from, const std::filesystem::path& to,
                        const std::vector<std::string>& except = {}) {
  for (const auto& e : std::filesystem::directory_iterator(from)) {
    const auto name = e.path().filename().string();
    if (std::find(except.begin(), except.end(), name) != except.end()) continue;
    std::filesystem::create_symlink(e.path(), to / name);
  }
}

struct StFile {
  nlohmann::json header;
  std::string data;

  static StFile read(const std::filesystem::path& p) {
    const std::string bytes = read_bytes(p);
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    StFile f;
    f.header = nlohmann::json::parse(bytes.substr(8, n));
    f.data = bytes.substr(8 + n);
    return f;
  }
  // The serialized file: 8-byte length, header (space-padded to 8 bytes), data.
  std::string bytes() const {
    std::string h = header.dump();
    while (h.size() % 8) h.push_back(' ');
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = char((std::uint64_t(h.size()) >> (8 * i)) & 0xff);
    return out + h + data;
  }
  void write(const std::filesystem::path& p) const { write_bytes(p, bytes()); }
  std::uint64_t begin(const std::string& tensor) const { return header.at(tensor).at("data_offsets")[0]; }
  template <class T>
  T get(const std::string& tensor, std::size_t i) const {
    T v;
    std::memcpy(&v, data.data() + begin(tensor) + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void set(const std::string& tensor, std::size_t i, T v) {
    std::memcpy(data.data() + begin(tensor) + i * sizeof(T), &v, sizeof(T));
  }
};

}  // namespace exl::test

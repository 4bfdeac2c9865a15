// A model's shape without its weights: config.json and the safetensors headers of a Hub revision, read with
// Range requests into sparse files of the real sizes, which the planner reads like a downloaded folder.
#include <fstream>

#include "exl/hub.h"

namespace exl::hub {

namespace fs = std::filesystem;

void HubClient::fetch_headers(const std::string& repo, const std::string& revision, const fs::path& dir,
                              const std::string& folder) const {
  const std::string prefix = folder.empty() ? std::string() : folder + "/";
  const std::string where = repo + ":" + revision + (folder.empty() ? "" : "/" + folder);
  fs::create_directories(dir);
  bool has_config = false;
  for (const auto& f : files(repo, revision, folder)) {
    if (f.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = f.path.substr(prefix.size());
    if (name.find('/') != std::string::npos) continue;
    const bool safetensors = name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0;
    if (name == "config.json" || name == "model.safetensors.index.json") {
      std::ofstream(dir / name, std::ios::binary) << read_file(repo, revision, f.path);
      has_config |= name == "config.json";
    } else if (safetensors) {
      const std::string len8 = read_range(repo, revision, f.path, 0, 8);
      std::uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(len8[static_cast<std::size_t>(i)]);
      if (n == 0 || n > (100u << 20) || static_cast<std::int64_t>(n + 8) > f.size)
        throw Error(ErrorKind::format, "bad safetensors header length " + std::to_string(n), where, name);
      {
        std::ofstream out(dir / name, std::ios::binary);
        out << len8 << read_range(repo, revision, f.path, 8, static_cast<std::int64_t>(n));
        if (!out.flush()) throw Error(ErrorKind::io, "cannot write", (dir / name).string());
      }
      fs::resize_file(dir / name, static_cast<std::uintmax_t>(f.size));  // the weights stay a hole
    }
  }
  if (!has_config) throw Error(ErrorKind::config, "no config.json in this revision", where);
}

}  // namespace exl::hub

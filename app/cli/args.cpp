#include "args.h"

#include <cctype>
#include <stdexcept>

#include "exl/error.h"

namespace exl::cli {

static std::string canonical(const std::string& flag) {
  // -m -> --model style short aliases
  static const std::map<std::string, std::string> aliases = {
      {"-m", "--model"}, {"-p", "--prompt"}, {"-n", "--max-new-tokens"}, {"-o", "--out"}};
  auto it = aliases.find(flag);
  return it == aliases.end() ? flag : it->second;
}

Args::Args(int argc, char** argv, int first, const std::set<std::string>& switches) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() > 1 && a[0] == '-' && !(std::isdigit(static_cast<unsigned char>(a[1])))) {
      std::string value;
      bool inline_value = false;
      if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        inline_value = true;
      }
      a = canonical(a);
      if (switches.count(a)) {
        values_[a] = inline_value ? value : "1";
      } else if (inline_value) {
        values_[a] = value;
      } else {
        if (i + 1 >= argc) throw Error(ErrorKind::invalid_argument, "missing value", "", a);
        values_[a] = argv[++i];
      }
    } else {
      positional_.push_back(a);
    }
  }
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::string Args::require(const std::string& name) const {
  auto v = get(name);
  if (!v) throw Error(ErrorKind::invalid_argument, "required flag is missing", "", name);
  return *v;
}

int Args::get_int(const std::string& name, int fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  try {
    std::size_t pos = 0;
    const int x = std::stoi(*v, &pos);
    if (pos != v->size()) throw std::invalid_argument("trailing");
    return x;
  } catch (const std::exception&) {
    throw Error(ErrorKind::invalid_argument, "expected an integer, got '" + *v + "'", "", name);
  }
}

double Args::get_double(const std::string& name, double fallback) const {
  auto v = get(name);
  if (!v) return fallback;
  try {
    std::size_t pos = 0;
    const double x = std::stod(*v, &pos);
    if (pos != v->size()) throw std::invalid_argument("trailing");
    return x;
  } catch (const std::exception&) {
    throw Error(ErrorKind::invalid_argument, "expected a number, got '" + *v + "'", "", name);
  }
}

void Args::check_known(const std::set<std::string>& known) const {
  for (const auto& [k, v] : values_)
    if (!known.count(k)) throw Error(ErrorKind::invalid_argument, "unknown option", "", k);
}

std::vector<int> parse_ids(const std::string& text) {
  std::vector<int> ids;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) return;
    try {
      std::size_t pos = 0;
      const long v = std::stol(cur, &pos);
      if (pos != cur.size() || v < 0 || v > 0x7fffffff) throw std::invalid_argument("bad");
      ids.push_back(int(v));
    } catch (const std::exception&) {
      throw Error(ErrorKind::invalid_argument, "not a token id: '" + cur + "'", "", "--ids");
    }
    cur.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '[' || c == ']' || c == '\n' || c == '\t')
      flush();
    else
      cur += c;
  }
  flush();
  return ids;
}

}  // namespace exl::cli

// Minimal command-line parsing for `exl`: flags with values, boolean switches, positionals.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace exl::cli {

class Args {
 public:
  // `switches` are flags without a value; every other --flag/-f takes the next argument.
  Args(int argc, char** argv, int first, const std::set<std::string>& switches);

  bool has(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  std::string require(const std::string& name) const;  // throws invalid_argument naming the flag
  int get_int(const std::string& name, int fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // Throws when a flag was given that is not in `known` (catches typos).
  void check_known(const std::set<std::string>& known) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

std::vector<int> parse_ids(const std::string& text);  // "1,2,3" or "1 2 3" or "[1, 2, 3]"

}  // namespace exl::cli

#include "exl_test.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <system_error>

#include <unistd.h>

#ifndef EXL_DEFAULT_FIXTURES_DIR
#define EXL_DEFAULT_FIXTURES_DIR ""
#endif

namespace exl::test {

std::vector<Case>& registry() {
  static std::vector<Case> r;
  return r;
}

int register_case(const char* suite, const char* name, void (*fn)(), bool needs_gpu) {
  registry().push_back(Case{suite, name, fn, needs_gpu});
  return int(registry().size());
}

Options& options() {
  static Options o = [] {
    Options x;
    const char* req = std::getenv("EXL_REQUIRE_FIXTURES");
    x.require_fixtures = req && std::strcmp(req, "0") != 0 && *req;
    return x;
  }();
  return o;
}

void fail(const char* file, int line, const std::string& what) {
  throw Failed{std::string(file) + ":" + std::to_string(line) + ": " + what};
}

void skip(const std::string& why) { throw Skipped{why}; }

static std::filesystem::path find_fixtures() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (!options().fixtures.empty()) candidates.push_back(options().fixtures);
  if (const char* env = std::getenv("EXL_FIXTURES"); env && *env) candidates.emplace_back(env);
  if (std::strlen(EXL_DEFAULT_FIXTURES_DIR)) candidates.emplace_back(EXL_DEFAULT_FIXTURES_DIR);
  candidates.emplace_back("fixtures");
  candidates.emplace_back(".gpu/fixtures");
  candidates.emplace_back("../shared/fixtures");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "refs", ec)) return fs::absolute(c, ec);
  }
  return {};
}

std::filesystem::path fixtures() {
  static const std::filesystem::path root = find_fixtures();
  if (root.empty()) {
    const std::string why = "fixtures not found (set EXL_FIXTURES to ../shared/fixtures)";
    if (options().require_fixtures) throw Failed{why + " and EXL_REQUIRE_FIXTURES=1"};
    skip(why);
  }
  return root;
}

std::filesystem::path fixture(const std::string& relative) {
  auto p = fixtures() / relative;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) {
    const std::string why = "fixture missing: " + p.string();
    if (options().require_fixtures) throw Failed{why};
    skip(why);
  }
  return p;
}

static bool matches(const Case& c, const std::string& filter) {
  if (filter.empty()) return true;
  const std::string full = c.suite + "." + c.name;
  if (filter == c.suite || filter == full) return true;
  if (filter.back() == '*') return full.rfind(filter.substr(0, filter.size() - 1), 0) == 0;
  return false;
}

int run_all() {
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& c : registry()) {
    if (!matches(c, options().filter)) continue;
    if (options().cases == Options::Cases::gpu_only && !c.needs_gpu) continue;
    if (options().cases == Options::Cases::cpu_only && c.needs_gpu) continue;
    const std::string full = c.suite + "." + c.name;
    if (c.needs_gpu && !options().gpu_available) {
      std::printf("SKIP  %s (needs a CUDA GPU; runs through `exl selftest` on a GPU machine)\n", full.c_str());
      ++skipped;
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::string outcome, detail;
    try {
      c.fn();
      outcome = "PASS";
      ++passed;
    } catch (const Skipped& s) {
      outcome = "SKIP";
      detail = s.why;
      ++skipped;
    } catch (const Failed& f) {
      outcome = "FAIL";
      detail = f.what;
      ++failed;
    } catch (const std::exception& e) {
      outcome = "FAIL";
      detail = std::string("uncaught exception: ") + e.what();
      ++failed;
    } catch (...) {
      outcome = "FAIL";
      detail = "uncaught non-standard exception";
      ++failed;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s  %s (%.0f ms)%s%s\n", outcome.c_str(), full.c_str(), ms, detail.empty() ? "" : ": ",
                detail.c_str());
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}

int main_entry(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--filter" || a == "-f") && i + 1 < argc) {
      options().filter = argv[++i];
    } else if (a == "--fixtures" && i + 1 < argc) {
      options().fixtures = argv[++i];
    } else if (a == "--list") {
      for (const auto& c : registry())
        std::printf("%s.%s%s\n", c.suite.c_str(), c.name.c_str(), c.needs_gpu ? " [gpu]" : "");
      return 0;
    } else if (a == "--verbose" || a == "-v") {
      options().verbose = true;
    } else {
      std::fprintf(stderr, "usage: %s [--filter SUITE[.CASE]|PREFIX*] [--fixtures DIR] [--list]\n", argv[0]);
      return 2;
    }
  }
  return run_all();
}

TempDir::TempDir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace exl::test

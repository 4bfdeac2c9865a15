// A small Qt-free test-case library. Cases are written once and run by ctest (through the
// exl_tests driver: CPU cases run, GPU cases skip with a message) and by `exl selftest` on a
// GPU machine (all cases). Registration is static; link the cases as an OBJECT library.
#pragma once
#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace exl::test {

// True in the AddressSanitizer build: the long end-to-end cases run a smaller form of themselves
// there (same code paths, fewer or smaller runs); the dev build runs them whole.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

struct Case {
  std::string suite;
  std::string name;
  std::function<void()> fn;
  bool needs_gpu = false;
};

std::vector<Case>& registry();
int register_case(const char* suite, const char* name, void (*fn)(), bool needs_gpu);

struct Options {
  std::filesystem::path fixtures;      // empty: search (EXL_FIXTURES, build default, ./fixtures, .gpu/fixtures)
  bool require_fixtures = false;       // EXL_REQUIRE_FIXTURES=1: missing fixtures fail instead of skip
  bool gpu_available = false;          // set by `exl selftest` when the CUDA module loaded
  std::string filter;                  // "suite" or "suite.case" or substring; empty = all
  bool verbose = false;
  enum class Cases { all, gpu_only, cpu_only } cases = Cases::all;  // `exl selftest --device cuda|cpu`
};
Options& options();

// Thrown by SKIP / fixture lookup; the runner reports the case as skipped with the message.
struct Skipped { std::string why; };
// Thrown by failing checks.
struct Failed { std::string what; };

[[noreturn]] void fail(const char* file, int line, const std::string& what);
[[noreturn]] void skip(const std::string& why);

// The fixtures root (../shared/fixtures by default). Skips the case, or fails it when
// EXL_REQUIRE_FIXTURES=1, if the folder is missing.
std::filesystem::path fixtures();
std::filesystem::path fixture(const std::string& relative);  // fixtures()/relative, must exist

// Runs the registered cases matching options().filter. Prints one line per case and a closing
// "N passed, N failed, N skipped" line. Returns 0 when nothing failed.
int run_all();
// Parses --filter/--fixtures/--list/--verbose and calls run_all(). Used by the ctest driver.
int main_entry(int argc, char** argv);

// A fresh folder under the system's temporary folder (<prefix>_<pid>_<n>), removed with
// everything in it when this goes out of scope. A function-local static one lives until the
// process exits, so a suite can share one large artifact (an imported or converted model)
// between its cases and still leave nothing behind.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "exl_test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

template <class A, class B>
std::string describe_pair(const A& a, const B& b) {
  std::ostringstream s;
  s << a << " vs " << b;
  return s.str();
}

}  // namespace exl::test

#define EXL_TEST_CONCAT2(a, b) a##b
#define EXL_TEST_CONCAT(a, b) EXL_TEST_CONCAT2(a, b)

#define EXL_TEST_IMPL(suite, name, gpu)                                                              \
  static void EXL_TEST_CONCAT(exl_case_##suite##_, name)();                                          \
  [[maybe_unused]] static const int EXL_TEST_CONCAT(exl_reg_##suite##_, name) =                      \
      ::exl::test::register_case(#suite, #name, &EXL_TEST_CONCAT(exl_case_##suite##_, name), gpu);   \
  static void EXL_TEST_CONCAT(exl_case_##suite##_, name)()

// A CPU test case.
#define EXL_TEST(suite, name) EXL_TEST_IMPL(suite, name, false)
// A case that needs the CUDA module and a GPU: skipped with a message where there is none.
#define EXL_GPU_TEST(suite, name) EXL_TEST_IMPL(suite, name, true)

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) ::exl::test::fail(__FILE__, __LINE__, "CHECK(" #cond ")");  \
  } while (0)

#define CHECK_MSG(cond, msg)                                                                 \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::ostringstream exl_os_;                                                            \
      exl_os_ << "CHECK(" #cond "): " << msg;                                                \
      ::exl::test::fail(__FILE__, __LINE__, exl_os_.str());                                  \
    }                                                                                        \
  } while (0)

#define CHECK_EQ(a, b)                                                                              \
  do {                                                                                              \
    const auto exl_a_ = (a); /* copies: (a) may name a member of a temporary */                     \
    const auto exl_b_ = (b);                                                                        \
    if (!(exl_a_ == exl_b_))                                                                        \
      ::exl::test::fail(__FILE__, __LINE__,                                                         \
                        "CHECK_EQ(" #a ", " #b "): " + ::exl::test::describe_pair(exl_a_, exl_b_)); \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                        \
  do {                                                                                               \
    const double exl_a_ = double(a), exl_b_ = double(b);                                             \
    if (!(std::fabs(exl_a_ - exl_b_) <= double(tol)))                                                \
      ::exl::test::fail(__FILE__, __LINE__, "CHECK_NEAR(" #a ", " #b ", " #tol "): " +               \
                                                ::exl::test::describe_pair(exl_a_, exl_b_));         \
  } while (0)

// Checks that `expr` throws exl::Error of the given ErrorKind (e.g. exl::ErrorKind::format) and
// that its message contains `needle`.
#define CHECK_THROWS_ERROR(expr, error_kind, needle)                                                 \
  do {                                                                                               \
    bool exl_thrown_ = false;                                                                        \
    try {                                                                                            \
      (void)(expr);                                                                                  \
    } catch (const ::exl::Error& e) {                                                                \
      exl_thrown_ = true;                                                                            \
      if (e.kind() != (error_kind))                                                                  \
        ::exl::test::fail(__FILE__, __LINE__,                                                        \
                          std::string("wrong error kind ") + ::exl::error_kind_name(e.kind()) +      \
                              ": " + e.what());                                                      \
      if (std::string(e.what()).find(needle) == std::string::npos)                                   \
        ::exl::test::fail(__FILE__, __LINE__,                                                        \
                          std::string("error message lacks '") + (needle) + "': " + e.what());       \
    } catch (const std::exception& e) {                                                              \
      ::exl::test::fail(__FILE__, __LINE__, std::string("non-exl exception: ") + e.what());          \
    }                                                                                                \
    if (!exl_thrown_) ::exl::test::fail(__FILE__, __LINE__, "expected exl::Error from " #expr);      \
  } while (0)

#define SKIP(msg) ::exl::test::skip(msg)

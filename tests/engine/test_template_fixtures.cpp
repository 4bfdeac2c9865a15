// Every case of every real chat template in fixtures/chat_templates renders byte-identically to
// what Python's Jinja2 produced in transformers' environment (or raises the same message).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "exl/chat_template.h"
#include "exl_test.h"

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::tm fixture_now() {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 15;
  tm.tm_min = 9;
  tm.tm_sec = 26;
  tm.tm_wday = 5;  // Friday
  tm.tm_yday = 72;
  return tm;
}

// Renders all cases of one folder; returns a description of each mismatch.
std::vector<std::string> run_folder(const std::filesystem::path& dir, int& cases) {
  std::vector<std::string> failures;
  exl::ChatTemplateOptions options;
  options.now = fixture_now();
  std::unique_ptr<exl::ChatTemplate> tpl;
  try {
    tpl = std::make_unique<exl::ChatTemplate>(read_file(dir / "template.jinja"), options);
  } catch (const exl::Error& e) {
    return {dir.filename().string() + ": compile failed: " + e.what()};
  }
  auto all = nlohmann::ordered_json::parse(read_file(dir / "cases.json"));
  for (const auto& c : all) {
    ++cases;
    std::string name = dir.filename().string() + "/" + c["name"].get<std::string>();
    // tools/documents (none when absent, set by render_chat) then the case's extra variables.
    nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
    if (c.contains("tools")) ordered["tools"] = c["tools"];
    if (c.contains("documents")) ordered["documents"] = c["documents"];
    if (c.contains("extra"))
      for (auto it = c["extra"].begin(); it != c["extra"].end(); ++it) ordered[it.key()] = it.value();
    std::optional<std::string> bos, eos;
    if (c.contains("bos_token") && c["bos_token"].is_string()) bos = c["bos_token"].get<std::string>();
    if (c.contains("eos_token") && c["eos_token"].is_string()) eos = c["eos_token"].get<std::string>();
    try {
      std::string got = tpl->render_chat(c["messages"], c["add_generation_prompt"].get<bool>(), bos, eos, ordered);
      if (c.contains("error")) failures.push_back(name + ": expected error '" + c["error"].get<std::string>() + "', rendered instead");
      else if (got != c["expected"].get<std::string>())
        failures.push_back(name + ": mismatch\n--- got ---\n" + got + "\n--- expected ---\n" + c["expected"].get<std::string>());
    } catch (const exl::TemplateRaised& e) {
      if (!c.contains("error")) failures.push_back(name + ": unexpected raise: " + e.what());
      else if (c.value("error_type", "") == "TemplateError" && e.what() != c["error"].get<std::string>())
        failures.push_back(name + ": raised '" + e.what() + "', expected '" + c["error"].get<std::string>() + "'");
    } catch (const exl::Error& e) {
      if (!c.contains("error") || c.value("error_type", "") == "TemplateError")
        failures.push_back(name + ": error: " + e.what());
    }
  }
  return failures;
}

}  // namespace

EXL_TEST(template, fixtures_render_like_jinja2) {
  auto root = exl::test::fixture("chat_templates");
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (e.is_directory() && std::filesystem::exists(e.path() / "cases.json")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  CHECK(dirs.size() >= 40);
  int cases = 0;
  std::vector<std::string> failures;
  for (const auto& d : dirs) {
    auto f = run_folder(d, cases);
    failures.insert(failures.end(), f.begin(), f.end());
  }
  std::string report;
  for (const auto& f : failures) report += f + "\n";
  CHECK_MSG(failures.empty(), failures.size() << " of " << cases << " cases failed:\n" << report);
  CHECK(cases >= 300);
}

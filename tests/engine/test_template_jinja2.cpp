// Templates written to stress whitespace control (dashes, trim_blocks/lstrip_blocks, '+', blank
// lines, CRLF, block set), nested loops (loop variables, filtering, break/continue, else, scoping),
// macros (defaults, keyword arguments, recursion, caller with arguments) and namespaces, rendered
// by our interpreter and compared byte for byte with what Python's Jinja2 renders for them in
// transformers' environment. The expected texts are produced by
// tests/data/template_jinja2/make_expected.py (Jinja2 itself), never by this code.
#include <fstream>
#include <set>
#include <sstream>

#include "exl/chat_template.h"
#include "exl_test.h"

#ifndef EXL_TEMPLATE_JINJA2_DATA
#define EXL_TEMPLATE_JINJA2_DATA "tests/data/template_jinja2"
#endif

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

EXL_TEST(template, templates_match_python_jinja2) {
  const std::filesystem::path dir = EXL_TEMPLATE_JINJA2_DATA;
  CHECK(std::filesystem::exists(dir / "expected.json"));
  const auto all = nlohmann::ordered_json::parse(slurp(dir / "expected.json"));
  int cases = 0, raising = 0;
  std::set<std::string> templates;
  for (const auto& c : all["cases"]) {
    ++cases;
    const std::string tname = c["template"].get<std::string>();
    templates.insert(tname);
    const std::string name = tname + "/" + c["case"].get<std::string>();
    std::string got;
    try {
      got = exl::ChatTemplate(slurp(dir / "templates" / (tname + ".jinja"))).render(c["context"]);
    } catch (const exl::TemplateRaised& e) {
      ++raising;
      CHECK_MSG(c.contains("error"), name << ": unexpected raise: " << e.what());
      if (c.contains("error")) CHECK_EQ(std::string(e.what()), c["error"].get<std::string>());
      continue;
    } catch (const exl::Error& e) {
      CHECK_MSG(false, name << ": " << e.what());
      continue;
    }
    CHECK_MSG(c.contains("expected"), name << ": rendered, but Jinja2 raised " << c.value("error", ""));
    if (c.contains("expected"))
      CHECK_MSG(got == c["expected"].get<std::string>(),
                name << ": mismatch\n--- got ---\n" << got << "\n--- Jinja2 ---\n" << c["expected"].get<std::string>());
  }
  CHECK(templates.size() >= 14);
  CHECK(cases >= 19);
  CHECK(raising >= 1);
}

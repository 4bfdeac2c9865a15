// `exl template`: renders a chat template with a conversation, exactly as transformers'
// apply_chat_template(..., tokenize=False) does with Python's Jinja2. Prints the prompt with no
// newline added; errors (with the template line and column) go to stderr, exit status 1.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "exl/chat_template.h"
#include "exl/error.h"
#include "exl/tokenizer.h"

namespace exl::cli {

namespace {

using ojson = nlohmann::ordered_json;

std::string read_text(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot read file", path, flag);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// JSON file (object keys keep their order: templates iterate dicts in insertion order).
ojson read_json(const std::string& path, const char* flag) {
  const std::string text = read_text(path, flag);
  try {
    return ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_argument, std::string("invalid JSON: ") + e.what(), path, flag);
  }
}

// "YYYY-MM-DD HH:MM:SS" -> broken-down time with weekday and day of year filled in.
std::tm parse_now(const std::string& text) {
  std::tm tm{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail) != 6 || mo < 1 ||
      mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || h < 0 || mi < 0 || s < 0)
    throw Error(ErrorKind::invalid_argument, "expected \"YYYY-MM-DD HH:MM:SS\", got \"" + text + "\"", "", "--now");
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  // timegm normalises and fills tm_wday/tm_yday (UTC arithmetic: no time zone is involved).
  std::tm norm = tm;
  const std::time_t t = timegm(&norm);
  std::tm out{};
  gmtime_r(&t, &out);
  if (out.tm_mday != d || out.tm_mon != mo - 1)
    throw Error(ErrorKind::invalid_argument, "no such date: \"" + text + "\"", "", "--now");
  return out;
}

}  // namespace

int cmd_template(const Args& a) {
  a.check_known({"--model", "--template", "--messages", "--add-generation-prompt", "--bos-token", "--eos-token",
                 "--tools", "--vars", "--now"});
  const bool from_model = a.has("--model"), from_file = a.has("--template");
  if (from_model == from_file)
    throw Error(ErrorKind::invalid_argument, "give exactly one of -m DIR (the model's template) or --template FILE");
  std::string source;
  if (from_file) {
    source = read_text(*a.get("--template"), "--template");
  } else {
    auto tok = Tokenizer::from_dir(*a.get("--model"));
    source = tok->chat_template();
    if (source.empty())
      throw Error(ErrorKind::config, "the model ships no chat template (tokenizer_config.json \"chat_template\")",
                  *a.get("--model"), "--model");
  }
  const ojson messages = read_json(a.require("--messages"), "--messages");
  if (!messages.is_array())
    throw Error(ErrorKind::invalid_argument, "expected a JSON array of messages", *a.get("--messages"), "--messages");

  ojson extra = ojson::object();
  if (auto f = a.get("--tools")) extra["tools"] = read_json(*f, "--tools");
  if (auto f = a.get("--vars")) {
    const ojson vars = read_json(*f, "--vars");
    if (!vars.is_object())
      throw Error(ErrorKind::invalid_argument, "expected a JSON object of variables", *f, "--vars");
    for (auto it = vars.begin(); it != vars.end(); ++it) extra[it.key()] = it.value();
  }
  ChatTemplateOptions options;
  if (auto now = a.get("--now")) options.now = parse_now(*now);

  const ChatTemplate tpl(source, options);  // syntax errors: "template syntax error at line L, column C: ..."
  std::string text;
  try {
    text = tpl.render_chat(messages, a.has("--add-generation-prompt"), a.get("--bos-token"), a.get("--eos-token"),
                           extra);
  } catch (const TemplateRaised& e) {
    std::fprintf(stderr, "exl template: the template raised an exception at line %d, column %d: %s\n", e.line(),
                 e.column(), e.what());
    return 1;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace exl::cli

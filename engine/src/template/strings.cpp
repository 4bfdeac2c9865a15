// Python string behaviour for templates. Case mapping covers the scripts prompts use most
// (ASCII, Latin-1, Greek, Cyrillic); other characters are left unchanged.
#include "template/strings.h"

#include <cstdio>

#include "template/errors.h"
#include "template/interpreter.h"

namespace exl::tpl {
namespace {

char32_t to_upper_cp(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}
char32_t to_lower_cp(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}
bool is_cased(char32_t c) { return to_upper_cp(c) != c || to_lower_cp(c) != c || c == 0xDF; }

template <class F>
std::string map_cp(const std::string& s, F f) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : utf8_decode(s)) utf8_append(out, f(c));
  return out;
}

}  // namespace

std::string py_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  std::u32string u = utf8_decode(s);
  std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
  auto strip_it = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_py_space(c); };
  size_t b = 0, e = u.size();
  if (left) while (b < e && strip_it(u[b])) ++b;
  if (right) while (e > b && strip_it(u[e - 1])) --e;
  return utf8_encode(u.substr(b, e - b));
}

std::vector<std::string> py_split(const std::string& s, const std::string* sep, int64_t maxsplit, bool from_right) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) fail("empty separator");
    if (!from_right) {
      size_t pos = 0;
      while (maxsplit < 0 || int64_t(out.size()) < maxsplit) {
        size_t at = s.find(*sep, pos);
        if (at == std::string::npos) break;
        out.push_back(s.substr(pos, at - pos));
        pos = at + sep->size();
      }
      out.push_back(s.substr(pos));
    } else {
      size_t end = s.size();
      while (maxsplit < 0 || int64_t(out.size()) < maxsplit) {
        if (end < sep->size()) break;
        size_t at = s.rfind(*sep, end - sep->size());
        if (at == std::string::npos) break;
        out.insert(out.begin(), s.substr(at + sep->size(), end - at - sep->size()));
        end = at;
      }
      out.insert(out.begin(), s.substr(0, end));
    }
    return out;
  }
  // Whitespace split: runs of Unicode whitespace, no empty strings.
  std::u32string u = utf8_decode(s);
  if (from_right) {
    size_t e = u.size();
    while (true) {
      while (e > 0 && is_py_space(u[e - 1])) --e;
      if (e == 0) break;
      size_t b = e;
      if (maxsplit >= 0 && int64_t(out.size()) >= maxsplit) {
        out.insert(out.begin(), utf8_encode(u.substr(0, e)));
        break;
      }
      while (b > 0 && !is_py_space(u[b - 1])) --b;
      out.insert(out.begin(), utf8_encode(u.substr(b, e - b)));
      e = b;
    }
    return out;
  }
  size_t k = 0;
  while (true) {
    while (k < u.size() && is_py_space(u[k])) ++k;
    if (k >= u.size()) break;
    if (maxsplit >= 0 && int64_t(out.size()) >= maxsplit) {
      size_t e = u.size();
      while (e > k && is_py_space(u[e - 1])) --e;
      out.push_back(utf8_encode(u.substr(k, e - k)));
      break;
    }
    size_t b = k;
    while (k < u.size() && !is_py_space(u[k])) ++k;
    out.push_back(utf8_encode(u.substr(b, k - b)));
  }
  return out;
}

std::vector<std::string> py_splitlines(const std::string& s) {
  std::vector<std::string> out;
  std::u32string u = utf8_decode(s), cur;
  for (size_t k = 0; k < u.size(); ++k) {
    char32_t c = u[k];
    bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
               c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!brk) { cur += c; continue; }
    if (c == '\r' && k + 1 < u.size() && u[k + 1] == '\n') ++k;
    out.push_back(utf8_encode(cur));
    cur.clear();
  }
  if (!cur.empty()) out.push_back(utf8_encode(cur));
  return out;
}

std::string py_upper(const std::string& s) { return map_cp(s, to_upper_cp); }
std::string py_lower(const std::string& s) { return map_cp(s, to_lower_cp); }
std::string py_swapcase(const std::string& s) {
  return map_cp(s, [](char32_t c) { char32_t u = to_upper_cp(c); return u != c ? u : to_lower_cp(c); });
}

std::string py_title(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t c : utf8_decode(s)) {
    utf8_append(out, prev_cased ? to_lower_cp(c) : to_upper_cp(c));
    prev_cased = is_cased(c);
  }
  return out;
}

std::string jinja_title(const std::string& s) {
  std::string out;
  bool word_start = true;
  for (char32_t c : utf8_decode(s)) {
    bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_py_space(c);
    if (sep) { utf8_append(out, c); word_start = true; continue; }
    utf8_append(out, word_start ? to_upper_cp(c) : to_lower_cp(c));
    word_start = false;
  }
  return out;
}

std::string py_capitalize(const std::string& s) {
  std::string out;
  bool first = true;
  for (char32_t c : utf8_decode(s)) {
    utf8_append(out, first ? to_upper_cp(c) : to_lower_cp(c));
    first = false;
  }
  return out;
}

std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count,
                       Interpreter& in) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between characters and at both ends.
    std::u32string u = utf8_decode(s);
    int64_t done = 0;
    for (size_t k = 0; k <= u.size(); ++k) {
      if (count < 0 || done < count) { out += to; ++done; }
      if (k < u.size()) utf8_append(out, u[k]);
      in.check_size(out.size());
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t at = s.find(from, pos);
    if (at == std::string::npos) break;
    out.append(s, pos, at - pos);
    out += to;
    in.check_size(out.size());
    pos = at + from.size();
    ++done;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

int64_t py_count(const std::string& s, const std::string& sub) {
  if (sub.empty()) return int64_t(utf8_length(s)) + 1;
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
  return n;
}

std::string py_format(const std::string& fmt, CallArgs& args, Interpreter& in) {
  std::string out;
  size_t auto_index = 0;
  for (size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '}' ) {
      if (k + 1 < fmt.size() && fmt[k + 1] == '}') { out += '}'; ++k; continue; }
      fail("Single '}' encountered in format string");
    }
    if (c != '{') { out += c; continue; }
    if (k + 1 < fmt.size() && fmt[k + 1] == '{') { out += '{'; ++k; continue; }
    size_t close = fmt.find('}', k);
    if (close == std::string::npos) fail("Single '{' encountered in format string");
    std::string field = fmt.substr(k + 1, close - k - 1);
    if (field.find(':') != std::string::npos || field.find('!') != std::string::npos)
      fail("format specifications are not supported in templates");
    const Value* v = nullptr;
    if (field.empty()) v = args.get(auto_index++, nullptr);
    else if (std::isdigit(static_cast<unsigned char>(field[0]))) v = args.get(size_t(std::stoul(field.substr(0, 6))), nullptr);
    else for (const auto& [kn, kv] : args.kw) if (kn == field) v = &kv;
    if (!v) fail("format: missing argument '" + field + "'");
    out += to_str(*v);
    in.check_size(out.size());
    k = close;
  }
  return out;
}

bool py_is_class(const std::string& s, const std::string& method) {
  std::u32string u = utf8_decode(s);
  if (u.empty()) return false;
  bool any_cased = false;
  for (char32_t c : u) {
    bool digit = c >= '0' && c <= '9';
    bool alpha = is_cased(c) || (c > 0x7F && !is_py_space(c) && !digit);
    if (method == "isdigit" && !digit) return false;
    if (method == "isalpha" && !alpha) return false;
    if (method == "isalnum" && !(alpha || digit)) return false;
    if (method == "isspace" && !is_py_space(c)) return false;
    if (method == "islower" && to_lower_cp(c) != c) return false;
    if (method == "isupper" && to_upper_cp(c) != c) return false;
    any_cased = any_cased || is_cased(c);
  }
  if (method == "islower" || method == "isupper") return any_cased;
  return true;
}

std::string py_strftime(const std::string& fmt, const std::tm& tm) {
  static const char* days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
  static const char* months[] = {"January", "February", "March", "April", "May", "June", "July",
                                 "August", "September", "October", "November", "December"};
  std::string out;
  char buf[32];
  int wday = ((tm.tm_wday % 7) + 7) % 7, mon = ((tm.tm_mon % 12) + 12) % 12;
  for (size_t k = 0; k < fmt.size(); ++k) {
    if (fmt[k] != '%' || k + 1 >= fmt.size()) { out += fmt[k]; continue; }
    char c = fmt[++k];
    bool no_pad = false;
    if (c == '-' && k + 1 < fmt.size()) { no_pad = true; c = fmt[++k]; }
    auto num = [&](int v, int width) {
      std::snprintf(buf, sizeof buf, no_pad ? "%d" : (width == 3 ? "%03d" : "%02d"), v);
      out += buf;
    };
    switch (c) {
      case 'Y': std::snprintf(buf, sizeof buf, "%d", tm.tm_year + 1900); out += buf; break;
      case 'y': num((tm.tm_year + 1900) % 100, 2); break;
      case 'm': num(tm.tm_mon + 1, 2); break;
      case 'd': num(tm.tm_mday, 2); break;
      case 'e': std::snprintf(buf, sizeof buf, "%2d", tm.tm_mday); out += buf; break;
      case 'H': num(tm.tm_hour, 2); break;
      case 'I': num(tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12, 2); break;
      case 'M': num(tm.tm_min, 2); break;
      case 'S': num(tm.tm_sec, 2); break;
      case 'j': num(tm.tm_yday + 1, 3); break;
      case 'p': out += tm.tm_hour < 12 ? "AM" : "PM"; break;
      case 'a': out += std::string(days[wday]).substr(0, 3); break;
      case 'A': out += days[wday]; break;
      case 'b': case 'h': out += std::string(months[mon]).substr(0, 3); break;
      case 'B': out += months[mon]; break;
      case 'w': out += char('0' + wday); break;
      case 'F': std::snprintf(buf, sizeof buf, "%d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday); out += buf; break;
      case 'T': std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec); out += buf; break;
      case 'D': std::snprintf(buf, sizeof buf, "%02d/%02d/%02d", tm.tm_mon + 1, tm.tm_mday, (tm.tm_year + 1900) % 100); out += buf; break;
      case '%': out += '%'; break;
      case 'Z': case 'z': break;  // naive time: empty, as Python prints it
      default: out += '%'; if (no_pad) out += '-'; out += c;
    }
  }
  return out;
}

}  // namespace exl::tpl

// Jinja2's built-in filters over sequences and mappings: list, join, first, last, map,
// select/reject and their attr forms, items, dictsort, sort, unique, reverse, batch, min, max, sum.
#include <algorithm>

#include "template/errors.h"
#include "template/filters.h"
#include "template/interpreter.h"
#include "template/strings.h"

namespace exl::tpl::filter {
namespace {

Value f_list(Interpreter&, const Value& v, CallArgs&) { return Value::make_list(iterate(v)); }

Value f_join(Interpreter& in, const Value& v, CallArgs& a) {
  std::string sep = str(arg(a, 0, "d", Value::string("")));
  const Value& attribute = arg(a, 1, "attribute", kNone);
  std::string out;
  bool first = true;
  for (const auto& x : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += str(attribute.is_none() ? x : attr_path(x, str(attribute)));
    in.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_first(Interpreter&, const Value& v, CallArgs&) {
  List items = iterate(v);
  return items.empty() ? Value::undefined("first") : items.front();
}
Value f_last(Interpreter&, const Value& v, CallArgs&) {
  List items = iterate(v);
  return items.empty() ? Value::undefined("last") : items.back();
}

Value f_map(Interpreter& in, const Value& v, CallArgs& a) {
  List out;
  if (const Value* attribute = a.get(size_t(-1), "attribute")) {
    const Value& def = arg(a, size_t(-1), "default", Value::undefined());
    for (const auto& x : iterate(v)) {
      Value r = attr_path(x, str(*attribute));
      out.push_back(r.is_undefined() && !def.is_undefined() ? def : r);
    }
    return Value::make_list(std::move(out));
  }
  if (a.pos.empty()) fail("map requires a filter name or attribute=");
  std::string name = str(a.pos[0]);
  CallArgs rest;
  rest.pos.assign(a.pos.begin() + 1, a.pos.end());
  rest.kw = a.kw;
  for (const auto& x : iterate(v)) out.push_back(apply_filter(in, name, x, rest));
  return Value::make_list(std::move(out));
}

// select/reject/selectattr/rejectattr
Value select_impl(Interpreter& in, const Value& v, CallArgs& a, bool by_attr, bool keep) {
  size_t k = 0;
  std::string attribute;
  if (by_attr) {
    if (a.pos.empty()) fail("selectattr needs an attribute name");
    attribute = str(a.pos[k++]);
  }
  std::string test = k < a.pos.size() ? str(a.pos[k++]) : "";
  CallArgs rest;
  rest.pos.assign(a.pos.begin() + long(std::min(k, a.pos.size())), a.pos.end());
  rest.kw = a.kw;
  List out;
  for (const auto& x : iterate(v)) {
    Value subject = by_attr ? attr_path(x, attribute) : x;
    bool ok = test.empty() ? truthy(subject) : apply_test(in, test, subject, rest);
    if (ok == keep) out.push_back(x);
  }
  return Value::make_list(std::move(out));
}
Value f_select(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }

Value f_items(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::make_list();
  if (!v.is_dict() || v.is_namespace) fail("items filter needs a mapping");
  List out;
  for (const auto& [k, x] : v.dict->items) out.push_back(Value::make_tuple({k, x}));
  return Value::make_list(std::move(out));
}

Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(py_lower(v.s));
  return v;
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& a) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  bool by_value = str(arg(a, 1, "by", Value::string("key"))) == "value";
  bool reverse = truthy(arg(a, 2, "reverse", Value::boolean(false)));
  if (!v.is_dict()) fail("dictsort needs a mapping");
  List out;
  for (const auto& [k, x] : v.dict->items) out.push_back(Value::make_tuple({k, x}));
  std::stable_sort(out.begin(), out.end(), [&](const Value& l, const Value& r) {
    size_t i = by_value ? 1 : 0;
    int c = compare(sort_key((*l.list)[i], cs), sort_key((*r.list)[i], cs));
    return reverse ? c > 0 : c < 0;
  });
  return Value::make_list(std::move(out));
}

Value f_sort(Interpreter&, const Value& v, CallArgs& a) {
  bool reverse = truthy(arg(a, 0, "reverse", Value::boolean(false)));
  bool cs = truthy(arg(a, 1, "case_sensitive", Value::boolean(false)));
  const Value& attribute = arg(a, 2, "attribute", kNone);
  List out = iterate(v);
  std::stable_sort(out.begin(), out.end(), [&](const Value& l, const Value& r) {
    Value x = attribute.is_none() ? l : attr_path(l, str(attribute));
    Value y = attribute.is_none() ? r : attr_path(r, str(attribute));
    int c = compare(sort_key(x, cs), sort_key(y, cs));
    return reverse ? c > 0 : c < 0;
  });
  return Value::make_list(std::move(out));
}

Value f_unique(Interpreter&, const Value& v, CallArgs& a) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  List out;
  for (const auto& x : iterate(v)) {
    bool seen = false;
    for (const auto& y : out) seen = seen || equals(sort_key(x, cs), sort_key(y, cs));
    if (!seen) out.push_back(x);
  }
  return Value::make_list(std::move(out));
}

Value f_reverse(Interpreter&, const Value& v, CallArgs&) {
  if (v.is_string()) {
    std::u32string u = utf8_decode(v.s);
    std::reverse(u.begin(), u.end());
    return Value::string(utf8_encode(u));
  }
  List out = iterate(v);
  std::reverse(out.begin(), out.end());
  return Value::make_list(std::move(out));
}

Value f_batch(Interpreter&, const Value& v, CallArgs& a) {
  int64_t n = int_arg(a, 0, "linecount", 1);
  if (n <= 0) fail("batch size must be positive");
  const Value* fill = a.get(1, "fill_with");
  List out, cur;
  for (const auto& x : iterate(v)) {
    cur.push_back(x);
    if (int64_t(cur.size()) == n) { out.push_back(Value::make_list(std::move(cur))); cur.clear(); }
  }
  if (!cur.empty()) {
    while (fill && int64_t(cur.size()) < n) cur.push_back(*fill);
    out.push_back(Value::make_list(std::move(cur)));
  }
  return Value::make_list(std::move(out));
}

Value minmax(const Value& v, CallArgs& a, bool want_max) {
  bool cs = truthy(arg(a, 0, "case_sensitive", Value::boolean(false)));
  const Value& attribute = arg(a, 1, "attribute", kNone);
  List items = iterate(v);
  if (items.empty()) return Value::undefined("min");
  size_t best = 0;
  for (size_t k = 1; k < items.size(); ++k) {
    Value x = attribute.is_none() ? items[k] : attr_path(items[k], str(attribute));
    Value y = attribute.is_none() ? items[best] : attr_path(items[best], str(attribute));
    int c = compare(sort_key(x, cs), sort_key(y, cs));
    if (want_max ? c > 0 : c < 0) best = k;
  }
  return items[best];
}
Value f_min(Interpreter&, const Value& v, CallArgs& a) { return minmax(v, a, false); }
Value f_max(Interpreter&, const Value& v, CallArgs& a) { return minmax(v, a, true); }

Value f_sum(Interpreter& in, const Value& v, CallArgs& a) {
  const Value& attribute = arg(a, 0, "attribute", kNone);
  Value total = arg(a, 1, "start", Value::integer(0));
  for (const auto& x : iterate(v))
    total = binary_op("+", total, attribute.is_none() ? x : attr_path(x, str(attribute)), in);
  return total;
}

}  // namespace

void add_sequence_filters(Table& t) {
  const Table sequence = {
      {"list", f_list}, {"join", f_join}, {"first", f_first}, {"last", f_last}, {"map", f_map},
      {"select", f_select}, {"reject", f_reject}, {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr},
      {"items", f_items}, {"dictsort", f_dictsort}, {"sort", f_sort}, {"unique", f_unique},
      {"reverse", f_reverse}, {"batch", f_batch}, {"min", f_min}, {"max", f_max}, {"sum", f_sum},
  };
  t.insert(sequence.begin(), sequence.end());
}

}  // namespace exl::tpl::filter

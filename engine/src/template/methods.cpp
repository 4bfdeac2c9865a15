// Attribute lookup and the Python methods templates call on values ("x".strip(), d.items(),
// d.get(k)), plus the globals transformers provides: range, dict, namespace, raise_exception,
// strftime_now. Jinja's ImmutableSandboxedEnvironment refuses methods that mutate lists/dicts.
#include <algorithm>
#include <set>

#include "template/errors.h"
#include "template/interpreter.h"
#include "template/strings.h"

namespace exl::tpl {
namespace {

Value arg(CallArgs& a, size_t k, const char* name, const Value& def) {
  const Value* v = a.get(k, name);
  return v ? *v : def;
}

Value bound(const std::string& name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  return Value::callable(name, std::move(fn));
}

[[noreturn]] void refused(const std::string& type, const std::string& name) {
  fail("access to " + type + "." + name + " is unsafe: templates may not modify " + type + " objects");
}

Value string_method(const std::string& self, const std::string& name) {
  static const std::set<std::string> known = {
      "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "upper", "lower",
      "title", "capitalize", "replace", "format", "join", "find", "rfind", "count", "isdigit",
      "isalpha", "isalnum", "isspace", "islower", "isupper", "splitlines", "index", "swapcase"};
  if (!known.count(name)) return Value::undefined(name);
  return bound(name, [self, name](Interpreter& in, CallArgs& a) -> Value {
    static const Value none = Value::none();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      const Value& chars = arg(a, 0, "chars", none);
      if (!chars.is_none() && !chars.is_string()) fail(name + " arg must be None or str");
      return Value::string(py_strip(self, chars.is_none() ? nullptr : &chars.s, name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
      const Value& sep = arg(a, 0, "sep", none);
      const Value& maxsplit = arg(a, 1, "maxsplit", Value::integer(-1));
      List parts;
      for (auto& p : py_split(self, sep.is_none() ? nullptr : &sep.s, maxsplit.i, name == "rsplit"))
        parts.push_back(Value::string(std::move(p)));
      return Value::make_list(std::move(parts));
    }
    if (name == "splitlines") {
      List parts;
      for (auto& p : py_splitlines(self)) parts.push_back(Value::string(std::move(p)));
      return Value::make_list(std::move(parts));
    }
    if (name == "startswith" || name == "endswith") {
      const Value& x = arg(a, 0, "prefix", none);
      List options = x.is_list() ? *x.list : List{x};
      for (const auto& o : options) {
        if (!o.is_string()) fail(name + " first arg must be str or a tuple of str");
        bool hit = name == "startswith" ? self.compare(0, o.s.size(), o.s) == 0 && self.size() >= o.s.size()
                                        : self.size() >= o.s.size() && self.compare(self.size() - o.s.size(), o.s.size(), o.s) == 0;
        if (hit) return Value::boolean(true);
      }
      return Value::boolean(false);
    }
    if (name == "upper") return Value::string(py_upper(self));
    if (name == "lower") return Value::string(py_lower(self));
    if (name == "swapcase") return Value::string(py_swapcase(self));
    if (name == "title") return Value::string(py_title(self));
    if (name == "capitalize") return Value::string(py_capitalize(self));
    if (name == "replace") {
      const Value& from = arg(a, 0, "old", none);
      const Value& to = arg(a, 1, "new", none);
      const Value& count = arg(a, 2, "count", Value::integer(-1));
      if (!from.is_string() || !to.is_string()) fail("replace() arguments must be str");
      return Value::string(py_replace(self, from.s, to.s, count.i, in));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "count") {
      const Value& sub = arg(a, 0, "sub", none);
      if (!sub.is_string()) fail(name + "() argument must be str");
      if (name == "count") return Value::integer(py_count(self, sub.s));
      size_t at = name == "rfind" ? self.rfind(sub.s) : self.find(sub.s);
      if (at == std::string::npos) {
        if (name == "index") fail("substring not found");
        return Value::integer(-1);
      }
      return Value::integer(int64_t(utf8_length(self.substr(0, at))));
    }
    if (name == "join") {
      std::string out;
      bool first = true;
      for (const auto& x : iterate(arg(a, 0, "iterable", none))) {
        if (!x.is_string()) fail("sequence item: expected str instance, " + x.type_name() + " found");
        if (!first) out += self;
        first = false;
        out += x.s;
        in.check_size(out.size());
      }
      return Value::string(std::move(out));
    }
    if (name == "format") return Value::string(py_format(self, a, in));
    return Value::boolean(py_is_class(self, name));
  });
}

Value dict_method(const Value& self, const std::string& name) {
  static const std::set<std::string> mutating = {"pop", "popitem", "setdefault", "update", "clear"};
  if (mutating.count(name))
    return bound(name, [name](Interpreter&, CallArgs&) -> Value { refused("dict", name); });
  if (name == "items" || name == "keys" || name == "values" || name == "get" || name == "copy") {
    return bound(name, [self, name](Interpreter&, CallArgs& a) -> Value {
      static const Value none = Value::none();
      if (name == "get") {
        const Value* v = self.dict->find(arg(a, 0, "key", none));
        return v ? *v : arg(a, 1, "default", none);
      }
      if (name == "copy") {
        Value d = Value::make_dict();
        *d.dict = *self.dict;
        return d;
      }
      List out;
      for (const auto& [k, v] : self.dict->items) {
        if (name == "items") out.push_back(Value::make_tuple({k, v}));
        else out.push_back(name == "keys" ? k : v);
      }
      return Value::make_list(std::move(out));
    });
  }
  return Value::undefined(name);
}

Value list_method(const Value& self, const std::string& name) {
  static const std::set<std::string> mutating = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
  if (mutating.count(name))
    return bound(name, [name](Interpreter&, CallArgs&) -> Value { refused("list", name); });
  if (name == "index" || name == "count" || name == "copy") {
    return bound(name, [self, name](Interpreter&, CallArgs& a) -> Value {
      if (name == "copy") return Value::make_list(*self.list);
      const Value& x = arg(a, 0, "value", Value::none());
      int64_t n = 0;
      for (size_t k = 0; k < self.list->size(); ++k) {
        if (!equals((*self.list)[k], x)) continue;
        if (name == "index") return Value::integer(int64_t(k));
        ++n;
      }
      if (name == "index") fail(to_repr(x) + " is not in list");
      return Value::integer(n);
    });
  }
  return Value::undefined(name);
}

}  // namespace

Value get_attr(const Value& obj, const std::string& name) {
  if (!name.empty() && name[0] == '_') return Value::undefined(name);  // sandbox: no internals
  switch (obj.kind) {
    case Kind::dict: {
      if (!obj.is_namespace) {
        Value m = dict_method(obj, name);
        if (!m.is_undefined()) return m;
      }
      if (const Value* v = obj.dict->find(name)) return *v;
      return Value::undefined(name);
    }
    case Kind::string: return string_method(obj.s, name);
    case Kind::list: return list_method(obj, name);
    default: return Value::undefined(name);
  }
}

void install_globals(Frame& frame) {
  frame.vars["range"] = Value::callable("range", [](Interpreter& in, CallArgs& a) -> Value {
    int64_t start = 0, stop = 0, step = 1;
    for (const auto& v : a.pos)
      if (v.kind != Kind::integer && v.kind != Kind::boolean) fail("range() arguments must be integers");
    auto iv = [](const Value& v) { return v.kind == Kind::boolean ? int64_t(v.b) : v.i; };
    if (a.pos.size() == 1) stop = iv(a.pos[0]);
    else if (a.pos.size() == 2 || a.pos.size() == 3) {
      start = iv(a.pos[0]);
      stop = iv(a.pos[1]);
      if (a.pos.size() == 3) step = iv(a.pos[2]);
    } else fail("range expected 1 to 3 arguments");
    if (step == 0) fail("range() arg 3 must not be zero");
    List out;
    for (int64_t k = start; step > 0 ? k < stop : k > stop;) {
      if (int64_t(out.size()) >= in.limits().max_range)
        fail("range too big, maximum is " + std::to_string(in.limits().max_range));
      out.push_back(Value::integer(k));
      if (__builtin_add_overflow(k, step, &k)) break;
    }
    return Value::make_list(std::move(out));
  });
  frame.vars["dict"] = Value::callable("dict", [](Interpreter&, CallArgs& a) -> Value {
    Value d = Value::make_dict();
    for (const auto& p : a.pos) {
      if (p.is_dict()) { for (const auto& kv : p.dict->items) d.dict->set(kv.first, kv.second); continue; }
      for (const auto& kv : iterate(p)) {
        List pair = iterate(kv);
        if (pair.size() != 2) fail("dictionary update sequence element has wrong length");
        d.dict->set(pair[0], pair[1]);
      }
    }
    for (const auto& [k, v] : a.kw) d.dict->set(Value::string(k), v);
    return d;
  });
  frame.vars["namespace"] = Value::callable("namespace", [](Interpreter& in, CallArgs& a) -> Value {
    Value d = Value::make_dict();
    d.is_namespace = true;
    in.track_namespace(d.dict);
    for (const auto& p : a.pos)
      if (p.is_dict()) for (const auto& kv : p.dict->items) d.dict->set(kv.first, kv.second);
    for (const auto& [k, v] : a.kw) d.dict->set(Value::string(k), v);
    return d;
  });
  frame.vars["raise_exception"] = Value::callable("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
    const Value* m = a.get(0, "message");
    throw RaisedByTemplate{m ? to_str(*m) : std::string()};
  });
  frame.vars["strftime_now"] = Value::callable("strftime_now", [](Interpreter& in, CallArgs& a) -> Value {
    const Value* f = a.get(0, "format");
    if (!f || !f->is_string()) fail("strftime_now() needs a format string");
    return Value::string(py_strftime(f->s, in.now()));
  });
}

}  // namespace exl::tpl

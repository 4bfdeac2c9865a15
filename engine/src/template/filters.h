// Internal helpers shared by the filter files: the filter signature, argument access (positional
// index or keyword name, as Jinja's filters take them) and Jinja's attribute paths.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

#include "template/interpreter.h"
#include "template/strings.h"
#include "template/value.h"

namespace exl::tpl::filter {

using FilterFn = Value (*)(Interpreter&, const Value&, CallArgs&);
using Table = std::unordered_map<std::string, FilterFn>;

extern const Value kNone;
// Argument k (or keyword `name`); `def` when absent.
Value arg(CallArgs& a, size_t k, const char* name, const Value& def);
int64_t int_arg(CallArgs& a, size_t k, const char* name, int64_t def);
inline std::string str(const Value& v) { return to_str(v); }
// Attribute path "a.b.0" as Jinja's make_attrgetter resolves it.
Value attr_path(const Value& v, const std::string& path);

// Filters over sequences and mappings (filters_sequence.cpp): list, join, first, last, map,
// select/reject(attr), items, dictsort, sort, unique, reverse, batch, min, max, sum.
void add_sequence_filters(Table& table);
// Every filter by name (filters.cpp).
const Table& table();

}  // namespace exl::tpl::filter

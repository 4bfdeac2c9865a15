// Filters, tests, tojson formatting and error reporting of the chat-template interpreter.
// The expected strings of the "matches_python_jinja2" case were produced by Python Jinja2 3.1.6
// in transformers' environment (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// transformers' tojson) for templates that stress whitespace control, macros and namespaces.
#include "exl/chat_template.h"
#include "exl_test.h"

namespace {

std::string render(const std::string& src, const char* ctx_json = "{}") {
  return exl::ChatTemplate(src).render(nlohmann::ordered_json::parse(ctx_json));
}

struct JinjaCase {
  const char* source;
  const char* context;
  const char* expected;
};

const JinjaCase kCases[] = {
    {R"J({{ d|tojson }})J",
     R"J({"d": {"b": [1, 2.5, null, true], "a": "x\"\n<é>", "e": {}, "f": []}})J",
     R"J({"b": [1, 2.5, null, true], "a": "x\"\n<é>", "e": {}, "f": []})J"},
    {R"J({{ d|tojson(indent=2) }})J",
     R"J({"d": {"b": [1, {"c": []}], "a": "s"}})J",
     R"J({
  "b": [
    1,
    {
      "c": []
    }
  ],
  "a": "s"
})J"},
    {R"J({{ d|tojson(sort_keys=true) }})J",
     R"J({"d": {"b": 1, "a": 2}})J",
     R"J({"a": 2, "b": 1})J"},
    {R"J({{ '  x y  '|trim }}|{{ 'hello world-foo'|title }}|{{ 'aBC'|capitalize }}|{{ 'a-b'|replace('-', '+') }})J",
     R"J({})J",
     R"J(x y|Hello World-Foo|Abc|a+b)J"},
    {R"J({{ [3,1,2]|sort|join(',') }}|{{ [1,2,2,3]|unique|list }}|{{ xs|map(attribute='n')|join('/') }}|{{ xs|selectattr('n', 'gt', 1)|list|length }}|{{ xs|rejectattr('n')|list }})J",
     R"J({"xs": [{"n": 1}, {"n": 2}, {"n": 0}]})J",
     R"J(1,2,3|[1, 2, 3]|1/2/0|1|[{'n': 0}])J"},
    {R"J({{ 'x
y

z'|indent(2) }}|{{ 'x
y'|indent(2, true) }})J",
     R"J({})J",
     R"J(x
  y

  z|  x
  y)J"},
    {R"J({{ {'b': 1, 'A': 2}|dictsort }}|{{ [1,2,3]|first }}{{ [1,2,3]|last }}|{{ '42'|int + 1 }}|{{ '2.5'|float }}|{{ 2.567|round(2) }}|{{ 'abc'|reverse }}|{{ [1,2,3,4,5]|batch(2)|list }})J",
     R"J({})J",
     R"J([('A', 2), ('b', 1)]|13|43|2.5|2.57|cba|[[1, 2], [3, 4], [5]])J"},
    {R"J({{ '<a & b>'|e }}|{{ 'one two  three'|wordcount }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'xxhixx'.strip('x') }}|{{ '{} is {x}'.format(1, x=2) }})J",
     R"J({})J",
     R"J(&lt;a &amp; b&gt;|3|['a', 'b', '', 'c']|['a', 'b']|hi|1 is 2)J"},
    {R"J({% for m in ms %}
  {% if m.role == 'user' %}
    U: {{ m.content }}
  {% else %}
    A: {{ m.content }}
  {% endif %}
{% endfor %}
)J",
     R"J({"ms": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})J",
     R"J(    U: hi
    A: yo
)J"},
    {R"J({%- macro row(x, sep=', ') -%}
  [{{ x }}]{{ sep }}
{%- endmacro -%}
{% set ns = namespace(out='') %}
{% for i in range(3) %}
  {% set ns.out = ns.out ~ row(i, sep=';' if loop.last else ',') %}
{% endfor %}
{{ ns.out }})J",
     R"J({})J",
     R"J([0],[1],[2];)J"},
    {R"J({{ 1 is number }}{{ true is number }}{{ 1.5 is integer }}{{ 'a' is sequence }}{{ {} is mapping }}{{ 6 is divisibleby 3 }}{{ x is equalto 2 }}{{ none is none }}{{ 'a' is iterable }})J",
     R"J({"x": 2})J",
     R"J(TrueTrueFalseTrueTrueTrueTrueTrueTrue)J"},
};

}  // namespace

EXL_TEST(template, matches_python_jinja2) {
  for (const auto& c : kCases) CHECK_EQ(render(c.source, c.context), std::string(c.expected));
}

EXL_TEST(template, tojson_matches_json_dumps) {
  CHECK_EQ(render("{{ x|tojson }}", R"({"x": "tab\there \u0001 \u00e9"})"), "\"tab\\there \\u0001 \u00e9\"");
  CHECK_EQ(render("{{ 1.0|tojson }} {{ 1e-7|tojson }} {{ none|tojson }} {{ 'a'|tojson }}"), "1.0 1e-07 null \"a\"");
  CHECK_EQ(render("{{ [1, [2, {}]]|tojson(indent=1) }}"), "[\n 1,\n [\n  2,\n  {}\n ]\n]");
  CHECK_THROWS_ERROR(render("{{ nope|tojson }}"), exl::ErrorKind::format, "not JSON serializable");
}

EXL_TEST(template, syntax_errors_have_positions) {
  CHECK_THROWS_ERROR(exl::ChatTemplate("ab\n  {% if x %}"), exl::ErrorKind::format, "line 2");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ 1 + }}"), exl::ErrorKind::format, "column 8");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{% frobnicate %}"), exl::ErrorKind::format, "unknown tag 'frobnicate'");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ 'unterminated }}"), exl::ErrorKind::format, "unterminated string");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{# never closed"), exl::ErrorKind::format, "comment");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{% for x in y %}{% endif %}"), exl::ErrorKind::format, "line 1");
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ x is defined is none }}"), exl::ErrorKind::format, "chain");
}

EXL_TEST(template, runtime_errors) {
  try {
    render("{{ raise_exception('Roles must alternate') }}");
    CHECK(false);
  } catch (const exl::TemplateRaised& e) {
    CHECK_EQ(std::string(e.what()), "Roles must alternate");
    CHECK(e.kind() == exl::ErrorKind::invalid_argument);
  }
  CHECK_THROWS_ERROR(render("\n{{ 1 // 0 }}"), exl::ErrorKind::format, "line 2");
  CHECK_THROWS_ERROR(render("{{ 'a' - 1 }}"), exl::ErrorKind::format, "unsupported operand");
  CHECK_THROWS_ERROR(render("{{ [1].append(2) }}"), exl::ErrorKind::format, "unsafe");
  CHECK_THROWS_ERROR(render("{{ x|nosuchfilter }}"), exl::ErrorKind::format, "no filter named");
  CHECK_THROWS_ERROR(render("{% set x = 1 %}{% set x.y = 2 %}"), exl::ErrorKind::format, "non-namespace");
}

EXL_TEST(template, limits_turn_runaway_templates_into_errors) {
  std::string deep(5000, '(');
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ " + deep + "1" + std::string(5000, ')') + " }}"), exl::ErrorKind::format,
                     "nested too deeply");
  std::string ifs;
  for (int k = 0; k < 500; ++k) ifs += "{% if true %}";
  CHECK_THROWS_ERROR(exl::ChatTemplate(ifs), exl::ErrorKind::format, "nested too deeply");
  CHECK_THROWS_ERROR(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), exl::ErrorKind::format, "recursion");
  CHECK_THROWS_ERROR(render("{{ range(1000000) }}"), exl::ErrorKind::format, "range too big");
  exl::ChatTemplateOptions few_steps;  // the default (20M steps) takes tens of seconds to reach
  few_steps.max_steps = 200000;
  CHECK_THROWS_ERROR(exl::ChatTemplate("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
                                       few_steps)
                         .render(nlohmann::ordered_json::object()),
                     exl::ErrorKind::format, "too many steps");
  CHECK_THROWS_ERROR(render("{{ 'x' * 100000000000 }}"), exl::ErrorKind::format, "too large");
}

// Huge inputs: long chains the grammar builds in loops (no parser recursion, but a tree as tall as
// the chain), values nested by a loop, deep JSON context and deep macro recursion fail with an
// error instead of overflowing the stack; huge flat templates just render.
EXL_TEST(template, huge_and_deep_templates_fail_cleanly) {
  std::string sum = "{{ 1";
  for (int k = 0; k < 200000; ++k) sum += " + 1";
  CHECK_THROWS_ERROR(exl::ChatTemplate(sum + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string attrs = "{{ x";
  for (int k = 0; k < 200000; ++k) attrs += ".a";
  CHECK_THROWS_ERROR(exl::ChatTemplate(attrs + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string chain = "{{ x";
  for (int k = 0; k < 200000; ++k) chain += "|trim";
  CHECK_THROWS_ERROR(exl::ChatTemplate(chain + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string calls = "{{ f";
  for (int k = 0; k < 200000; ++k) calls += "()";
  CHECK_THROWS_ERROR(exl::ChatTemplate(calls + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string items = "{{ x";
  for (int k = 0; k < 200000; ++k) items += "[0]";
  CHECK_THROWS_ERROR(exl::ChatTemplate(items + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string conds = "{{ 1";
  for (int k = 0; k < 200000; ++k) conds += " if 1";
  CHECK_THROWS_ERROR(exl::ChatTemplate(conds + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string nots = "{{ ";
  for (int k = 0; k < 200000; ++k) nots += "not ";
  CHECK_THROWS_ERROR(exl::ChatTemplate(nots + "1 }}"), exl::ErrorKind::format, "nested too deeply");
  std::string lists = std::string(200000, '[') + std::string(200000, ']');
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ " + lists + " }}"), exl::ErrorKind::format, "nested too deeply");
  std::string blocks;
  for (int k = 0; k < 200000; ++k) blocks += "{% for x in y %}";
  CHECK_THROWS_ERROR(exl::ChatTemplate(blocks), exl::ErrorKind::format, "nested too deeply");

  // Values nested by a loop, one level per iteration.
  CHECK_THROWS_ERROR(render("{% set ns = namespace(x=[]) %}{% for i in range(100000) %}{% set ns.x = [ns.x] %}"
                            "{% endfor %}{{ ns.x }}"),
                     exl::ErrorKind::format, "nested too deeply");
  CHECK_THROWS_ERROR(render("{% set ns = namespace(x={}) %}{% for i in range(100000) %}{% set ns.x = {'k': ns.x} %}"
                            "{% endfor %}{{ ns.x|length }}"),
                     exl::ErrorKind::format, "nested too deeply");
  // Deep JSON context.
  nlohmann::ordered_json deep = nlohmann::ordered_json::array();
  for (int k = 0; k < 5000; ++k) deep = nlohmann::ordered_json::array({deep});
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ x }}").render(nlohmann::ordered_json{{"x", deep}}), exl::ErrorKind::format,
                     "nested too deeply");
  // Macro recursion whose every level is deep (nested blocks around a tall expression).
  std::string open, close;
  for (int k = 0; k < 90; ++k) open += "{% if true %}", close += "{% endif %}";
  std::string tall = "f(n + 1)";
  for (int k = 0; k < 300; ++k) tall += "|string";
  try {
    render("{% macro f(n) %}" + open + "{{ " + tall + " }}" + close + "{% endmacro %}{{ f(0) }}");
    CHECK(false);
  } catch (const exl::Error& e) {
    CHECK(e.kind() == exl::ErrorKind::format);
  }

  // Huge but flat: renders.
  std::string flat;
  for (int k = 0; k < 50000; ++k) flat += "{% if true %}x{% endif %}{{ 'y' }}";
  CHECK_EQ(render(flat).size(), size_t(100000));
  const std::string text(4 << 20, 'a');
  CHECK_EQ(render(text + "{{ 1 }}").size(), text.size() + 1);
}

EXL_TEST(template, strftime_now_uses_the_given_clock) {
  exl::ChatTemplateOptions o;
  std::tm tm{};
  tm.tm_year = 125;
  tm.tm_mon = 2;
  tm.tm_mday = 4;
  tm.tm_hour = 15;
  tm.tm_wday = 2;
  o.now = tm;
  exl::ChatTemplate t("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %-d, %Y %A %I%p') }}", o);
  CHECK_EQ(t.render(nlohmann::ordered_json::object()), "04 Mar 2025|March 4, 2025 Tuesday 03PM");
}

EXL_TEST(template, render_chat_scope) {
  exl::ChatTemplate t("{{ bos_token is defined }}{{ tools is none }}{{ eos_token }}{{ messages[0].content }}{{ add_generation_prompt }}{{ x }}");
  auto msgs = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "c"}])");
  CHECK_EQ(t.render_chat(msgs, true, std::nullopt, std::string("</s>"), {{"x", 1}}), "FalseTrue</s>cTrue1");
}

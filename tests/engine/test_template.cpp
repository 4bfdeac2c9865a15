// Unit tests of the chat-template interpreter: whitespace control, loops, scoping, macros,
// expressions, slicing and undefined semantics. Expected strings were checked against Python
// Jinja2 3.1 with trim_blocks/lstrip_blocks (transformers' environment).
#include "exl/chat_template.h"
#include "exl_test.h"

namespace {

std::string render(const std::string& src, const char* ctx_json = "{}") {
  return exl::ChatTemplate(src).render(nlohmann::ordered_json::parse(ctx_json));
}

}  // namespace

EXL_TEST(template, text_and_output) {
  CHECK_EQ(render("hello"), "hello");
  CHECK_EQ(render("a{{ 1 + 2 }}b"), "a3b");
  CHECK_EQ(render("{{ x }}", R"({"x": "y"})"), "y");
  CHECK_EQ(render("trailing\n"), "trailing");
  CHECK_EQ(render("two\n\n"), "two\n");
  CHECK_EQ(render("{# comment #}x"), "x");
  CHECK_EQ(render("{{ 'a' 'b' }}"), "ab");
}

EXL_TEST(template, whitespace_control) {
  CHECK_EQ(render("a  {{- 'b' -}}  \n c"), "abc");
  CHECK_EQ(render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");        // trim_blocks
  CHECK_EQ(render("  {% if true %}x{% endif %}"), "x");                 // lstrip_blocks
  CHECK_EQ(render("  {{ 'x' }}"), "  x");                               // not before {{
  CHECK_EQ(render("  {%+ if true %}x{% endif %}"), "  x");              // {%+ keeps indent
  CHECK_EQ(render("{% if true +%}\nx{% endif %}"), "\nx");              // +%} keeps newline
  CHECK_EQ(render("a\n    {% if true %}\n    b\n    {% endif %}\nc"), "a\n    b\nc");
  CHECK_EQ(render("x {% if true %}y{% endif %}"), "x y");               // mid-line: no lstrip
  CHECK_EQ(render("a\n  {# note #}\nb"), "a\nb");
  CHECK_EQ(render("{%- if true -%}\n  x  \n{%- endif -%}"), "x");
}

EXL_TEST(template, if_elif_else_and_conditional_expression) {
  const char* t = "{% if n == 1 %}one{% elif n == 2 %}two{% else %}many{% endif %}";
  CHECK_EQ(render(t, R"({"n": 1})"), "one");
  CHECK_EQ(render(t, R"({"n": 2})"), "two");
  CHECK_EQ(render(t, R"({"n": 5})"), "many");
  CHECK_EQ(render("{{ 'y' if x else 'n' }}", R"({"x": true})"), "y");
  CHECK_EQ(render("[{{ 'y' if x }}]", R"({"x": false})"), "[]");
}

EXL_TEST(template, for_loops) {
  CHECK_EQ(render("{% for x in xs %}{{ loop.index }}{{ x }}{{ ',' if not loop.last }}{% endfor %}",
                  R"({"xs": ["a", "b", "c"]})"), "1a,2b,3c");
  CHECK_EQ(render("{% for x in xs %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.length }}{{ loop.first }} {% endfor %}",
                  R"({"xs": [1, 2]})"), "022True 112False ");
  CHECK_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  CHECK_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"z": 1, "a": 2}})"), "z=1;a=2;");
  CHECK_EQ(render("{% for k, v in d|items %}{{ k }}={{ v }};{% endfor %}", R"({"d": {"z": 1, "a": 2}})"), "z=1;a=2;");
  CHECK_EQ(render("{% for k in d %}{{ k }}{% endfor %}", R"({"d": {"b": 1, "a": 2}})"), "ba");
  CHECK_EQ(render("{% for x in range(10) if x is even %}{{ x }}{{ loop.length }} {% endfor %}"), "05 25 45 65 85 ");
  CHECK_EQ(render("{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"), "02");
  CHECK_EQ(render("{% for x in 'ab' %}[{{ x }}]{% endfor %}"), "[a][b]");
  CHECK_EQ(render("{% for x in xs %}{{ loop.previtem }}-{{ loop.nextitem }} {% endfor %}", R"({"xs": [1, 2, 3]})"), "-2 1-3 2- ");
  CHECK_EQ(render("{% for a in [1, 2] %}{% for b in [3, 4] %}{{ a * b }}{{ loop.index }} {% endfor %}{{ loop.index }}|{% endfor %}"),
           "31 42 1|61 82 2|");
}

EXL_TEST(template, set_scoping_and_namespace) {
  CHECK_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
  CHECK_EQ(render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}"), "4");
  CHECK_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  CHECK_EQ(render("{% set s %}  block {{ 1 }}{% endset %}[{{ s }}]"), "[  block 1]");
  CHECK_EQ(render("{% set s | upper %}abc{% endset %}{{ s }}"), "ABC");
  CHECK_EQ(render("{% filter upper %}abc{% endfilter %}"), "ABC");
  CHECK_EQ(render("{% generation %}g{% endgeneration %}"), "g");
}

EXL_TEST(template, macros_and_call) {
  CHECK_EQ(render("{% macro m(a, b='d') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}"), "1d12");
  CHECK_EQ(render("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}"), "<in>");
  CHECK_EQ(render("{% macro w() %}{{ caller(5) }}{% endmacro %}{% call(n) w() %}n={{ n }}{% endcall %}"), "n=5");
  CHECK_EQ(render("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"), "321");
  CHECK_EQ(render("{% set g = 'G' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}"), "G");
}

EXL_TEST(template, operators) {
  CHECK_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }}"), "3 -4 1 2 3.5 1024");
  CHECK_EQ(render("{{ 'a' ~ 1 ~ none }} {{ 'ab' * 3 }} {{ [1] + [2] }}"), "a1None ababab [1, 2]");
  CHECK_EQ(render("{{ 1 == 1.0 }} {{ 'a' in 'cat' }} {{ 3 not in [1, 2] }} {{ 'k' in {'k': 1} }}"), "True True True True");
  CHECK_EQ(render("{{ not true or false }} {{ 0 or 'x' }} {{ 1 and 'y' }} {{ '' and 'z' }}"), "False x y ");
  CHECK_EQ(render("{{ 'a' + x | trim }}", R"({"x": "  b  "})"), "ab");
  CHECK_EQ(render("{{ -1 | abs }} {{ 1 < 2 < 3 }}"), "1 True");
  CHECK_EQ(render("{{ 0.1 + 0.2 }} {{ 1e-05 }} {{ 1.0 }} {{ 1e16 }} {{ 4120.5 }}"), "0.30000000000000004 1e-05 1.0 1e+16 4120.5");
  CHECK_EQ(render("{{ true }} {{ none }} {{ [1, 'a', none] }} {{ {'a': 1} }} {{ (1, 2) }}"),
           "True None [1, 'a', None] {'a': 1} (1, 2)");
}

EXL_TEST(template, subscripts_and_slices) {
  const char* ctx = R"({"m": [1, 2, 3, 4, 5], "s": "héllo"})";
  CHECK_EQ(render("{{ m[0] }}{{ m[-1] }}{{ m[1:3] }}{{ m[::-1] }}{{ m[::2] }}{{ m[-2:] }}", ctx), "15[2, 3][5, 4, 3, 2, 1][1, 3, 5][4, 5]");
  CHECK_EQ(render("{{ s[1] }}{{ s[1:3] }}{{ s[::-1] }}{{ s|length }}", ctx), "éélolléh5");
  CHECK_EQ(render("{{ m[10] is defined }}{{ m[:100]|length }}", ctx), "False5");
  CHECK_EQ(render("{{ d.items }}", R"({"d": {"items": 1}})").substr(0, 9), "<function");
  CHECK_EQ(render("{{ d['items'] }}{{ d.content }}{{ d.get('x', 'dflt') }}", R"({"d": {"items": 1, "content": "c"}})"), "1cdflt");
}

EXL_TEST(template, undefined_semantics) {
  CHECK_EQ(render("[{{ nope }}]"), "[]");
  CHECK_EQ(render("{{ nope is defined }}{{ nope is undefined }}{{ nope is none }}{{ nope|length }}"), "FalseTrueFalse0");
  CHECK_EQ(render("{% for x in nope %}x{% endfor %}{{ 'a' in nope }}{{ nope|default('d') }}"), "Falsed");
  CHECK_EQ(render("{{ d.missing is defined }}{{ none.x is defined }}", R"({"d": {}})"), "FalseFalse");
  CHECK_THROWS_ERROR(render("{{ nope.attr }}"), exl::ErrorKind::format, "'nope' is undefined");
  CHECK_THROWS_ERROR(render("{{ nope['k'] }}"), exl::ErrorKind::format, "undefined");
  CHECK_THROWS_ERROR(render("{{ nope() }}"), exl::ErrorKind::format, "undefined");
  CHECK_THROWS_ERROR(render("{{ 1 + nope }}"), exl::ErrorKind::format, "undefined");
}

// Found by review during the 2026-12-02 fuzz run (hand-written inputs, confirmed on the fuzz
// target: stack overflow and LeakSanitizer reports). Chains that Value::nesting does not count: a
// bound method holds the list it is bound to ([x.copy] per iteration), and namespaces filled
// top-down keep their nesting at 2. Freeing them used to recurse once per level and overflow the
// stack; now they free with constant stack. Reference cycles (a namespace holding itself,
// loop.changed given `loop`) used to leak (the asan preset's LeakSanitizer reports them).
EXL_TEST(template, deep_chains_and_cycles_free_cleanly) {
  CHECK_EQ(render("{%- set st = namespace(a=[1]) -%}{%- for i in range(100000) -%}{%- set st.a = [st.a.copy] -%}"
                  "{%- endfor -%}ok"),
           "ok");
  CHECK_EQ(render("{%- set st = namespace(d={}) -%}{%- for i in range(100000) -%}"
                  "{%- set st.d = {'k': st.d.items} -%}{%- endfor -%}ok"),
           "ok");
  CHECK_EQ(render("{%- set top = namespace() -%}{%- set st = namespace(cur=top) -%}{%- for i in range(100000) -%}"
                  "{%- set n = namespace() -%}{%- set c = st.cur -%}{%- set c.x = n -%}{%- set st.cur = n -%}"
                  "{%- endfor -%}ok"),
           "ok");
  // A failing render frees the chain too.
  CHECK_THROWS_ERROR(render("{%- set st = namespace(a=[1]) -%}{%- for i in range(100000) -%}"
                            "{%- set st.a = [st.a.copy] -%}{%- endfor -%}{{ 'a' - 1 }}"),
                     exl::ErrorKind::format, "unsupported operand");
  CHECK_EQ(render("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{% set ns.b = [ns, [ns]] %}{{ ns.a.a.b|length }}"),
           "2");
  CHECK_EQ(render("{% for x in [1, 1, 2] %}{{ loop.changed(loop) }}{% endfor %}"), "TrueTrueTrue");
  CHECK_EQ(render("{% for x in [1, 1, 2] %}{{ loop.changed(x) }}{% endfor %}"), "TrueFalseTrue");
  // loop.changed keeps its last values only while its loop runs.
  CHECK_THROWS_ERROR(render("{% set h = namespace(f=none) %}{% for x in [1] %}{% set h.f = loop.changed %}{% endfor %}"
                            "{{ h.f(1) }}"),
                     exl::ErrorKind::format, "after its loop ended");
}

// Found by fuzz_template (2026-12-02): `x.<integer>` (Jinja's x[0] spelling) with an integer past
// int64 threw std::out_of_range from the parser instead of a template error.
EXL_TEST(template, attribute_index_out_of_range_is_an_error) {
  CHECK_THROWS_ERROR(exl::ChatTemplate("{{ x.99999999999999999999 }}"), exl::ErrorKind::format,
                     "integer literal out of range");
  CHECK_EQ(render("{{ x.1 }}", R"({"x": [5, 6]})"), "6");
}

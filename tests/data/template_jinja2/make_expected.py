#!/usr/bin/env python3
"""Renders every templates/NAME.jinja with Python's Jinja2 in transformers' chat-template
environment and writes expected.json, the reference the C++ interpreter is tested against
(tests/engine/test_template_jinja2.cpp). Contexts come from contexts.json (NAME -> list of
{name, context}); a template without an entry is rendered once with an empty context.

    python3 -m pip install jinja2   # or Debian's python3-jinja2
    python3 tests/data/template_jinja2/make_expected.py

The environment is the one fixtures/chat_templates/README.md documents (transformers'
_compile_jinja_template): ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loop
controls, transformers' tojson, raise_exception and strftime_now on a fixed clock.
"""
import datetime, json, os, sys

import jinja2
import jinja2.ext
import jinja2.sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
NOW = datetime.datetime(2025, 3, 14, 15, 9, 26)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def main():
    env = environment()
    with open(os.path.join(HERE, "contexts.json"), encoding="utf-8") as f:
        contexts = json.load(f)
    out = []
    for fn in sorted(os.listdir(os.path.join(HERE, "templates"))):
        if not fn.endswith(".jinja"):
            continue
        name = fn[: -len(".jinja")]
        with open(os.path.join(HERE, "templates", fn), encoding="utf-8", newline="") as f:
            source = f.read()  # verbatim: no newline translation (ws_crlf tests \r\n)
        template = env.from_string(source)
        for case in contexts.get(name, [{"name": "default", "context": {}}]):
            entry = {"template": name, "case": case["name"], "context": case["context"]}
            try:
                entry["expected"] = template.render(**case["context"])
            except jinja2.exceptions.TemplateError as e:
                entry["error"], entry["error_type"] = str(e), type(e).__name__
            out.append(entry)
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": f"Python {sys.version.split()[0]}, Jinja2 {jinja2.__version__}", "cases": out},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(out)} cases written to expected.json")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs `exl template` on every case of fixtures/chat_templates and compares its stdout byte for
byte with the case's `expected` (what Python's Jinja2 rendered), or, for a raising case, checks a
non-zero exit status and the template's message on stderr. Inputs go through files exactly as a
user would pass them: --messages, --tools, --vars (documents and extra variables), --bos-token /
--eos-token (left out when the case has none), --add-generation-prompt, --now (the fixtures' clock).

Prints one line per failure and "N passed, M failed"; exit 77 (ctest skip) when the fixtures are
missing, unless EXL_REQUIRE_FIXTURES=1.
"""
import argparse, json, os, subprocess, sys, tempfile

FIXTURE_NOW = "2025-03-14 15:09:26"  # fixtures/chat_templates/README.md: the clock strftime_now reads


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False)
    return path


def run_case(exl, folder, case, tmp):
    args = [exl, "template", "--template", os.path.join(folder, "template.jinja"),
            "--messages", write_json(os.path.join(tmp, "messages.json"), case["messages"]), "--now", FIXTURE_NOW]
    if case["add_generation_prompt"]:
        args.append("--add-generation-prompt")
    if "tools" in case:
        args += ["--tools", write_json(os.path.join(tmp, "tools.json"), case["tools"])]
    variables = {}
    if "documents" in case:
        variables["documents"] = case["documents"]
    variables.update(case.get("extra", {}))
    if variables:
        args += ["--vars", write_json(os.path.join(tmp, "vars.json"), variables)]
    for key, flag in (("bos_token", "--bos-token"), ("eos_token", "--eos-token")):
        if isinstance(case.get(key), str):
            args += [flag, case[key]]
    r = subprocess.run(args, capture_output=True, timeout=60)
    if "expected" in case:
        if r.returncode != 0:
            return f"exit {r.returncode}: {r.stderr.decode('utf-8', 'replace').strip()}"
        if r.stdout != case["expected"].encode("utf-8"):
            return f"output differs:\n--- got ---\n{r.stdout.decode('utf-8', 'replace')}\n--- expected ---\n{case['expected']}"
        return None
    err = r.stderr.decode("utf-8", "replace")
    if r.returncode == 0:
        return "rendered, but the case raises: " + case["error"]
    if r.stdout:
        return "printed output although rendering failed"
    if case.get("error_type") == "TemplateError" and case["error"] not in err:
        return f"stderr lacks the template's message {case['error']!r}: {err!r}"
    if "line " not in err or "column " not in err:
        return f"stderr lacks the line and column: {err!r}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exl", required=True)
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "../../../shared/fixtures"))
    args = ap.parse_args()
    root = os.path.join(os.environ.get("EXL_FIXTURES") or args.fixtures, "chat_templates")
    if not os.path.isdir(root):
        if os.environ.get("EXL_REQUIRE_FIXTURES") == "1":
            print(f"FAIL  fixtures missing: {root} (EXL_REQUIRE_FIXTURES=1)\n0 passed, 1 failed")
            return 1
        print(f"skipped: fixtures missing: {root}\n0 passed, 0 failed, 1 skipped")
        return 77
    passed = failed = raising = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if not os.path.isfile(os.path.join(folder, "cases.json")):
                continue
            with open(os.path.join(folder, "cases.json"), encoding="utf-8") as f:
                cases = json.load(f)  # dicts keep the file's key order
            for case in cases:
                problem = run_case(args.exl, folder, case, tmp)
                raising += "error" in case
                if problem:
                    failed += 1
                    print(f"FAIL  {name}/{case['name']}: {problem}", flush=True)
                else:
                    passed += 1
    print(f"exl template: {passed + failed} cases ({raising} raising)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or passed < 300 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs `exl chat --json` on the fixture model with three user turns on stdin and checks that
turns 2 and 3 reuse the cached K/V of the earlier turns (cached_tokens > 0, cached + prefilled =
prompt), and that `exl generate --json` reports cached_tokens. Exit 77 (ctest skip) when the
fixtures are missing, unless EXL_REQUIRE_FIXTURES=1.
"""
import argparse, json, os, subprocess, sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exl", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    model = os.path.join(a.fixtures, "models", "exl2", "ref-s-4.0bpw")
    if not os.path.isdir(model):
        if os.environ.get("EXL_REQUIRE_FIXTURES") == "1":
            print("fixture model missing: " + model)
            return 1
        print("fixtures missing: skipped")
        return 77
    failures = []
    turns = "Hello there, who are you?\nTell me a story about a cat.\n\nAnd one about a dog?\n"
    p = subprocess.run([a.exl, "chat", "-m", model, "--device", "cpu", "-n", "16", "--json"], input=turns.encode(),
                       capture_output=True, timeout=240)
    if p.returncode != 0:
        failures.append("exl chat exited %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
    else:
        rows = [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]
        if [r["turn"] for r in rows] != [1, 2, 3]:
            failures.append("expected turns 1, 2, 3 (the empty line is skipped), got %s" % rows)
        for r in rows:
            if r["cached_tokens"] + r["prefilled_tokens"] != r["prompt_tokens"]:
                failures.append("turn %d: cached + prefilled != prompt: %s" % (r["turn"], r))
            if r["turn"] == 1 and r["cached_tokens"] != 0:
                failures.append("turn 1 reused tokens from an empty cache: %s" % r)
            if r["turn"] > 1 and not (r["cached_tokens"] > rows[r["turn"] - 2]["prompt_tokens"]):
                failures.append("turn %d did not reuse the previous turn: %s" % (r["turn"], r))
    g = subprocess.run([a.exl, "generate", "-m", model, "--device", "cpu", "-p", "Once upon a time", "-n", "4",
                        "--json"], capture_output=True, timeout=120)
    if g.returncode != 0:
        failures.append("exl generate exited %d: %s" % (g.returncode, g.stderr.decode(errors="replace")))
    else:
        j = json.loads(g.stdout.decode())
        if j.get("cached_tokens") != 0 or j.get("prefilled_tokens") != j.get("prompt_tokens"):
            failures.append("exl generate --json: %s" % j)
    for f in failures:
        print(f)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

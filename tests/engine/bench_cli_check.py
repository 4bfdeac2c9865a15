#!/usr/bin/env python3
"""`exl bench` on the CPU with the fixture ref-xs-4.0bpw: every prompt length and context is
reported with its bound; the bytes read per token grow with the context by exactly the KV cache of
the extra positions (from the model's config); decode with generate's sampler flags samples (and
says so); bad lists and settings are clear errors. Exit 77: no fixtures."""
import argparse, json, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--exl", required=True)
ap.add_argument("--fixtures", required=True)
args = ap.parse_args()
model = os.path.join(args.fixtures, "models", "exl2", "ref-xs-4.0bpw")
if not os.path.isfile(os.path.join(model, "config.json")):
    print("fixture model missing: " + model)
    sys.exit(77)
cfg = json.load(open(os.path.join(model, "config.json")))

def run(*extra):
    return subprocess.run([args.exl, "bench", "-m", model, "--device", "cpu", *extra], capture_output=True, text=True)

r = run("--prompt", "32,64", "--ctx", "0,128", "--gen", "8", "--repeats", "1", "--json")
assert r.returncode == 0, r.stderr
j = json.loads(r.stdout)
assert j["device"] == "cpu" and j["copy_bandwidth_gbs"] > 0, j
assert [p["tokens"] for p in j["prefill"]] == [32, 64], j["prefill"]
for p in j["prefill"]:
    assert p["tokens_per_s"] > 0 and p["time_to_first_token_ms"] > 0, p
    assert abs(p["tokens"] / (p["time_to_first_token_ms"] / 1e3) - p["tokens_per_s"]) <= 1e-6 * p["tokens_per_s"], p
assert [d["context"] for d in j["decode"]] == [0, 128], j["decode"]
for d in j["decode"]:
    assert d["tokens_per_s"] > 0, d
    bound = j["copy_bandwidth_gbs"] * 1e9 / d["bytes_per_token"]
    assert abs(d["bound_tokens_per_s"] - bound) <= 1e-9 * bound, (d, bound)
    assert abs(d["percent_of_bound"] - 100 * d["tokens_per_s"] / bound) < 1e-6, d
heads = cfg["num_attention_heads"]
kv = cfg.get("num_key_value_heads", heads)
head_dim = cfg.get("head_dim", cfg["hidden_size"] // heads)
per_position = cfg["num_hidden_layers"] * kv * head_dim * 2 * 2  # K and V, fp16
grow = j["decode"][1]["bytes_per_token"] - j["decode"][0]["bytes_per_token"]
assert grow == 128 * per_position, (grow, 128 * per_position)
for key in ("prompt_tokens", "prefill_tokens_per_s", "decode_tokens_per_s", "weights_bytes", "peak_vram_bytes"):
    assert key in j, key
assert j["peak_vram_bytes"] >= j["weights_bytes"] > 0, j
assert j["sampling"] == "greedy", j["sampling"]

# Decode timed as the app's chat settings sample (generate's sampler flags).
r = run("--prompt", "32", "--ctx", "0", "--gen", "8", "--repeats", "1", "--json", "--temperature", "0.7",
        "--top-k", "40", "--top-p", "0.9", "--min-p", "0.05", "--rep-pen", "1.05")
assert r.returncode == 0, r.stderr
s = json.loads(r.stdout)
assert s["sampling"] == "sampled" and [d["context"] for d in s["decode"]] == [0], s
assert s["decode"][0]["tokens_per_s"] > 0 and s["decode"][0]["bytes_per_token"] == j["decode"][0]["bytes_per_token"], s

for bad, flag in ((["--prompt", "0"], "--prompt"), (["--ctx", "0,x"], "--ctx"), (["--gen", "2"], "--gen"),
                  (["--top-p", "1.5"], "--top-p")):
    r = run(*bad)
    assert r.returncode != 0 and flag in r.stderr, (bad, r.returncode, r.stderr)
print("exl bench: prefill and decode rows with their bounds; cache bytes per position", per_position)

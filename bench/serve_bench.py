#!/usr/bin/env python3
"""Issue #10 server benchmark: decode tokens/s streamed through `exl serve` against `exl bench`
on the same model, device and prompt length. Overhead = 1 - server / bench; the target is <= 5 %.

Server rate, measured at the client: (completion tokens - 1) / (time from the first streamed text
to the last), so prefill and the first token are excluded exactly as in `exl bench`'s decode
figure (the generator's decode clock starts after the first token). Greedy (temperature 0),
max_tokens 256, a fixed prompt. The server has no ignore_eos: a request that stops early is
repeated with logit_bias -100 on the special tokens (noted in the output; the bias adds a host
pass over the logits, so it is not used unless needed). No third-party packages (http.client).

usage: bench/serve_bench.py --exl EXL -m DIR [--device cuda] [--max-tokens 256] [--repeats 3]
                            [--port 5077] [--endpoint completions|chat] [--json OUT]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

PROMPT = ("The history of the lighthouse keepers on the northern islands is a long one. "
          "Every winter the storms came in from the west, and every spring the keepers wrote "
          "down what the sea had taken and what it had left behind. ")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def tokens_of(exl, model, text):
    out = run([exl, "tokenize", "-m", model, "--bos", text]).stdout
    return len(json.loads(out))


def bench_decode(exl, model, device, prompt_tokens, gen, repeats, ctx):
    # Decode after a prompt of prompt_tokens (exl bench's --ctx is the decode context; its cache is
    # sized from it, so `ctx` is not passed).
    del ctx
    cmd = [exl, "bench", "-m", model, "--device", device, "--prompt", str(prompt_tokens), "--ctx",
           str(prompt_tokens), "--gen", str(gen), "--repeats", str(repeats), "--json"]
    r = run(cmd)
    return json.loads(r.stdout.strip().splitlines()[-1])


def wait_health(port, proc, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError("exl serve exited with status %d" % proc.returncode)
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return time.time() - t0
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError("exl serve did not answer /health within %d s" % timeout)


def model_id(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/v1/models")
    return json.loads(c.getresponse().read())["data"][0]["id"]


def stream_once(port, mid, endpoint, max_tokens, bias):
    body = {"model": mid, "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    if endpoint == "chat":
        body["messages"] = [{"role": "user", "content": PROMPT}]
        path = "/v1/chat/completions"
    else:
        body["prompt"] = PROMPT
        path = "/v1/completions"
    if bias:
        body["logit_bias"] = bias
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t_send = time.perf_counter()
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    resp = c.getresponse()
    if resp.status != 200:
        raise RuntimeError("HTTP %d: %s" % (resp.status, resp.read()[:300]))
    times, usage, finish, text = [], None, None, []
    while True:
        line = resp.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        now = time.perf_counter()
        ev = json.loads(data)
        if ev.get("usage"):
            usage = ev["usage"]
        for ch in ev.get("choices", []):
            piece = ch.get("text") if endpoint != "chat" else (ch.get("delta") or {}).get("content")
            if piece:
                times.append(now)
                text.append(piece)
            if ch.get("finish_reason"):
                finish = ch["finish_reason"]
    c.close()
    tokens = usage["completion_tokens"] if usage else len(times)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return {"tokens": tokens, "events": len(times), "finish_reason": finish,
            "ttft_s": (times[0] - t_send) if times else None, "span_s": span,
            "tokens_per_s": (tokens - 1) / span if span > 0 else 0.0, "text_chars": len("".join(text))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exl", default=os.environ.get("EXL", "exl"))
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--port", type=int, default=5077)
    ap.add_argument("--endpoint", choices=["completions", "chat"], default="completions")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--load-timeout", type=int, default=300)
    a = ap.parse_args()

    cfg = json.load(open(os.path.join(a.model, "config.json")))
    vocab = cfg["vocab_size"]
    prompt_tokens = tokens_of(a.exl, a.model, PROMPT)
    ctx = prompt_tokens + a.max_tokens + 64
    name = os.path.basename(os.path.normpath(a.model))

    t0 = time.time()
    b = bench_decode(a.exl, a.model, a.device, prompt_tokens, a.max_tokens, a.repeats, ctx)
    print("%s: exl bench (%s): decode %.1f tokens/s (best of %d, %d prompt + %d tokens), %.0f s"
          % (name, b["device"], b["decode_tokens_per_s"], a.repeats, prompt_tokens, a.max_tokens, time.time() - t0),
          flush=True)

    srv = subprocess.Popen([a.exl, "serve", "-m", a.model, "--device", a.device, "--port", str(a.port),
                            "--ctx", str(ctx), "--queue", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    runs, biased = [], False
    try:
        load_s = wait_health(a.port, srv, a.load_timeout)
        mid = model_id(a.port)
        stream_once(a.port, mid, a.endpoint, 16, None)  # warm-up
        bias = None
        for _ in range(a.repeats):
            r = stream_once(a.port, mid, a.endpoint, a.max_tokens, bias)
            if r["tokens"] < a.max_tokens and bias is None:
                # stopped on an end token: suppress the special tokens (the last five ids) and redo
                bias = {str(i): -100 for i in range(vocab - 5, vocab)}
                for k in ("bos_token_id", "eos_token_id", "pad_token_id"):
                    if isinstance(cfg.get(k), int):
                        bias[str(cfg[k])] = -100
                biased = True
                r = stream_once(a.port, mid, a.endpoint, a.max_tokens, bias)
            runs.append(r)
            print("  server stream: %d tokens in %d events, %.1f tokens/s, first text after %.3f s (%s)"
                  % (r["tokens"], r["events"], r["tokens_per_s"], r["ttft_s"] or 0, r["finish_reason"]), flush=True)
    finally:
        srv.terminate()
        try:
            _, err = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            _, err = srv.communicate()
    rates = [r["tokens_per_s"] for r in runs]
    best, med = max(rates), statistics.median(rates)
    bench_rate = b["decode_tokens_per_s"]
    overhead_best = 1 - best / bench_rate if bench_rate else float("nan")
    overhead_med = 1 - med / bench_rate if bench_rate else float("nan")
    coalesced = any(r["events"] < 0.9 * r["tokens"] for r in runs)
    verdict = "PASS" if overhead_best <= 0.05 else "FAIL"
    print("%s: server %.1f tokens/s best, %.1f median; bench %.1f; overhead %.2f %% (best vs best), %.2f %% (median)  %s%s%s"
          % (name, best, med, bench_rate, 100 * overhead_best, 100 * overhead_med, verdict,
             "; logit_bias on the special tokens was needed" if biased else "",
             "; note: several tokens per SSE event (held-back text)" if coalesced else ""), flush=True)
    out = {"model": a.model, "device": b["device"], "endpoint": a.endpoint, "prompt_tokens": prompt_tokens,
           "max_tokens": a.max_tokens, "bench": b, "server_load_s": load_s, "server_runs": runs,
           "server_best_tokens_per_s": best, "server_median_tokens_per_s": med,
           "overhead_best": overhead_best, "overhead_median": overhead_med, "logit_bias_needed": biased,
           "verdict": verdict}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

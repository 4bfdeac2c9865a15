#!/usr/bin/env python3
"""Acceptance test of `exl serve` with the official `openai` package (CPU, fixture model, loopback).

Starts `exl serve` on a free 127.0.0.1 port, waits for /health, drives it with the openai client
and raw HTTP, then runs a bounded load test (200 concurrent streams, --queue 4). Prints one line
per check and a closing "N passed, M failed". Exit 77 (ctest skip) when the fixture or the openai
package is missing, unless EXL_REQUIRE_FIXTURES=1.
"""
import concurrent.futures, json, os, subprocess, threading, time

from serverlib import Server, arg_parser, check, finish, model_of, rss_kib, skip
import serverlib


def raw(port, method, path, body=None, headers=None, timeout=60):
    """(status, body) of one request on a fresh connection."""
    status, _, data = serverlib.raw(port, method, path, body, headers, timeout)
    return status, data


def chat_prompt_tokens(exl, model, messages):
    """Prompt size of a chat request by our own tools: the model's template rendered by
    `exl template` (bos/eos as tokenizer_config.json names them), then `exl tokenize --special`."""
    import tempfile
    with open(os.path.join(model, "tokenizer_config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    token = lambda v: v.get("content") if isinstance(v, dict) else v
    with tempfile.TemporaryDirectory() as tmp:
        mfile, pfile = os.path.join(tmp, "messages.json"), os.path.join(tmp, "prompt.txt")
        with open(mfile, "w", encoding="utf-8") as f:
            json.dump(messages, f)
        args = [exl, "template", "-m", model, "--messages", mfile, "--add-generation-prompt"]
        for key, flag in (("bos_token", "--bos-token"), ("eos_token", "--eos-token")):
            if token(cfg.get(key)):
                args += [flag, token(cfg[key])]
        with open(pfile, "wb") as f:
            f.write(subprocess.check_output(args))
        return len(json.loads(subprocess.check_output([exl, "tokenize", "-m", model, "--special", "--file", pfile])))


def functional(exl, model, openai):
    srv = Server(exl, model, ["--queue", "4"])
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{srv.port}/v1", api_key="unused", max_retries=0)
        models = client.models.list()
        ids = [m.id for m in models.data]
        check("models.list names the served model", ids == [os.path.basename(model)], ids)
        mid = ids[0] if ids else "?"

        msgs = [{"role": "user", "content": "Tell me a story about a cat."}]
        chat = client.chat.completions.create(model=mid, messages=msgs, max_tokens=24, seed=42, temperature=0.8)
        text = chat.choices[0].message.content
        check("chat completion returns text", isinstance(text, str) and len(text) > 0, repr(text))
        check("chat usage counts completion tokens", 0 < chat.usage.completion_tokens <= 24, chat.usage)
        check("chat finish_reason", chat.choices[0].finish_reason in ("stop", "length"), chat.choices[0].finish_reason)
        expected_prompt = chat_prompt_tokens(exl, model, msgs)
        check("chat prompt_tokens equal `exl template` + `exl tokenize`", chat.usage.prompt_tokens == expected_prompt,
              f"{chat.usage.prompt_tokens} vs {expected_prompt}")

        parts, usage = [], None
        stream = client.chat.completions.create(model=mid, messages=msgs, max_tokens=24, seed=42, temperature=0.8,
                                                stream=True, stream_options={"include_usage": True})
        for ch in stream:
            if ch.usage:
                usage = ch.usage
            for c in ch.choices:
                if c.delta and c.delta.content:
                    parts.append(c.delta.content)
        check("streamed deltas equal the non-streamed text (same seed)", "".join(parts) == text,
              f"{''.join(parts)!r} vs {text!r}")
        check("stream_options.include_usage sends usage", usage is not None and
              usage.completion_tokens == chat.usage.completion_tokens, usage)
        cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", 0) if usage else 0
        check("repeated prompt reports cached prompt tokens", cached and cached >= usage.prompt_tokens - 1,
              usage)

        prompt = "Once upon a time, there was a little"
        base = client.completions.create(model=mid, prompt=prompt, max_tokens=32, temperature=0)
        btext = base.choices[0].text
        toks = json.loads(subprocess.check_output([exl, "tokenize", "-m", model, "--bos", prompt], text=True))
        check("completion prompt_tokens equal `exl tokenize`", base.usage.prompt_tokens == len(toks),
              f"{base.usage.prompt_tokens} vs {len(toks)}")
        cut = btext[4:12].strip() if len(btext) > 12 else ""
        if cut:
            stopped = client.completions.create(model=mid, prompt=prompt, max_tokens=32, temperature=0, stop=[cut])
            st = stopped.choices[0].text
            check("completion with a stop string cuts before it",
                  st == btext[:btext.find(cut)] and stopped.choices[0].finish_reason == "stop", f"{st!r} / {btext!r}")
        else:
            check("completion produced text for the stop-string check", False, repr(btext))
        st2 = client.completions.create(model=mid, prompt=prompt, max_tokens=5, temperature=0)
        check("max_tokens bounds completion tokens", st2.usage.completion_tokens == 5 or
              st2.choices[0].finish_reason == "stop", st2.usage)

        def status_of(fn):
            try:
                fn()
                return 200
            except openai.APIStatusError as e:
                return e.status_code
        other = client.chat.completions.create(model="../../etc/passwd", messages=msgs, max_tokens=2)
        check("another model name (a path) is answered by the served model", other.model == mid, other.model)
        check("n=2 -> 400", status_of(lambda: client.chat.completions.create(
            model=mid, messages=msgs, max_tokens=2, n=2)) == 400)
        check("temperature=5 -> 400", status_of(lambda: client.chat.completions.create(
            model=mid, messages=msgs, max_tokens=2, temperature=5)) == 400)
        check("max_tokens=0 -> 400", status_of(lambda: client.completions.create(
            model=mid, prompt="x", max_tokens=0)) == 400)
        s, body = raw(srv.port, "POST", "/v1/chat/completions", body=b"{not json")
        check("malformed JSON -> 400 in OpenAI shape", s == 400 and "error" in json.loads(body), (s, body[:200]))
        s, body = raw(srv.port, "POST", "/v1/chat/completions", body=b"[" * 5000 + b"]" * 5000)
        check("deep JSON -> 400", s == 400, s)
        big = json.dumps({"model": mid, "messages": [{"role": "user", "content": "x" * (5 << 20)}]}).encode()
        try:
            s, body = raw(srv.port, "POST", "/v1/chat/completions", body=big)
        except OSError as e:
            s = 413 if "reset" in str(e).lower() or "pipe" in str(e).lower() else str(e)
        check("oversize body -> 413", s == 413, s)
        s, _ = raw(srv.port, "GET", "/v1/nothing")
        check("unknown route -> 404", s == 404, s)
        check("server still healthy", raw(srv.port, "GET", "/health")[0] == 200)
    finally:
        srv.stop()

    srv = Server(exl, model, ["--api-key", "sekret"])
    try:
        s, body = raw(srv.port, "GET", "/v1/models")
        check("missing API key -> 401", s == 401 and json.loads(body)["error"]["code"] == "invalid_api_key", (s, body))
        bad = openai.OpenAI(base_url=f"http://127.0.0.1:{srv.port}/v1", api_key="wrong", max_retries=0)
        try:
            bad.models.list()
            s = 200
        except openai.APIStatusError as e:
            s = e.status_code
        check("wrong API key -> 401", s == 401, s)
        good = openai.OpenAI(base_url=f"http://127.0.0.1:{srv.port}/v1", api_key="sekret", max_retries=0)
        check("right API key works", len(good.models.list().data) == 1)
    finally:
        srv.stop()
    r = subprocess.run([exl, "serve", "-m", model, "--device", "cpu", "--host", "0.0.0.0", "--port", "0"],
                       capture_output=True, text=True, timeout=60)
    check("non-loopback host without --api-key is refused", r.returncode != 0 and "api-key" in r.stderr, r.stderr)


def load_test(exl, model):
    srv = Server(exl, model, ["--queue", "4", "--http-threads", "256"])
    try:
        mid = os.path.basename(model)
        body = json.dumps({"model": mid, "messages": [{"role": "user", "content": "Tell me a story."}],
                           "max_tokens": 32, "stream": True, "seed": 1}).encode()
        raw(srv.port, "POST", "/v1/chat/completions", body=body.replace(b'"stream": true', b'"stream": false'))
        time.sleep(0.5)
        baseline = rss_kib(srv.proc.pid)
        barrier = threading.Barrier(200, timeout=60)

        def one(_):
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass
            try:
                s, data = raw(srv.port, "POST", "/v1/chat/completions", body=body, timeout=300)
            except OSError as e:
                return ("oserror", str(e))
            if s == 429:
                return ("429", None)
            text = data.decode("utf-8", "replace")
            return ("ok" if s == 200 and text.rstrip().endswith("data: [DONE]") else "bad", (s, text[-200:]))

        with concurrent.futures.ThreadPoolExecutor(200) as ex:
            outcomes = list(ex.map(one, range(200)))
        kinds = {k: sum(1 for o in outcomes if o[0] == k) for k in ("ok", "429", "bad", "oserror")}
        print(f"load: 200 concurrent streams, queue 4: {kinds}", flush=True)
        check("load: some requests get 429", kinds["429"] > 0, kinds)
        check("load: every other request completes with [DONE]", kinds["ok"] + kinds["429"] == 200,
              [o for o in outcomes if o[0] in ("bad", "oserror")][:3])
        s, _ = raw(srv.port, "POST", "/v1/chat/completions", body=body)
        check("load: server keeps serving afterwards", s == 200, s)
        time.sleep(1.0)
        after = rss_kib(srv.proc.pid)
        print(f"load: RSS baseline {baseline} KiB, after {after} KiB", flush=True)
        check("load: RSS back near baseline (< +32 MiB)", after - baseline < 32 * 1024, (baseline, after))
    finally:
        srv.stop()


def main():
    ap = arg_parser()
    args = ap.parse_args()
    model = model_of(args)
    try:
        import openai
    except ImportError:
        skip("the openai package is not installed (python3 -m pip install openai)")
    try:
        functional(args.exl, model, openai)
        load_test(args.exl, model)
    except Exception as e:  # a crash of the harness is a failure, not a skip
        check("harness ran to the end", False, repr(e))
    finish()


if __name__ == "__main__":
    main()

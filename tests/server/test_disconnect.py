#!/usr/bin/env python3
"""A non-streamed request whose client disconnects stops generating within about a step.

Starts `exl serve` on the fixture model (CPU, 127.0.0.1). Measures a long greedy completion
(end-of-text banned through logit_bias, so it runs to max_tokens) and a one-token request alone;
then sends the long request with a 0.3 s client timeout, closes the socket when it expires, and
measures the wait of the next one-token request: it must be about that request's own time plus a
step, not the rest of the abandoned generation. Standard library only, bounded in time.
"""
import http.client, json, os, socket, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, arg_parser, check, finish, model_of, post_json, raw  # noqa: E402


def eos_ids(model):
    ids = set()
    for name in ("config.json", "generation_config.json"):
        try:
            with open(os.path.join(model, name)) as f:
                v = json.load(f).get("eos_token_id")
        except (OSError, ValueError):
            continue
        ids.update(v if isinstance(v, list) else [v] if isinstance(v, int) else [])
    return sorted(ids)


def timed(port, body):
    t0 = time.perf_counter()
    s, _, j = post_json(port, "/v1/completions", body, timeout=120)
    return s, j, time.perf_counter() - t0


def main():
    ap = arg_parser()
    args = ap.parse_args()
    model = model_of(args)
    srv = Server(args.exl, model)
    try:
        mid = srv.model_id
        bias = {str(i): -100 for i in eos_ids(model)}
        long_req = {"model": mid, "prompt": "Once upon a time", "max_tokens": 400, "temperature": 0,
                    "logit_bias": bias}
        one_req = {"model": mid, "prompt": "The weather today is", "max_tokens": 1, "temperature": 0}
        timed(srv.port, one_req)  # warm-up
        s, j, t_full = timed(srv.port, long_req)
        n = j.get("usage", {}).get("completion_tokens", 0) if isinstance(j, dict) else 0
        check("the long request runs to max_tokens", s == 200 and n == 400, (s, n))
        step = t_full / max(n, 1)
        s, _, t_one = timed(srv.port, one_req)
        check("a one-token request alone", s == 200, s)

        waits = []
        for attempt in range(2):  # the official client retries a timed-out request twice by default
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=0.3)
            try:
                c.request("POST", "/v1/completions", body=json.dumps(long_req).encode(),
                          headers={"Content-Type": "application/json"})
                c.getresponse().read()
                timed_out = False
            except (socket.timeout, TimeoutError):
                timed_out = True
            finally:
                c.close()
            check(f"attempt {attempt}: the client gave up after 0.3 s", timed_out)
            s, _, wait = timed(srv.port, one_req)
            check(f"attempt {attempt}: the next request is served", s == 200, s)
            waits.append(wait)
        print(f"disconnect: long request {n} tokens in {t_full:.2f} s ({step * 1000:.2f} ms a step); "
              f"one-token request alone {t_one * 1000:.1f} ms; after an abandoned request "
              f"{', '.join(f'{w * 1000:.1f} ms' for w in waits)}", flush=True)
        for i, w in enumerate(waits):
            # Its own time, the 20 ms disconnect check, a step, and scheduling slack of the 2-core
            # machine; the abandoned generation's rest is hundreds of steps.
            check(f"attempt {i}: next request waits about one step, not the abandoned generation",
                  w <= t_one + 0.02 + step + 0.25 and w < 0.5 * (t_full - 0.3),
                  f"{w:.3f} s vs {t_one:.3f} s alone, {t_full:.2f} s whole")
        check("the server logged the stopped generation",
              sum("client disconnected before the answer" in l for l in srv.log) >= 2, "".join(srv.log)[-500:])
        check("server still healthy", raw(srv.port, "GET", "/health")[0] == 200)
    finally:
        srv.stop()
    finish()


if __name__ == "__main__":
    main()

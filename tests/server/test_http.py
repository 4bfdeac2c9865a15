#!/usr/bin/env python3
"""HTTP details of `exl serve` (standard library only, fixture model, CPU, 127.0.0.1): methods
(405 with Allow), authentication (Bearer in any case, WWW-Authenticate), 429 with Retry-After,
null content, error texts, any model name accepted, keep-alive and the header deadline."""
import http.client, json, os, socket, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, arg_parser, check, finish, model_of, post_json, raw  # noqa: E402


def methods_and_errors(srv):
    mid = srv.model_id
    for path in ("/v1/chat/completions", "/v1/completions"):
        for method in ("GET", "PUT", "DELETE"):
            s, h, body = raw(srv.port, method, path)
            err = json.loads(body).get("error", {}) if body else {}
            check(f"{method} {path} -> 405 with Allow: POST",
                  s == 405 and h.get("allow") == "POST" and err.get("code") == "method_not_allowed", (s, h, body))
    s, h, _ = raw(srv.port, "POST", "/v1/models", b"{}")
    check("POST /v1/models -> 405 with Allow: GET", s == 405 and h.get("allow") == "GET", (s, h))
    s, _, _ = raw(srv.port, "GET", "/v1/nothing")
    check("unknown route stays 404", s == 404, s)

    chat = lambda msgs: {"model": mid, "messages": msgs, "max_tokens": 2}
    s, _, j = post_json(srv.port, "/v1/chat/completions", chat([{"role": "user", "content": None}]))
    err = j.get("error", {}) if isinstance(j, dict) else {}
    check("content: null in a user message -> 400 naming the field",
          s == 400 and err.get("param") == "messages[0].content" and "null" in err.get("message", ""), (s, j))
    s, _, j = post_json(srv.port, "/v1/chat/completions", chat([{"role": "user"}]))
    check("a user message without content -> 400", s == 400, (s, j))
    tool_turn = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    s, _, j = post_json(srv.port, "/v1/chat/completions", chat([{"role": "user", "content": "hi"}, tool_turn,
                                                                 {"role": "user", "content": "go on"}]))
    check("content: null in an assistant message with tool_calls is accepted", s == 200, (s, j))
    s, _, j = post_json(srv.port, "/v1/chat/completions",
                        chat([{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]))
    check("content: null in an assistant message without tool_calls -> 400", s == 400, (s, j))
    s, _, j = post_json(srv.port, "/v1/chat/completions", dict(chat([{"role": "user", "content": "hi"}]), top_p=2))
    msg = j.get("error", {}).get("message", "") if isinstance(j, dict) else ""
    check("top_p out of range says 'between 0 and 1'", s == 400 and "between 0 and 1" in msg, msg)
    s, _, j = post_json(srv.port, "/v1/chat/completions",
                        dict(chat([{"role": "user", "content": "hi"}]), presence_penalty=3))
    msg = j.get("error", {}).get("message", "") if isinstance(j, dict) else ""
    check("presence_penalty out of range says 'between -2 and 2'", s == 400 and "between -2 and 2" in msg, msg)

    for name in ("gpt-4o", "some/other-model", ""):
        s, _, j = post_json(srv.port, "/v1/chat/completions", dict(chat([{"role": "user", "content": "hi"}]),
                                                                   model=name))
        check(f"model name {name!r} is accepted and answered by the served model",
              s == 200 and j.get("model") == mid, (s, j))
    s, _, j = post_json(srv.port, "/v1/completions", {"model": "gpt-3.5-turbo-instruct", "prompt": "Hi",
                                                      "max_tokens": 2})
    check("completions accept any model name too", s == 200 and j.get("model") == mid, (s, j))
    s, _, body = raw(srv.port, "GET", "/v1/models/gpt-4o")
    check("GET /v1/models/<other> -> 404 naming the served id", s == 404 and mid.encode() in body, (s, body))


def keep_alive_and_deadlines(srv):
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        statuses = []
        for _ in range(3):
            c.request("GET", "/health")
            r = c.getresponse()
            r.read()
            statuses.append(r.status)
        check("three requests on one keep-alive connection", statuses == [200] * 3, statuses)
        check("the answer announces the keep-alive limits", "timeout=" in (r.getheader("Keep-Alive") or ""),
              r.getheaders())
    finally:
        c.close()
    # Pipelined: two requests in one write, two answers in order.
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    check("two pipelined requests get two answers", data.count(b"HTTP/1.1 200") == 2 and b'"object":"list"' in data,
          data[:300])
    # A header that never ends is cut at the header deadline (2 s here) with 408.
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        t0 = time.time()
        s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        data = b""
        try:
            while len(data) < 4096:
                s.sendall(b"X")
                time.sleep(0.2)
                s.setblocking(False)
                try:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
                if time.time() - t0 > 8:
                    break
        except OSError:
            pass
        took = time.time() - t0
    check("a trickled header is cut at the deadline with 408", data.startswith(b"HTTP/1.1 408") and took < 4,
          (took, data[:100]))
    s, _, _ = raw(srv.port, "GET", "/health", headers={"X-Big": "y" * 20000})
    check("oversize headers -> 431", s == 431, s)


def auth_and_queue(exl, model):
    srv = Server(exl, model, ["--api-key", "sekret", "--queue", "1"])
    try:
        s, h, body = raw(srv.port, "GET", "/v1/models")
        check("missing key -> 401 with WWW-Authenticate: Bearer",
              s == 401 and h.get("www-authenticate", "").startswith("Bearer"), (s, h))
        for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
            s, _, _ = raw(srv.port, "GET", "/v1/models", headers={"Authorization": f"{scheme} sekret"})
            check(f"scheme {scheme!r} accepted", s == 200, s)
        s, _, _ = raw(srv.port, "GET", "/v1/models", headers={"Authorization": "Basic sekret"})
        check("another scheme -> 401", s == 401, s)
        s, _, _ = raw(srv.port, "GET", "/v1/models", headers={"Authorization": "Bearer sekre"})
        check("wrong key -> 401", s == 401, s)

        # One generating and one queued fill --queue 1; a third gets 429 with Retry-After.
        auth = {"Authorization": "Bearer sekret"}
        body = {"model": srv.model_id, "prompt": "Once upon a time", "max_tokens": 400, "temperature": 0}
        out = []
        threads = [threading.Thread(target=lambda: out.append(post_json(srv.port, "/v1/completions", body, auth,
                                                                         timeout=120)[0])) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.15)
        s, h, j = post_json(srv.port, "/v1/completions", dict(body, max_tokens=1), auth)
        check("queue full -> 429 with Retry-After", s == 429 and h.get("retry-after", "").isdigit(), (s, h, j))
        for t in threads:
            t.join(120)
        check("the two accepted requests complete", sorted(out) == [200, 200], out)
    finally:
        srv.stop()


def main():
    ap = arg_parser()
    args = ap.parse_args()
    model = model_of(args)
    srv = Server(args.exl, model, ["--header-timeout", "2"])
    try:
        methods_and_errors(srv)
        keep_alive_and_deadlines(srv)
    finally:
        srv.stop()
    auth_and_queue(args.exl, model)
    finish()


if __name__ == "__main__":
    main()

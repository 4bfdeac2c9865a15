#!/usr/bin/env python3
"""Connection abuse: idle, reopening and slowloris sockets must not delay a real request.

Starts `exl serve` on the fixture model (CPU, 127.0.0.1) with a 3 s header deadline, measures a
streamed chat request's time to first token alone, then again while 100 idle sockets, 32 sockets
reopened as the server closes them and 20 slowloris sockets (one header byte every 0.5 s) are
held against it from other loopback addresses (127.0.0.2-7), and asserts the median within 2x.
Then checks the per-client connection cap. Bounded in time (about 15 s); standard library only.
"""
import http.client, json, os, selectors, socket, statistics, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, arg_parser, check, finish, model_of, raw  # noqa: E402

SENTENCE = "The quick brown fox jumps over the lazy dog while the cat watches from the warm window. "


def ttft(port, model_id, n):
    """Seconds from sending a streamed chat request to its first non-empty content delta."""
    body = json.dumps({"model": model_id, "stream": True, "max_tokens": 4, "temperature": 0,
                       "messages": [{"role": "user", "content": f"Request {n}: " + SENTENCE * 12}]}).encode()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        t0 = time.perf_counter()
        c.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        first = None
        while True:
            line = r.readline()
            if not line:
                break
            if first is None and line.startswith(b"data: {"):
                delta = json.loads(line[6:])["choices"][0].get("delta", {})
                if delta.get("content"):
                    first = time.perf_counter() - t0
            if line.startswith(b"data: [DONE]"):
                break
        return r.status, first
    finally:
        c.close()


class Abuse(threading.Thread):
    """Holds the abusive sockets from one thread (selectors), reconnecting as the kinds require."""

    def __init__(self, port, limit_s=60.0):
        super().__init__(daemon=True)
        self.port, self.limit_s = port, limit_s
        self.stop_event = threading.Event()
        self.sel = selectors.DefaultSelector()
        self.stats = {"idle_closed": 0, "reopened": 0, "slow_closed": 0, "slow_bytes": 0, "connect_errors": 0}
        self.slots = []  # [kind, source address, socket or None, next send time]
        for i in range(100):
            self.slots.append(["idle", f"127.0.0.{2 + i % 4}", None, 0.0])
        for _ in range(32):
            self.slots.append(["reopen", "127.0.0.6", None, 0.0])
        for _ in range(20):
            self.slots.append(["slow", "127.0.0.7", None, 0.0])
        self.ready = threading.Event()

    def connect(self, slot):
        s = socket.socket()
        try:
            s.bind((slot[1], 0))
            s.settimeout(2)
            s.connect(("127.0.0.1", self.port))
            s.setblocking(False)
            if slot[0] == "slow":
                s.send(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            slot[2], slot[3] = s, time.time() + 0.5
            self.sel.register(s, selectors.EVENT_READ, slot)
        except OSError:
            self.stats["connect_errors"] += 1
            s.close()

    def open_count(self, kind):
        return sum(1 for s in self.slots if s[0] == kind and s[2] is not None)

    def run(self):
        end = time.time() + self.limit_s
        for slot in self.slots:
            self.connect(slot)
        self.ready.set()
        while not self.stop_event.is_set() and time.time() < end:
            for key, _ in self.sel.select(timeout=0.05):
                slot = key.data
                try:
                    data = slot[2].recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    continue  # e.g. a 408 before the close
                self.sel.unregister(slot[2])
                slot[2].close()
                slot[2] = None
                if slot[0] == "idle":
                    self.stats["idle_closed"] += 1
                elif slot[0] == "reopen":
                    self.stats["reopened"] += 1
                    self.connect(slot)
                else:
                    self.stats["slow_closed"] += 1
                    self.connect(slot)
            now = time.time()
            for slot in self.slots:
                if slot[0] == "slow" and slot[2] is not None and now >= slot[3]:
                    try:
                        slot[2].send(b"a")
                        self.stats["slow_bytes"] += 1
                    except OSError:
                        pass
                    slot[3] = now + 0.5
        for slot in self.slots:
            if slot[2] is not None:
                slot[2].close()


def per_client_cap(port, model_id):
    socks, closed = [], 0
    try:
        for _ in range(80):
            s = socket.socket()
            s.bind(("127.0.0.9", 0))
            s.connect(("127.0.0.1", port))
            socks.append(s)
        time.sleep(0.5)
        refused = 0
        for s in socks:
            s.setblocking(False)
            try:
                data = s.recv(4096)
                refused += data.startswith(b"HTTP/1.1 429") and b"too_many_connections" in data
                closed += data == b""
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        # Each of the 16 over the cap is answered 429, or (when the oldest has been idle for 1 s,
        # on a slow machine) takes the place of the oldest, which is closed.
        check("per-client cap: of 80 new sockets from one address, 64 stay open (16 answered 429 "
              "too_many_connections or closing an idle one)", refused + closed == 16 and refused > 0,
              (refused, closed))
        s, _ = ttft(port, model_id, 999)
        check("per-client cap: another address is served meanwhile", s == 200, s)
    finally:
        for s in socks:
            s.close()


def main():
    ap = arg_parser(other_model=True)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    model = model_of(args)
    srv = Server(args.exl, model, ["--header-timeout", "3"])
    try:
        ttft(srv.port, srv.model_id, 0)  # warm-up
        base = []
        for i in range(args.runs):
            s, t = ttft(srv.port, srv.model_id, 1 + i)
            check(f"baseline request {i} streams a token", s == 200 and t is not None, (s, t))
            base.append(t or 0.0)
        abuse = Abuse(srv.port)
        abuse.start()
        abuse.ready.wait(30)
        time.sleep(0.5)
        opened = {k: abuse.open_count(k) for k in ("idle", "reopen", "slow")}
        loaded, t_start = [], time.time()
        for i in range(args.runs):
            s, t = ttft(srv.port, srv.model_id, 100 + i)
            check(f"request {i} under abuse streams a token", s == 200 and t is not None, (s, t))
            loaded.append(t or 60.0)
            # Spread the requests over the header deadline, so reopened sockets are part of it.
            time.sleep(max(0.0, (i + 1) * 4.0 / args.runs - (time.time() - t_start)))
        abuse.stop_event.set()
        abuse.join(10)
        mb, ml = statistics.median(base), statistics.median(loaded)
        print(f"abuse: sockets open at the start {opened}; {abuse.stats}", flush=True)
        print(f"abuse: time to first token, median of {args.runs}: alone {mb * 1000:.1f} ms "
              f"(min {min(base) * 1000:.1f}, max {max(base) * 1000:.1f}), under abuse {ml * 1000:.1f} ms "
              f"(min {min(loaded) * 1000:.1f}, max {max(loaded) * 1000:.1f}), ratio {ml / mb:.2f}", flush=True)
        check("abuse: all 152 abusive sockets were connected", sum(opened.values()) == 152, opened)
        check("abuse: slowloris sockets closed at the header deadline despite trickling bytes",
              abuse.stats["slow_closed"] >= 20 and abuse.stats["slow_bytes"] > 0, abuse.stats)
        check("abuse: reopening sockets were closed and reopened", abuse.stats["reopened"] >= 32, abuse.stats)
        check("abuse: median time to first token within 2x of its time alone", ml <= 2.0 * mb,
              f"{ml * 1000:.1f} ms vs {mb * 1000:.1f} ms")
        per_client_cap(srv.port, srv.model_id)
        check("server still healthy", raw(srv.port, "GET", "/health")[0] == 200)
    finally:
        srv.stop()
    finish()


if __name__ == "__main__":
    main()

"""Shared pieces of the server tests (Python standard library only): start `exl serve` on the
fixture model on a free loopback port, raw HTTP helpers, checks, skip rules."""
import argparse, http.client, json, os, socket, subprocess, sys, threading, time

results = {"passed": 0, "failed": 0}


def check(name, cond, detail=""):
    results["passed" if cond else "failed"] += 1
    print(("ok    " if cond else "FAIL  ") + name + ("" if cond else f"  ({detail})"), flush=True)
    return cond


def skip(why):
    if os.environ.get("EXL_REQUIRE_FIXTURES") == "1":
        print("FAIL  " + why + " (EXL_REQUIRE_FIXTURES=1)")
        print("0 passed, 1 failed")
        sys.exit(1)
    print("skipped: " + why)
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(77)


def finish():
    print(f"{results['passed']} passed, {results['failed']} failed", flush=True)
    sys.exit(1 if results["failed"] or not results["passed"] else 0)


def arg_parser(other_model=False):
    """The server tests' common arguments: --exl, --fixtures (and --model: another model folder)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--exl", required=True)
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(__file__), "../../../shared/fixtures"))
    if other_model:
        ap.add_argument("--model", help="another model folder (default: the fixture model)")
    return ap


def model_of(args):
    """The model the test runs: --model when given, else the fixture model (skips when it is missing)."""
    return getattr(args, "model", None) or fixture_model(args.fixtures)


def fixture_model(fixtures_arg):
    fixtures = os.environ.get("EXL_FIXTURES") or fixtures_arg
    model = os.path.join(fixtures, "models/exl2/ref-s-4.0bpw")
    if not os.path.isdir(model):
        skip("fixture model missing: " + model)
    return model


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def raw(port, method, path, body=None, headers=None, timeout=60):
    """One request on a fresh connection: (status, headers dict with lower-case names, body bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        c.close()


def post_json(port, path, obj, headers=None, timeout=60):
    s, h, data = raw(port, "POST", path, json.dumps(obj).encode(), headers, timeout)
    try:
        return s, h, json.loads(data)
    except ValueError:
        return s, h, data


class Server:
    def __init__(self, exl, model, extra=(), ctx=1024):
        self.port = free_port()
        self.model_id = os.path.basename(model.rstrip("/"))
        # EXL_SERVE_WRAP: a command put before exl (e.g. "heaptrack -o /tmp/serve"), to profile it.
        wrap = os.environ.get("EXL_SERVE_WRAP", "").split()
        self.proc = subprocess.Popen(wrap + [exl, "serve", "-m", model, "--device", "cpu", "--port", str(self.port),
                                      "--ctx", str(ctx)] + list(extra), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.log = []
        threading.Thread(target=lambda: [self.log.append(l) for l in self.proc.stdout], daemon=True).start()
        deadline = time.time() + (600 if wrap else 60)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("exl serve exited: " + "".join(self.log))
            try:
                if raw(self.port, "GET", "/health", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("exl serve did not become healthy")

    def rss(self):
        return rss_kib(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

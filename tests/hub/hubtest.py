"""Shared pieces of the Hub tests: start the test server, read its request log, compare trees."""
import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
GATED_TOKEN = "hf_test_token_for_gated_repo"
EXL2_BRANCHES = {"3.0bpw": "ref-s-3.0bpw", "4.0bpw": "ref-s-4.0bpw", "6.0bpw": "ref-s-6.0bpw"}


def skip(message):
    print("SKIP: " + message)
    sys.exit(77)


def fixtures_dir(arg):
    d = arg or os.environ.get("EXL_FIXTURES") or os.path.join(HERE, "..", "..", "..", "shared", "fixtures")
    if not os.path.isdir(os.path.join(d, "models", "exl2", "ref-s-4.0bpw")):
        skip("fixture models not found under %s" % d)
    return d


def parse_args(exl_required=True):
    """The Hub tests' command line (--exl, --fixtures): the arguments and the fixtures folder (skips
    when the fixture models are missing)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures")
    ap.add_argument("--exl", required=exl_required)
    args = ap.parse_args()
    return args, fixtures_dir(args.fixtures)


@contextlib.contextmanager
def hub_server(fixtures, max_seconds=300):
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "hub_server.py"), "--fixtures", fixtures,
                             "--max-seconds", str(max_seconds)], stdout=subprocess.PIPE, text=True)
    try:
        ports = json.loads(proc.stdout.readline())
        yield Server(ports["hub"], ports["cdn"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Server:
    def __init__(self, hub, cdn):
        self.endpoint = "http://127.0.0.1:%d" % hub
        self.cdn_port = cdn

    def get(self, path):
        with urllib.request.urlopen(self.endpoint + path, timeout=10) as r:
            return json.loads(r.read())

    def log(self):
        return self.get("/_test/log")

    def reset(self):
        self.get("/_test/reset")

    def cut(self, target, times=1):
        return self.get("/_test/fault?cut=%s&times=%d" % (target, times))["cut"]


def file_map(folder):
    """{relative path: sha256} of the regular files under folder (symlinks followed)."""
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def check(cond, message):
    if not cond:
        print("FAIL: " + message)
        sys.exit(1)
    print("ok: " + message)


def stall(srv, target):
    return srv.get("/_test/fault?stall=%s" % target)["cut"]


def release(srv):
    srv.get("/_test/release")


def clean_env(home, endpoint, **extra):
    """The environment of a Hub client run: HF_HOME=home, HF_ENDPOINT=endpoint, no token, online."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE",
                        "HF_TOKEN_PATH", "XDG_CACHE_HOME")}
    env.update({"HF_HOME": home, "HF_ENDPOINT": endpoint, "HF_HUB_DISABLE_TELEMETRY": "1",
                "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_XET": "1"})
    env.update(extra)
    return env


def run(cmd, env, expect_rc=0, timeout=120):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if expect_rc is not None and p.returncode != expect_rc:
        print("FAIL: %s exited %d (expected %d)\nstdout: %s\nstderr: %s"
              % (" ".join(cmd), p.returncode, expect_rc, p.stdout[-2000:], p.stderr[-2000:]))
        sys.exit(1)
    return p


def hf_python(code, env):
    """Runs huggingface_hub code in a child with env; returns its stdout's last line parsed as JSON."""
    p = subprocess.run([sys.executable, "-c", "import json, huggingface_hub as hf\n" + code], env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print("FAIL: huggingface_hub child failed:\n" + p.stderr[-3000:])
        sys.exit(1)
    return json.loads(p.stdout.strip().splitlines()[-1])


def require_hf():
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        skip("huggingface_hub is not installed (pip install huggingface_hub)")

#!/usr/bin/env python3
"""A Hugging Face Hub test server (standard library only) serving repos made from the fixture models.

It speaks the Hub's HTTP protocol as huggingface_hub uses it:
  GET  /api/models?search=&author=&filter=&sort=&direction=&limit=      search (Link header paging)
  GET  /api/models/ORG/NAME[/revision/REV]                              model info (sha, siblings, tags, gated)
  GET  /api/models/ORG/NAME/refs                                        branches, tags, converts
  GET  /api/models/ORG/NAME/tree/REV[/PATH]?recursive=                  files (size, oid, lfs {oid=sha256, size})
  HEAD/GET /ORG/NAME/resolve/REV/FILE    ETag, X-Repo-Commit; small files served here, LFS files
                                         answered with 302 to the second ("CDN") port with X-Linked-Size and
                                         X-Linked-Etag; Range requests (206 / 416)
  GET  /_test/log  /_test/reset  /_test/fault?cut=SHA256|FILE&times=N (drop the connection at half the file)
       /_test/fault?stall=SHA256|FILE (send 64 KiB, then wait for /_test/release)   test controls, not the Hub's
The gated repo answers resolve with 401 (no token) or 403 (a wrong token), X-Error-Code: GatedRepo, like the Hub.

Repos (ORG = exl-test):
  ref-s-exl2       branches main (README, measurement), 3.0bpw, 4.0bpw, 6.0bpw (models/exl2/ref-s-*)
  ref-subfolders   main with the folders s-3.0bpw/ and xs-4.0bpw/
  ref-xs-gated     main with models/exl2/ref-xs-4.0bpw, gated
  ref-s-exl3       branches main (README), 2.0bpw, 4.0bpw: ExLlamaV3's conversions of ref-s
                   (tests/data/exl3/models, with the fixture's tokenizer and the embedding shard they
                   leave out rebuilt from the fixture's ref-s)

Prints one JSON line {"hub": PORT, "cdn": PORT} on stdout when listening (127.0.0.1 only), and stops by
itself after --max-seconds.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ORG = "exl-test"
LFS_SUFFIXES = (".safetensors", ".bin", ".gguf")
GITATTRIBUTES = b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n*.bin filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_oid(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class RepoFile:
    def __init__(self, path, data=None, source=None):
        self.path = path
        self.source = source  # a fixture file (read when served) or None with data in memory
        self.data = data
        raw = self.read()
        self.size = len(raw)
        self.lfs = path.endswith(LFS_SUFFIXES)
        self.sha256 = hashlib.sha256(raw).hexdigest() if self.lfs else None
        if self.lfs:
            pointer = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
                       % (self.sha256, self.size)).encode()
            self.pointer_size = len(pointer)
            self.oid = git_blob_oid(pointer)
        else:
            self.oid = git_blob_oid(raw)

    def read(self):
        if self.data is not None:
            return self.data
        with open(self.source, "rb") as f:
            return f.read()


class Branch:
    def __init__(self, name, files):
        self.name = name
        self.files = {f.path: f for f in files}
        h = hashlib.sha1(name.encode())
        for p in sorted(self.files):
            h.update(("%s %s\n" % (p, self.files[p].oid)).encode())
        self.commit = h.hexdigest()


class Repo:
    def __init__(self, name, tags, downloads, modified, gated=False):
        self.id = "%s/%s" % (ORG, name)
        self.tags = tags
        self.downloads = downloads
        self.modified = modified
        self.gated = gated
        self.branches = {}

    def add_branch(self, name, files):
        self.branches[name] = Branch(name, files)

    def branch(self, rev):
        rev = urllib.parse.unquote(rev)
        if rev in self.branches:
            return self.branches[rev]
        for b in self.branches.values():
            if b.commit == rev:
                return b
        return None


def folder_files(folder, prefix=""):
    return [RepoFile(prefix + n, source=os.path.join(folder, n)) for n in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, n))]


def embedding_shard(hf_dir):
    """A safetensors file holding only model.embed_tokens.weight of the HF model in hf_dir."""
    for name in sorted(os.listdir(hf_dir)):
        if not name.endswith(".safetensors"):
            continue
        with open(os.path.join(hf_dir, name), "rb") as f:
            raw = f.read()
        n = int.from_bytes(raw[:8], "little")
        head = json.loads(raw[8:8 + n])
        t = head.get("model.embed_tokens.weight")
        if t:
            data = raw[8 + n + t["data_offsets"][0]:8 + n + t["data_offsets"][1]]
            h = json.dumps({"model.embed_tokens.weight": {"dtype": t["dtype"], "shape": t["shape"],
                                                          "data_offsets": [0, len(data)]}}).encode()
            h += b" " * (-len(h) % 8)
            return len(h).to_bytes(8, "little") + h + data
    raise SystemExit("no embedding in " + hf_dir)


def exl3_model_files(folder, hf_dir, embedding):
    """An ExLlamaV3 conversion from tests/data/exl3 as published: its files, the tokenizer, the embedding shard."""
    with open(os.path.join(folder, "model.safetensors.index.json")) as f:
        shard = json.load(f)["weight_map"]["model.embed_tokens.weight"]
    files = folder_files(folder) + [RepoFile(n, source=os.path.join(hf_dir, n)) for n in ("tokenizer.json", "tokenizer_config.json")]
    files.append(RepoFile(shard, data=embedding))
    return sorted(files, key=lambda f: f.path)


def make_repos(fixtures):
    exl2 = os.path.join(fixtures, "models", "exl2")
    readme = lambda text: RepoFile("README.md", data=("---\nlibrary_name: exllamav2\ntags:\n- exl2\n---\n# %s\n" % text).encode())
    attrs = lambda: RepoFile(".gitattributes", data=GITATTRIBUTES)
    repos = []
    r = Repo("ref-s-exl2", ["exl2", "llama", "text-generation"], 1500, "2026-03-01T10:00:00.000Z")
    r.add_branch("main", [attrs(), readme("ref-s EXL2: one branch per bitrate"),
                          RepoFile("measurement.json", source=os.path.join(exl2, "ref-s-4.0bpw", "measurement.json"))])
    for bpw in ("3.0", "4.0", "6.0"):
        r.add_branch(bpw + "bpw", [attrs(), readme("ref-s %sbpw" % bpw)] + folder_files(os.path.join(exl2, "ref-s-%sbpw" % bpw)))
    repos.append(r)
    r = Repo("ref-subfolders", ["exl2", "llama"], 40, "2026-05-20T08:30:00.000Z")
    r.add_branch("main", [attrs(), readme("bitrates in folders")]
                 + folder_files(os.path.join(exl2, "ref-s-3.0bpw"), "s-3.0bpw/")
                 + folder_files(os.path.join(exl2, "ref-xs-4.0bpw"), "xs-4.0bpw/"))
    repos.append(r)
    r = Repo("ref-xs-gated", ["exl2", "llama"], 300, "2026-01-15T12:00:00.000Z", gated="manual")
    r.add_branch("main", [attrs(), readme("gated")] + folder_files(os.path.join(exl2, "ref-xs-4.0bpw")))
    repos.append(r)
    exl3 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "exl3", "models")
    hf_dir = os.path.join(fixtures, "models", "hf", "ref-s")
    if os.path.isdir(exl3) and os.path.isdir(hf_dir):
        readme3 = lambda text: RepoFile("README.md", data=("---\nlibrary_name: exllamav3\ntags:\n- exl3\n---\n# %s\n" % text).encode())
        embedding = embedding_shard(hf_dir)
        r = Repo("ref-s-exl3", ["exl3", "llama", "text-generation"], 800, "2026-04-10T09:00:00.000Z")
        r.add_branch("main", [attrs(), readme3("ref-s EXL3: one branch per bitrate")])
        for bpw in ("2.0", "4.0"):
            r.add_branch(bpw + "bpw", [attrs(), readme3("ref-s EXL3 %sbpw" % bpw)]
                         + exl3_model_files(os.path.join(exl3, "ref-s-%sbpw" % bpw), hf_dir, embedding))
        repos.append(r)
    return {x.id: x for x in repos}


class State:
    def __init__(self, repos, token):
        self.repos = repos
        self.token = token
        self.lock = threading.Lock()
        self.log = []
        self.cuts = {}  # sha256 -> remaining number of downloads to cut at half
        self.stalls = set()  # sha256 of blobs whose download waits for /_test/release
        self.release = threading.Event()
        self.cdn_port = 0


def parse_range(header, size):
    """(start, end) inclusive, None when no header, or 'bad' when unsatisfiable."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[6:].split(",")[0].strip()
    a, _, b = spec.partition("-")
    if a == "":
        n = int(b)
        start, end = max(size - n, 0), size - 1
    else:
        start = int(a)
        end = int(b) if b else size - 1
    end = min(end, size - 1)
    if start >= size or start > end:
        return "bad"
    return start, end


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None
    is_cdn = False

    def log_message(self, fmt, *args):
        pass

    def record(self):
        if self.path.startswith("/_test/"):
            return
        with self.state.lock:
            self.state.log.append({"host": "cdn" if self.is_cdn else "hub", "method": self.command, "path": self.path,
                                   "range": self.headers.get("Range"),
                                   "auth": bool(self.headers.get("Authorization"))})

    def send_json(self, obj, status=200, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error_code(self, status, code, message):
        self.send_json({"error": message}, status, {"X-Error-Code": code, "X-Error-Message": message})

    def do_HEAD(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        self.record()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p != ""]
        try:
            if self.is_cdn:
                return self.cdn(parts)
            if parts[:1] == ["_test"]:
                return self.control(parts[1:], query)
            if parts[:2] == ["api", "models"]:
                return self.api(parts[2:], query)
            if len(parts) >= 5 and parts[2] == "resolve":
                return self.resolve(parts[0] + "/" + parts[1], parts[3], "/".join(urllib.parse.unquote(p) for p in parts[4:]))
            self.send_error_code(404, "NotFound", "no route for %s" % url.path)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def control(self, parts, query):
        st = self.state
        if parts == ["log"]:
            with st.lock:
                return self.send_json(list(st.log))
        if parts == ["reset"]:
            with st.lock:
                st.log.clear()
                st.cuts.clear()
                st.stalls.clear()
                st.release.set()
            return self.send_json({"ok": True})
        if parts == ["release"]:
            st.release.set()
            return self.send_json({"ok": True})
        if parts == ["fault"]:
            target = query.get("cut", query.get("stall", [""]))[0]
            times = int(query.get("times", ["1"])[0])
            shas = [f.sha256 for r in st.repos.values() for b in r.branches.values() for f in b.files.values()
                    if f.lfs and (f.sha256 == target or f.path == target)]
            with st.lock:
                for s in shas:
                    if "stall" in query:
                        st.stalls.add(s)
                        st.release.clear()
                    else:
                        st.cuts[s] = times
            return self.send_json({"cut": sorted(set(shas))})
        self.send_error_code(404, "NotFound", "unknown control")

    def auth_token(self):
        h = self.headers.get("Authorization", "")
        return h[7:].strip() if h.startswith("Bearer ") else None

    def model_json(self, repo, branch, full):
        info = {"_id": hashlib.md5(repo.id.encode()).hexdigest()[:24], "id": repo.id, "modelId": repo.id,
                "author": ORG, "sha": branch.commit, "lastModified": repo.modified, "createdAt": repo.modified,
                "private": False, "gated": repo.gated, "disabled": False, "downloads": repo.downloads,
                "likes": repo.downloads // 100, "tags": repo.tags, "pipeline_tag": "text-generation",
                "library_name": "exllamav2"}
        if full:
            info["siblings"] = [{"rfilename": p} for p in sorted(branch.files)]
            cfg = branch.files.get("config.json")
            if cfg:
                c = json.loads(cfg.read())
                info["config"] = {"architectures": c.get("architectures"), "model_type": c.get("model_type")}
        return info

    def api(self, parts, query):
        st = self.state
        if not parts:
            return self.search(query)
        if len(parts) < 2:
            return self.send_error_code(404, "NotFound", "bad model path")
        repo = st.repos.get(parts[0] + "/" + parts[1])
        if repo is None:
            return self.send_error_code(401, "RepoNotFound", "Repository not found")
        rest = parts[2:]
        if not rest:
            return self.send_json(self.model_json(repo, repo.branches["main"], True))
        if rest[0] == "revision" and len(rest) == 2:
            b = repo.branch(rest[1])
            if b is None:
                return self.send_error_code(404, "RevisionNotFound", "Invalid rev id: %s" % urllib.parse.unquote(rest[1]))
            return self.send_json(self.model_json(repo, b, True))
        if rest == ["refs"]:
            branches = [{"name": b.name, "ref": "refs/heads/" + b.name, "targetCommit": b.commit}
                        for b in repo.branches.values()]
            return self.send_json({"branches": branches, "converts": [], "tags": [], "pullRequests": []})
        if rest[0] == "tree" and len(rest) >= 2:
            b = repo.branch(rest[1])
            if b is None:
                return self.send_error_code(404, "RevisionNotFound", "Invalid rev id: %s" % urllib.parse.unquote(rest[1]))
            prefix = "/".join(urllib.parse.unquote(p) for p in rest[2:]).strip("/")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return self.tree(b, prefix, recursive)
        self.send_error_code(404, "NotFound", "unknown model route")

    def tree(self, branch, prefix, recursive):
        base = prefix + "/" if prefix else ""
        if prefix and not any(p.startswith(base) for p in branch.files):
            return self.send_error_code(404, "EntryNotFound", "%s does not exist on %s" % (prefix, branch.name))
        out, dirs = [], set()
        for p in sorted(branch.files):
            if not p.startswith(base):
                continue
            rel = p[len(base):]
            segs = rel.split("/")
            for i in range(1, len(segs) if recursive else min(2, len(segs))):
                d = base + "/".join(segs[:i])
                if d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d})
            if len(segs) > 1 and not recursive:
                continue
            f = branch.files[p]
            e = {"type": "file", "oid": f.oid, "size": f.size, "path": p}
            if f.lfs:
                e["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": f.pointer_size}
            out.append(e)
        self.send_json(out)

    def search(self, query):
        text = query.get("search", [""])[0].lower()
        author = query.get("author", [None])[0]
        filters = [t for v in query.get("filter", []) for t in v.split(",") if t]
        sort = query.get("sort", [None])[0]
        limit = int(query.get("limit", ["1000"])[0])
        offset = int(query.get("offset", ["0"])[0])
        hits = [r for r in self.state.repos.values()
                if text in r.id.lower() and (author is None or r.id.startswith(author + "/"))
                and all(t in r.tags for t in filters)]
        keys = {"downloads": lambda r: r.downloads, "likes": lambda r: r.downloads,
                "lastModified": lambda r: r.modified, "createdAt": lambda r: r.modified}
        if sort in keys:
            descending = query.get("direction", ["-1"])[0] != "1"
            hits.sort(key=keys[sort], reverse=descending)
        page = hits[offset:offset + limit]
        extra = {}
        if offset + limit < len(hits):
            q = {k: v for k, v in query.items()}
            q["offset"] = [str(offset + limit)]
            host = "127.0.0.1:%d" % self.server.server_address[1]
            extra["Link"] = '<http://%s/api/models?%s>; rel="next"' % (host, urllib.parse.urlencode(q, doseq=True))
        self.send_json([self.model_json(r, r.branches["main"], False) for r in page], 200, extra)

    def resolve(self, repo_id, rev, path):
        repo = self.state.repos.get(repo_id)
        if repo is None:
            return self.send_error_code(401, "RepoNotFound", "Repository not found")
        if repo.gated:
            tok = self.auth_token()
            if tok is None:
                return self.send_error_code(401, "GatedRepo", "Access to model %s is restricted. You must have access to "
                                            "it and be authenticated to access it. Please log in." % repo.id)
            if tok != self.state.token:
                return self.send_error_code(403, "GatedRepo", "Access to model %s is restricted and you are not in the "
                                            "authorized list." % repo.id)
        b = repo.branch(rev)
        if b is None:
            return self.send_error_code(404, "RevisionNotFound", "Invalid rev id: %s" % urllib.parse.unquote(rev))
        f = b.files.get(path)
        if f is None:
            return self.send_error_code(404, "EntryNotFound", "%s does not exist on %s" % (path, b.name))
        common = {"X-Repo-Commit": b.commit, "Accept-Ranges": "bytes"}
        if f.lfs:
            loc = "http://127.0.0.1:%d/lfs/%s?expires=%d&signature=test" % (self.state.cdn_port, f.sha256, int(time.time()) + 3600)
            self.send_response(302)
            for k, v in common.items():
                self.send_header(k, v)
            self.send_header("ETag", '"%s"' % f.oid)
            self.send_header("X-Linked-Etag", '"%s"' % f.sha256)
            self.send_header("X-Linked-Size", str(f.size))
            self.send_header("Location", loc)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_bytes(f.read(), '"%s"' % f.oid, common, None)

    def send_bytes(self, data, etag, extra, cut_sha):
        size = len(data)
        rng = parse_range(self.headers.get("Range"), size)
        if rng == "bad":
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % size)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, end = rng if rng else (0, size - 1)
        self.send_response(206 if rng else 200)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("ETag", etag)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(end - start + 1))
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        self.end_headers()
        if self.command == "HEAD":
            return
        body = data[start:end + 1]
        if cut_sha and cut_sha in self.state.stalls:  # held until the test releases it (bounded)
            self.wfile.write(body[:65536])
            self.wfile.flush()
            body = body[65536:]
            self.state.release.wait(timeout=30)
        if cut_sha:
            with self.state.lock:
                cut = self.state.cuts.get(cut_sha, 0) > 0
                if cut:
                    self.state.cuts[cut_sha] -= 1
            if cut:  # the connection drops at half the file
                self.wfile.write(body[:max(size // 2 - start, 0)])
                self.wfile.flush()
                self.close_connection = True
                return
        self.wfile.write(body)

    def cdn(self, parts):
        if len(parts) != 2 or parts[0] != "lfs":
            return self.send_error_code(404, "NotFound", "no such object")
        sha = parts[1]
        for r in self.state.repos.values():
            for b in r.branches.values():
                for f in b.files.values():
                    if f.lfs and f.sha256 == sha:
                        return self.send_bytes(f.read(), '"%s"' % sha, {"Accept-Ranges": "bytes"}, sha)
        self.send_error_code(404, "NotFound", "no such object")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", default="hf_test_token_for_gated_repo")
    ap.add_argument("--max-seconds", type=float, default=600)
    args = ap.parse_args()
    state = State(make_repos(args.fixtures), args.token)
    hub_handler = type("HubHandler", (Handler,), {"state": state, "is_cdn": False})
    cdn_handler = type("CdnHandler", (Handler,), {"state": state, "is_cdn": True})
    hub = ThreadingHTTPServer(("127.0.0.1", args.port), hub_handler)
    cdn = ThreadingHTTPServer(("127.0.0.1", 0), cdn_handler)
    hub.daemon_threads = cdn.daemon_threads = True
    state.cdn_port = cdn.server_address[1]
    for s in (hub, cdn):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print(json.dumps({"hub": hub.server_address[1], "cdn": state.cdn_port}), flush=True)
    deadline = time.monotonic() + args.max_seconds
    try:
        while time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    hub.shutdown()
    cdn.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`exl pull` when things go wrong: the server drops the connection at half a file (no retries: the run fails
and keeps blobs/<sha256>.incomplete; the next run resumes it with a Range request and ends byte-identical);
with retries the same run resumes by itself; a cached blob whose bytes were altered fails its sha256 check and
is fetched again; a download that stopped leaves nothing that looks complete."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubtest
from hubtest import check, file_map, run


def main():
    args, fixtures = hubtest.parse_args()
    exl, exl2 = args.exl, os.path.join(fixtures, "models", "exl2")
    with tempfile.TemporaryDirectory() as home, hubtest.hub_server(fixtures) as srv:
        env = hubtest.clean_env(home, srv.endpoint)
        repo_dir = os.path.join(home, "hub", "models--exl-test--ref-s-exl2")
        want = file_map(os.path.join(exl2, "ref-s-4.0bpw"))
        sha = want["output.safetensors"]
        size = os.path.getsize(os.path.join(exl2, "ref-s-4.0bpw", "output.safetensors"))

        # killed at half, restarted
        check(srv.cut(sha) == [sha], "the server will drop the connection at half of output.safetensors")
        p = run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--retries", "0", "--quiet"], env, expect_rc=1)
        check("resume" in p.stderr and "output.safetensors" in p.stderr, "the cut download fails saying so: %s" % p.stderr.strip())
        inc = os.path.join(repo_dir, "blobs", sha + ".incomplete")
        check(os.path.getsize(inc) == size // 2, "blobs/<sha256>.incomplete keeps the first half (%d bytes)" % (size // 2))
        check(not os.path.exists(os.path.join(repo_dir, "blobs", sha)), "no complete blob for the cut file")
        snaps = [os.path.join(repo_dir, "snapshots", c) for c in os.listdir(os.path.join(repo_dir, "snapshots"))]
        check(all(not os.path.lexists(os.path.join(s, "output.safetensors")) for s in snaps),
              "the snapshot has no output.safetensors while it is incomplete")
        srv.reset()
        r = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], env).stdout)
        ranges = [e["range"] for e in srv.log() if e["host"] == "cdn" and sha in e["path"]]
        check(ranges == ["bytes=%d-" % (size // 2)], "the restart asked for the rest only: %s" % ranges)
        check(r["resumed_bytes"] == size // 2 and file_map(r["snapshot"]).get("output.safetensors") == sha,
              "the resumed file is byte-identical (sha256 %s...)" % sha[:16])
        got = file_map(r["snapshot"])
        check({k: got.get(k) for k in want} == want and not os.path.exists(inc), "the whole branch is byte-identical")
        commit4 = r["commit"]

        # dropped at half, resumed within the same run
        want6 = file_map(os.path.join(exl2, "ref-s-6.0bpw"))
        sha6 = want6["output.safetensors"]
        size6 = os.path.getsize(os.path.join(exl2, "ref-s-6.0bpw", "output.safetensors"))
        srv.reset()
        srv.cut(sha6)
        r = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:6.0bpw", "--json"], env).stdout)
        ranges = [e["range"] for e in srv.log() if e["host"] == "cdn" and sha6 in e["path"]]
        check(ranges == [None, "bytes=%d-" % (size6 // 2)], "a dropped transfer is resumed in the same run: %s" % ranges)
        got = file_map(r["snapshot"])
        check({k: got.get(k) for k in want6} == want6, "6.0bpw is byte-identical after the in-run resume")

        # the process killed mid-file, then started again
        want3 = file_map(os.path.join(exl2, "ref-s-3.0bpw"))
        sha3 = want3["output.safetensors"]
        srv.reset()
        hubtest.stall(srv, sha3)  # 64 KiB arrive, then the server holds the rest
        pull = subprocess.Popen([exl, "pull", "exl-test/ref-s-exl2:3.0bpw", "--quiet"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        inc3 = os.path.join(repo_dir, "blobs", sha3 + ".incomplete")
        deadline = time.monotonic() + 60
        while not (os.path.exists(inc3) and os.path.getsize(inc3) == 65536):
            if time.monotonic() > deadline or pull.poll() is not None:
                check(False, "the download of 3.0bpw's output.safetensors started")
            time.sleep(0.05)
        pull.kill()
        pull.wait(timeout=30)
        hubtest.release(srv)
        srv.reset()
        r = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:3.0bpw", "--json"], env).stdout)
        ranges = [e["range"] for e in srv.log() if e["host"] == "cdn" and sha3 in e["path"]]
        got = file_map(r["snapshot"])
        check(ranges == ["bytes=65536-"] and {k: got.get(k) for k in want3} == want3,
              "killed after 64 KiB and started again: resumed with %s, byte-identical" % ranges)

        # a corrupted blob is detected and fetched again
        blob = os.path.join(repo_dir, "blobs", sha)
        with open(blob, "r+b") as f:
            f.seek(size // 3)
            b = f.read(1)
            f.seek(size // 3)
            f.write(bytes([b[0] ^ 0x5A]))
        check(file_map(r["snapshot"].replace(r["commit"], commit4)).get("output.safetensors") != sha,
              "one byte of the cached blob altered (seen through the snapshot link)")
        srv.reset()
        r = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], env).stdout)
        check(r["refetched_corrupt"] == 1 and r["fetched"] == 1, "the pull found the bad blob and fetched it again")
        check(file_map(r["snapshot"]).get("output.safetensors") == sha
              and [e["range"] for e in srv.log() if e["host"] == "cdn"] == [None],
              "the refetched blob is byte-identical (one full CDN request)")
    print("all passed")


if __name__ == "__main__":
    main()

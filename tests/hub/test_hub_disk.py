#!/usr/bin/env python3
"""`exl pull` on a small disk (a tmpfs mounted in a user + mount namespace, so no root is needed): a branch
larger than the free space is refused before anything is written; a disk that fills up during the download
gives a clear error and leaves nothing that looks complete (no blob, no snapshot link), and the same pull
resumes once there is room. Exit 77 (skipped) where namespaces or tmpfs mounts are not allowed."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubtest
from hubtest import check, file_map, run


def mount_tmpfs(path, size):
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path], capture_output=True).returncode == 0


def files_under(path):
    return sorted(os.path.relpath(os.path.join(r, n), path) for r, _, ns in os.walk(path) for n in ns)


def inside(args):
    fixtures = hubtest.fixtures_dir(args.fixtures)
    exl, exl2 = args.exl, os.path.join(fixtures, "models", "exl2")
    with tempfile.TemporaryDirectory() as tmp, hubtest.hub_server(fixtures) as srv:
        disk = os.path.join(tmp, "disk")
        os.mkdir(disk)
        if not mount_tmpfs(disk, "8m"):
            hubtest.skip("cannot mount a tmpfs here")
        env = hubtest.clean_env(os.path.join(disk, "hf"), srv.endpoint)
        p = run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw"], env, expect_rc=1)
        check("not enough free disk space" in p.stderr, "a branch larger than the disk is refused: %s" % p.stderr.strip())
        check(files_under(disk) == [] and not any(e["host"] == "cdn" for e in srv.log()),
              "nothing was written and no file was downloaded")
        subprocess.run(["umount", disk], check=True)

        check(mount_tmpfs(disk, "40m"), "a 40 MiB tmpfs")
        want = file_map(os.path.join(exl2, "ref-s-4.0bpw"))
        sha = want["output.safetensors"]
        hubtest.stall(srv, sha)
        pull = subprocess.Popen([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--parallel", "1", "--quiet"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not any(e["host"] == "cdn" and sha in e["path"] for e in srv.log()):
            if time.monotonic() > deadline or pull.poll() is not None:
                check(False, "the download of output.safetensors started")
            time.sleep(0.05)
        time.sleep(0.3)
        st = os.statvfs(disk)
        with open(os.path.join(disk, "filler"), "wb") as f:  # another program takes the free space
            f.write(b"\0" * (st.f_bavail * st.f_frsize - 4096))
        hubtest.release(srv)
        out, err = pull.communicate(timeout=60)
        check(pull.returncode == 1 and "disk is full" in err and "output.safetensors" in err and "resume" in err,
              "a disk filling up mid-download gives a clear error: %s" % err.strip())
        repo_dir = os.path.join(disk, "hf", "hub", "models--exl-test--ref-s-exl2")
        snaps = os.listdir(os.path.join(repo_dir, "snapshots"))
        check(not os.path.exists(os.path.join(repo_dir, "blobs", sha))
              and all(not os.path.lexists(os.path.join(repo_dir, "snapshots", s, "output.safetensors")) for s in snaps),
              "nothing looks complete: no blob and no snapshot link for the file that did not fit")
        os.remove(os.path.join(disk, "filler"))
        r = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], env).stdout)
        got = file_map(r["snapshot"])
        check({k: got.get(k) for k in want} == want and r["resumed_bytes"] > 0,
              "with room again the pull resumes (%d bytes kept) and is byte-identical" % r["resumed_bytes"])
        subprocess.run(["umount", disk])
    print("all passed")


def main():
    args, _ = hubtest.parse_args()
    if os.environ.get("EXL_HUB_DISK_NS") == "1":
        return inside(args)
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        hubtest.skip("user and mount namespaces are not available (unshare -rm)")
    env = dict(os.environ, EXL_HUB_DISK_NS="1")
    p = subprocess.run(["unshare", "-rm", sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env)
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Proof that the test server speaks the Hub's protocol: the official huggingface_hub client, pointed at it with
HF_ENDPOINT, searches, lists refs and trees, and downloads every repo and branch byte-identical to the fixtures;
the gated repo fails without a token and downloads with one. Exit 77 (skipped) without fixtures or huggingface_hub."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubtest
from hubtest import check, file_map


def main():
    # --exl is unused here; the CLI tests share the command line
    _, fixtures = hubtest.parse_args(exl_required=False)
    exl2 = os.path.join(fixtures, "models", "exl2")
    with tempfile.TemporaryDirectory() as home, hubtest.hub_server(fixtures) as srv:
        os.environ.update({"HF_HOME": home, "HF_ENDPOINT": srv.endpoint, "HF_HUB_DISABLE_TELEMETRY": "1",
                           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_XET": "1"})
        for k in ("HF_TOKEN", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HUGGING_FACE_HUB_TOKEN"):
            os.environ.pop(k, None)
        try:
            import huggingface_hub as hf
            from huggingface_hub.errors import GatedRepoError, HfHubHTTPError
        except ImportError:
            hubtest.skip("huggingface_hub is not installed (pip install huggingface_hub)")
        api = hf.HfApi()

        found = [m.id for m in api.list_models(search="ref", filter="exl2", sort="downloads", limit=10)]
        check(found == ["exl-test/ref-s-exl2", "exl-test/ref-xs-gated", "exl-test/ref-subfolders"],
              "list_models sorted by downloads: %s" % found)
        paged = [m.id for m in api.list_models(search="ref", sort="lastModified")]
        check(paged[0] == "exl-test/ref-subfolders", "list_models sorted by recency: %s" % paged)
        refs = api.list_repo_refs("exl-test/ref-s-exl2")
        names = sorted(b.name for b in refs.branches)
        check(names == ["3.0bpw", "4.0bpw", "6.0bpw", "main"], "list_repo_refs branches: %s" % names)
        tree = {f.path: f for f in api.list_repo_tree("exl-test/ref-s-exl2", revision="4.0bpw", recursive=True)}
        st = tree["output.safetensors"]
        ref_size = os.path.getsize(os.path.join(exl2, "ref-s-4.0bpw", "output.safetensors"))
        check(st.lfs is not None and st.lfs.size == ref_size and st.size == ref_size
              and st.lfs.sha256 == file_map(os.path.join(exl2, "ref-s-4.0bpw"))["output.safetensors"],
              "list_repo_tree gives the LFS size and sha256")
        sub = [f.path for f in api.list_repo_tree("exl-test/ref-subfolders", path_in_repo="xs-4.0bpw")]
        check("xs-4.0bpw/config.json" in sub, "list_repo_tree of a subfolder")
        info = api.model_info("exl-test/ref-s-exl2", revision="6.0bpw")
        check(info.sha == {b.name: b.target_commit for b in refs.branches}["6.0bpw"]
              and "config.json" in [s.rfilename for s in info.siblings], "model_info of a branch: sha and siblings")

        for branch, folder in hubtest.EXL2_BRANCHES.items():
            path = hf.snapshot_download("exl-test/ref-s-exl2", revision=branch)
            got, want = file_map(path), file_map(os.path.join(exl2, folder))
            check({k: got.get(k) for k in want} == want and set(got) - set(want) == {"README.md", ".gitattributes"},
                  "snapshot_download of branch %s is byte-identical to %s" % (branch, folder))
            blobs = os.listdir(os.path.join(home, "hub", "models--exl-test--ref-s-exl2", "blobs"))
            check(want["output.safetensors"] in blobs, "the LFS blob is named by its sha256 (%s)" % branch)
        log = srv.log()
        check(any(e["host"] == "cdn" and e["method"] == "GET" for e in log)
              and any(e["host"] == "hub" and e["method"] == "HEAD" and "/resolve/" in e["path"] for e in log),
              "the client used HEAD on resolve and fetched LFS files from the CDN host")

        path = hf.snapshot_download("exl-test/ref-subfolders")
        got = file_map(path)
        for sub, folder in (("s-3.0bpw", "ref-s-3.0bpw"), ("xs-4.0bpw", "ref-xs-4.0bpw")):
            want = file_map(os.path.join(exl2, folder))
            check(all(got.get(sub + "/" + k) == v for k, v in want.items()), "subfolder %s is byte-identical" % sub)

        try:
            hf.snapshot_download("exl-test/ref-xs-gated")
            check(False, "the gated repo downloads without a token")
        except GatedRepoError as e:
            check(e.response.status_code == 401, "the gated repo without a token: GatedRepoError 401")
        try:
            hf.snapshot_download("exl-test/ref-xs-gated", token="hf_wrong")
            check(False, "the gated repo downloads with a wrong token")
        except HfHubHTTPError as e:
            check(e.response.status_code == 403, "the gated repo with a wrong token: 403")
        path = hf.snapshot_download("exl-test/ref-xs-gated", token=hubtest.GATED_TOKEN)
        got, want = file_map(path), file_map(os.path.join(exl2, "ref-xs-4.0bpw"))
        check({k: got.get(k) for k in want} == want, "the gated repo with the token is byte-identical")
    print("all passed")


if __name__ == "__main__":
    main()

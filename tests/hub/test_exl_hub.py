#!/usr/bin/env python3
"""`exl search / repo / pull / ls` against the Hub test server, checked against the official huggingface_hub
client on the same server and cache: search and file lists agree with HfApi; `exl pull` of a branch gives
the fixture's bytes, `exl generate` on the snapshot matches the fixture folder, and snapshot_download
(local_files_only) finds it; a snapshot_download model is listed by `exl ls` and loads; --include and
subfolders; the gated repo's 401/403 messages and the token from HF_TOKEN or $HF_HOME/token; HF_HUB_OFFLINE."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubtest
from hubtest import check, file_map, run


def generate(exl, model, env):
    p = run([exl, "generate", "-m", model, "-p", "Once upon a time", "-n", "12", "--greedy", "--device", "cpu", "--json"], env)
    return json.loads(p.stdout)["text"]


def main():
    args, fixtures = hubtest.parse_args()
    hubtest.require_hf()
    exl, exl2 = args.exl, os.path.join(fixtures, "models", "exl2")
    with tempfile.TemporaryDirectory() as home, hubtest.hub_server(fixtures) as srv:
        env = hubtest.clean_env(home, srv.endpoint)

        # search: the same answer as HfApi.list_models
        for sort, hf_sort in (("downloads", "downloads"), ("recent", "lastModified")):
            ours = [m["id"] for m in json.loads(run([exl, "search", "ref", "--exl2", "--sort", sort, "--json"], env).stdout)]
            theirs = hubtest.hf_python("print(json.dumps([m.id for m in hf.HfApi().list_models(search='ref', filter='exl2', "
                                       "sort='%s', limit=20)]))" % hf_sort, env)
            check(ours == theirs and len(ours) == 3, "exl search --sort %s equals list_models: %s" % (sort, ours))
        text = run([exl, "search", "gated"], env).stdout
        check("exl-test/ref-xs-gated" in text and "(gated)" in text, "exl search shows a gated repo as gated")

        # repo: branches, files with sizes and LFS sha256 as list_repo_tree gives them; quantization_config
        repo = json.loads(run([exl, "repo", "exl-test/ref-s-exl2", "--json"], env).stdout)
        tree = hubtest.hf_python(
            "api = hf.HfApi()\nout = {}\nfor b in api.list_repo_refs('exl-test/ref-s-exl2').branches:\n"
            "    out[b.name] = {f.path: [f.size, f.lfs.sha256 if f.lfs else ''] for f in "
            "api.list_repo_tree('exl-test/ref-s-exl2', revision=b.name, recursive=True) if hasattr(f, 'size')}\n"
            "print(json.dumps(out))", env)
        ours = {b["name"]: {f["path"]: [f["size"], f["lfs_sha256"]] for f in b["files"]} for b in repo["branches"]}
        check(ours == tree, "exl repo lists the branches and files (size, LFS sha256) as list_repo_tree does")
        for b in repo["branches"]:
            if b["name"] in hubtest.EXL2_BRANCHES:
                with open(os.path.join(exl2, hubtest.EXL2_BRANCHES[b["name"]], "config.json")) as f:
                    want = json.load(f)["quantization_config"]
                check(b["quantization_config"] == want, "quantization_config of %s read over the API" % b["name"])

        # exl fit of a Hub reference: the safetensors headers (Range requests) and config.json, no weights
        srv.reset()
        fit_args = ["--ctx", "2048", "--gpu", "RTX 4090", "--json"]
        strip = lambda j: {k: v for k, v in j.items() if k not in ("model", "what", "label", "name", "path")}
        hub_fit = json.loads(run([exl, "fit", "-m", "exl-test/ref-s-exl2:6.0bpw"] + fit_args, env).stdout)
        local_fit = json.loads(run([exl, "fit", "-m", os.path.join(exl2, "ref-s-6.0bpw")] + fit_args, env).stdout)
        cdn = [e for e in srv.log() if e["host"] == "cdn"]
        check(strip(hub_fit) == strip(local_fit) and cdn and all(e["range"] for e in cdn),
              "exl fit -m ORG/NAME:BRANCH equals exl fit -m on the fixture folder; only Range requests for weights")
        hub_fit = json.loads(run([exl, "fit", "-m", "exl-test/ref-s-exl2:6.0bpw", "--bpw", "5.0"] + fit_args, env).stdout)
        local_fit = json.loads(run([exl, "fit", "--config", os.path.join(exl2, "ref-s-6.0bpw", "config.json"), "--bpw", "5.0"]
                                   + fit_args, env).stdout)
        check(strip(hub_fit) == strip(local_fit), "exl fit -m ORG/NAME:BRANCH --bpw 5.0 equals --config --bpw 5.0")

        # pull a branch; generate on it; huggingface_hub finds it offline
        srv.reset()
        pulled = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], env).stdout)
        snap = pulled["snapshot"]
        got, want = file_map(snap), file_map(os.path.join(exl2, "ref-s-4.0bpw"))
        check({k: got.get(k) for k in want} == want and set(got) - set(want) == {"README.md", ".gitattributes"},
              "exl pull :4.0bpw is byte-identical to the fixture (%d files)" % len(got))
        check(os.path.islink(os.path.join(snap, "output.safetensors"))
              and os.readlink(os.path.join(snap, "output.safetensors")) == "../../blobs/" + want["output.safetensors"],
              "snapshot files are relative links to blobs named by sha256")
        log = srv.log()
        check(any(e["host"] == "cdn" for e in log) and not any(e["host"] == "cdn" and e["auth"] for e in log),
              "LFS files came from the CDN host, without the token")
        text = generate(exl, snap, env)
        check(text == generate(exl, os.path.join(exl2, "ref-s-4.0bpw"), env) and len(text) > 0,
              "exl generate on the pulled snapshot equals the fixture folder's: %r" % text)
        found = hubtest.hf_python("print(json.dumps(hf.snapshot_download('exl-test/ref-s-exl2', revision='4.0bpw', "
                                  "local_files_only=True)))", hubtest.clean_env(home, srv.endpoint, HF_HUB_OFFLINE="1"))
        check(os.path.realpath(found) == os.path.realpath(snap), "snapshot_download(local_files_only=True) finds exl's pull")
        srv.reset()
        online = hubtest.hf_python("print(json.dumps(hf.snapshot_download('exl-test/ref-s-exl2', revision='4.0bpw')))", env)
        check(os.path.realpath(online) == os.path.realpath(snap) and not any(e["method"] == "GET" and "/resolve/" in e["path"]
                                                                             or e["host"] == "cdn" for e in srv.log()),
              "snapshot_download online finds every blob of exl's pull and downloads nothing")
        again = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], env).stdout)
        check(again["fetched"] == 0 and again["snapshot"] == snap, "a second pull fetches nothing")

        # a snapshot_download model: listed by exl ls, and it loads
        hf_snap = hubtest.hf_python("print(json.dumps(hf.snapshot_download('exl-test/ref-s-exl2', revision='3.0bpw')))", env)
        listed = {m["name"]: m for m in json.loads(run([exl, "ls", "--json"], env).stdout)}
        m = listed.get("exl-test/ref-s-exl2:3.0bpw")
        size = sum(os.path.getsize(os.path.join(exl2, "ref-s-3.0bpw", n)) for n in os.listdir(os.path.join(exl2, "ref-s-3.0bpw")))
        check(m is not None and m["format"] == "exl2" and m["bpw"] == 3.0 and os.path.realpath(m["path"]) == os.path.realpath(hf_snap)
              and size < m["bytes"] < size + 4096, "exl ls lists the snapshot_download model (exl2, 3.0 bpw, size, path)")
        check("exl-test/ref-s-exl2:4.0bpw" in listed, "exl ls lists exl's own pull")
        text = generate(exl, m["path"], env)
        check(text == generate(exl, os.path.join(exl2, "ref-s-3.0bpw"), env), "the snapshot_download model loads and generates")
        table = run([exl, "ls", "--dir", exl2], env).stdout
        check("ref-xs-4.0bpw" in table and "exl-test/ref-s-exl2:3.0bpw" in table, "exl ls --dir adds a local folder's models")

        # subfolders and --include
        sub = json.loads(run([exl, "pull", "exl-test/ref-subfolders", "--include", "xs-4.0bpw/*", "--json"], env).stdout)
        got = file_map(sub["snapshot"])
        want = {"xs-4.0bpw/" + k: v for k, v in file_map(os.path.join(exl2, "ref-xs-4.0bpw")).items()}
        check(got == want, "pull --include xs-4.0bpw/* fetches that subfolder only, byte-identical")
        listed = {m["name"]: m for m in json.loads(run([exl, "ls", "--json"], env).stdout)}
        check(listed.get("exl-test/ref-subfolders:main/xs-4.0bpw", {}).get("bpw") == 4.0, "exl ls lists a subfolder model")

        # gated: 401 without a token, 403 with a wrong one, downloads with the token (HF_TOKEN or $HF_HOME/token)
        p = run([exl, "pull", "exl-test/ref-xs-gated"], env, expect_rc=1)
        check("gated" in p.stderr and "HF_TOKEN" in p.stderr and "401" in p.stderr, "gated without a token: %s" % p.stderr.strip())
        p = run([exl, "pull", "exl-test/ref-xs-gated"], hubtest.clean_env(home, srv.endpoint, HF_TOKEN="hf_wrong"), expect_rc=1)
        check("refused" in p.stderr and "403" in p.stderr, "gated with a wrong token: %s" % p.stderr.strip())
        with open(os.path.join(home, "token"), "w") as f:
            f.write(hubtest.GATED_TOKEN + "\n")
        g = json.loads(run([exl, "pull", "exl-test/ref-xs-gated", "--json"], env).stdout)
        got, want = file_map(g["snapshot"]), file_map(os.path.join(exl2, "ref-xs-4.0bpw"))
        check({k: got.get(k) for k in want} == want, "gated with the token from $HF_HOME/token: byte-identical")
        os.remove(os.path.join(home, "token"))

        # HF_HUB_OFFLINE: cached models resolve without a request, anything else says why it cannot
        off = hubtest.clean_env(home, srv.endpoint, HF_HUB_OFFLINE="1")
        srv.reset()
        o = json.loads(run([exl, "pull", "exl-test/ref-s-exl2:4.0bpw", "--json"], off).stdout)
        check(o["snapshot"] == snap and srv.log() == [], "offline pull of a cached branch answers from the cache, no request")
        p = run([exl, "pull", "exl-test/ref-s-exl2:6.0bpw"], off, expect_rc=1)
        check("HF_HUB_OFFLINE" in p.stderr and srv.log() == [], "offline pull of an uncached branch: %s" % p.stderr.strip())
        p = run([exl, "search", "ref"], off, expect_rc=1)
        check("HF_HUB_OFFLINE" in p.stderr and srv.log() == [], "offline search is refused without a request")
        p = run([exl, "pull", "exl-test/ref-s-exl2:7.0bpw"], env, expect_rc=1)
        check("no such branch" in p.stderr, "an unknown branch: %s" % p.stderr.strip())
        p = run([exl, "pull", "not-a-repo"], env, expect_rc=1)
        check("ORG/NAME" in p.stderr, "a malformed name: %s" % p.stderr.strip())
    print("all passed")


if __name__ == "__main__":
    main()

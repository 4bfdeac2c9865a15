"""Reference outputs of ExLlamaV3 for the EXL3 conversions of the fixture model ref-s.

Run by make_refs_job.sh on a CUDA machine with EXL3_INT8_GEMV=0 (fp16 activations in every EXL3 matmul).
Writes into <work>/out:
  manifest.json            versions, GPU, per model: quantization_config, per tensor K/codebook/shape and a
                           checksum of ExLlamaV3's reconstructed trellis matrix (W-hat), embedding check
  logits_exl3_<model>.bin  float16 little-endian, one block per prompt [n_tokens, 8192] (described in .json)
  greedy_exl3.json         48 greedy tokens per prompt and model (cache, one token per forward), top-1/top-2 margins
  ppl_exl3.json            perplexity on ppl_ids.json (4 chunks of 512, no BOS, 511 predictions per chunk)
  weights_<model>.safetensors  W-hat of layers.0.self_attn.k_proj, of the first 128 columns of lm_head,
                           the original-basis weight of k_proj (get_weight_tensor) and one 4-row forward of k_proj
  reconstruct_random.safetensors  W-hat of random trellises for every codebook and bit width (incl. 1.5/2.5/3.5)
                           and had_r_128 of random rows with a pre-scale
"""
import os, sys, json, time, glob
import numpy as np
import torch
from safetensors.torch import save_file, load_file
from safetensors import safe_open
import exllamav3
from exllamav3.version import __version__ as EXL3_VERSION  # the package itself has no __version__
from exllamav3 import Config, Model, Cache
from exllamav3.ext import exllamav3_ext as ext
from exllamav3.modules.quant.exl3 import LinearEXL3

W = sys.argv[1]
OUTD = os.path.join(W, "out")
FIX = "fixtures"
VOCAB = 8192
torch.manual_seed(0)
dev = "cuda:0"

prompts = json.load(open(f"{FIX}/prompts.json"))["prompts"]
ppl_ids = json.load(open(f"{FIX}/ppl_ids.json"))
names = sorted(os.path.basename(p) for p in glob.glob(f"{W}/models/*") if os.path.isfile(f"{p}/config.json"))

def checksum(t: torch.Tensor) -> str:
    b = t.detach().cpu().contiguous().view(torch.int16).numpy().view(np.uint16).reshape(-1).astype(np.uint64)
    idx = np.arange(b.size, dtype = np.uint64)
    mult = (idx * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    return "%016x" % int(np.sum(b * (mult + np.uint64(1)), dtype = np.uint64))

def tensors_of(folder):
    out = {}
    for f in sorted(glob.glob(f"{folder}/*.safetensors")):
        h = safe_open(f, "pt").__enter__()  # kept open: tensors are read after this returns
        for k in h.keys():
            out[k] = (os.path.basename(f), h)
    return out

def reconstruct(trellis, mcg, mul1):
    K = trellis.shape[2] / 16
    K = int(K) if float(K).is_integer() else K
    k, n = trellis.shape[0] * 16, trellis.shape[1] * 16
    w = torch.empty((k, n), dtype = torch.half, device = dev)
    ext.reconstruct(w, trellis.to(dev).contiguous(), float(K), mcg, mul1)
    torch.cuda.synchronize()
    return w, K

ref_embed = None
for f in sorted(glob.glob(f"{FIX}/ref-s/*.safetensors")):
    with safe_open(f, "pt") as h:
        if "model.embed_tokens.weight" in h.keys():
            ref_embed = h.get_tensor("model.embed_tokens.weight")

manifest = {
    "producer": "tests/data/exl3/make_refs.py",
    "exllamav3": EXL3_VERSION, "torch": torch.__version__, "cuda": torch.version.cuda,
    "gpu": torch.cuda.get_device_name(0), "env": {k: v for k, v in os.environ.items() if k.startswith("EXL3_") or k in ("TORCH_CUDA_ARCH_LIST",)},
    "checksum": "sum over i of uint16(W-hat bits, row-major [k][n])[i] * (((i * 2654435761) mod 2^32) + 1) mod 2^64",
    "models": {},
}
greedy = {"definition": "prompt in one forward into a fresh Cache (attn_mode flash_attn, batch_shape (1, 256)), then one id per forward; argmax of the first 8192 logits; 48 new ids, no stop tokens", "models": {}}
ppl = {"definition": "ppl_ids.json: 2048 ids split into 4 chunks of 512, each one forward without cache from position 0, no BOS; NLL (fp32 log-softmax of ExLlamaV3's logits) of ids 1..511 of each chunk; ppl = exp(mean)", "models": {}}

for name in names:
    t0 = time.time()
    folder = f"{W}/models/{name}"
    info = {"config_quantization": json.load(open(f"{folder}/config.json")).get("quantization_config"), "tensors": {}}
    # Per-tensor facts and W-hat checksums
    tmap = tensors_of(folder)
    wts = {}
    for key, (fname, h) in tmap.items():
        if not key.endswith(".trellis"):
            continue
        p = key[:-len(".trellis")]
        trellis = h.get_tensor(key)
        mcg = p + ".mcg" in tmap
        mul1 = p + ".mul1" in tmap
        w, K = reconstruct(trellis, mcg, mul1)
        info["tensors"][p] = {"file": fname, "K": K, "codebook": "mcg" if mcg else ("mul1" if mul1 else "3inst"),
                              "trellis_shape": list(trellis.shape), "what_checksum": checksum(w)}
        if p == "model.layers.0.self_attn.k_proj":
            wts["what.k_proj"] = w.cpu()
            suh = tmap[p + ".suh"][1].get_tensor(p + ".suh")
            svh = tmap[p + ".svh"][1].get_tensor(p + ".svh")
            kw = {"mul1": tmap[p + ".mul1"][1].get_tensor(p + ".mul1").to(dev)} if mul1 else {}
            if mcg: kw = {"mcg": tmap[p + ".mcg"][1].get_tensor(p + ".mcg").to(dev)}
            lin = LinearEXL3(None, w.shape[0], w.shape[1], suh = suh.to(dev), svh = svh.to(dev), trellis = trellis.to(dev), key = p, **kw)
            wts["weight.k_proj"] = lin.get_weight_tensor().cpu()
            g = torch.Generator().manual_seed(1)
            x = (torch.randn((4, w.shape[0]), generator = g) * 0.5).half()
            wts["x.k_proj"] = x
            wts["y16.k_proj"] = lin.forward(x.to(dev), {}, out_dtype = torch.half).cpu()
            wts["y32.k_proj"] = lin.forward(x.to(dev), {}, out_dtype = torch.float).cpu()
        if p == "lm_head":
            w2, _ = reconstruct(trellis[:, :8, :].contiguous(), mcg, mul1)
            wts["what.lm_head_cols0_128"] = w2.cpu()
    save_file(wts, f"{OUTD}/weights_{name}.safetensors")
    # The embedding is stored unquantized: check it equals the fixture's and list the shards that hold nothing else
    excl = []
    emb_file = tmap["model.embed_tokens.weight"][0]
    emb = tmap["model.embed_tokens.weight"][1].get_tensor("model.embed_tokens.weight")
    info["embedding_equals_fixture"] = bool(emb.dtype == ref_embed.dtype and torch.equal(emb, ref_embed))
    only = [k for k, (f, _) in tmap.items() if f == emb_file]
    info["embedding_shard"] = emb_file
    info["embedding_shard_only_embedding"] = only == ["model.embed_tokens.weight"]
    if info["embedding_equals_fixture"] and info["embedding_shard_only_embedding"]:
        excl.append(emb_file)
    excl += ["quantization_config.json.bak"]
    with open(f"{OUTD}/{name}.exclude", "w") as fh:
        fh.write("\n".join(excl) + "\n")
    info["files"] = {os.path.basename(f): os.path.getsize(f) for f in sorted(glob.glob(f"{folder}/*"))}

    # Model
    config = Config.from_directory(folder)
    model = Model.from_config(config)
    cache = Cache(model, max_num_tokens = 256)
    model.load(dev)
    # Logits, whole prompt in one forward, no cache
    blocks, chunks, off = [], [], 0
    for pr in prompts:
        ids = torch.tensor([pr["ids"]], dtype = torch.long)
        out = model.forward(ids, {"attn_mode": "flash_attn_nc"})
        info["logits_dtype"] = str(out.dtype)
        lg = out[0, :, :VOCAB].float().cpu()
        a = lg.half().numpy()
        chunks.append(a.tobytes())
        blocks.append({"label": pr["name"], "offset_bytes": off, "shape": list(a.shape)})
        off += a.nbytes
    with open(f"{OUTD}/logits_exl3_{name}.bin", "wb") as fh:
        for c in chunks: fh.write(c)
    json.dump({"dtype": "float16", "blocks": blocks, "total_bytes": off, "model": name,
               "producer": f"ExLlamaV3 {EXL3_VERSION} model.forward(ids, attn_mode=flash_attn_nc), EXL3_INT8_GEMV=0, logits widened to fp32 then stored as fp16",
               "gpu": torch.cuda.get_device_name(0)}, open(f"{OUTD}/logits_exl3_{name}.json", "w"), indent = 1)
    # Greedy with cache
    g_out = {}
    for pr in prompts:
        ids = list(pr["ids"])
        new, margins = [], []
        x = torch.tensor([ids], dtype = torch.long)
        past = 0
        for step in range(48):
            params = {"attn_mode": "flash_attn", "cache": cache, "past_len": past, "batch_shape": (1, 256)}
            lg = model.forward(x, params)[0, -1, :VOCAB].float()
            past += x.shape[1]
            top = torch.topk(lg, 2)
            t = int(top.indices[0]); new.append(t)
            margins.append(round(float(top.values[0] - top.values[1]), 5))
            x = torch.tensor([[t]], dtype = torch.long)
        g_out[pr["name"]] = {"new_ids": new, "top1_top2_logit_margin": margins}
    greedy["models"][name] = g_out
    # Perplexity
    p_out = {}
    for ds in ("wiki", "tiny"):
        allids = ppl_ids[ds]
        nll_sum, n_pred, per_chunk = 0.0, 0, []
        for c in range(4):
            chunk = torch.tensor([allids[c * 512:(c + 1) * 512]], dtype = torch.long)
            lg = model.forward(chunk, {"attn_mode": "flash_attn_nc"})[0, :, :VOCAB].float()
            lp = torch.log_softmax(lg, dim = -1)
            tgt = chunk[0, 1:].to(lp.device)
            nll = -lp[:-1].gather(1, tgt[:, None]).squeeze(1)
            nll_sum += float(nll.double().sum()); n_pred += nll.numel(); per_chunk.append(float(nll.double().mean()))
        p_out[ds] = {"ppl": float(np.exp(nll_sum / n_pred)), "mean_nll": nll_sum / n_pred, "n_predictions": n_pred, "chunk_mean_nll": per_chunk}
    ppl["models"][name] = p_out
    model.unload()
    del model, cache
    torch.cuda.empty_cache()
    info["ref_seconds"] = round(time.time() - t0, 1)
    manifest["models"][name] = info
    open(f"{OUTD}/{name}.ok", "w").write("ok\n")
    print(name, "done", info["ref_seconds"], "s", p_out["wiki"]["ppl"], p_out["tiny"]["ppl"], flush = True)

json.dump(greedy, open(f"{OUTD}/greedy_exl3.json", "w"), indent = 1)
json.dump(ppl, open(f"{OUTD}/ppl_exl3.json", "w"), indent = 1)

# Random trellises: every codebook and bit width
rnd = {}
g = torch.Generator().manual_seed(1234)
for cb in ("3inst", "mcg", "mul1"):
    Ks = [1, 2, 3, 4, 5, 6, 7, 8] + ([1.5, 2.5, 3.5] if cb == "mul1" else [])
    for K in Ks:
        words = int(16 * K)
        tr = torch.randint(-32768, 32768, (8, 16, words), generator = g, dtype = torch.int32).to(torch.int16)
        w, _ = reconstruct(tr, cb == "mcg", cb == "mul1")
        rnd[f"trellis.{cb}.{K}"] = tr
        rnd[f"what.{cb}.{K}"] = w.cpu()
x = (torch.randn((4, 512), generator = g) * 2.0).half()
s = torch.where(torch.rand(512, generator = g) < 0.5, -1.0, 1.0) * (0.25 + 1.5 * torch.rand(512, generator = g))
s = s.half()
y = torch.empty_like(x, device = dev)
ext.had_r_128(x.to(dev), y, s.to(dev), None, 1.0)
rnd["had.x"] = x; rnd["had.pre"] = s; rnd["had.y"] = y.cpu()
save_file(rnd, f"{OUTD}/reconstruct_random.safetensors")
json.dump(manifest, open(f"{OUTD}/manifest.json", "w"), indent = 1)
print("all done", flush = True)

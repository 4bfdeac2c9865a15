#!/usr/bin/env python3
"""Makes the tiny random-weight mixture-of-experts models of tests/data/moe and their reference outputs.

Three models: Mixtral (8 experts, top-2, always renormalised), Qwen3-MoE with 16 experts, top-4,
norm_topk_prob and a dense layer (mlp_only_layers), and Qwen3-MoE with 24 experts, top-8, without
norm_topk_prob. Each folder gets config.json + model.safetensors (16-bit) as transformers saves them
(one tensor per expert, the Hub's layout), and refs.json + logits.bin: fp32 logits of every position of
each prompt from transformers (the model reloaded in fp32 from the saved 16-bit weights, eager
attention), greedy continuations with the top-1/top-2 margin of every step (full forward per step,
no cache), and the experts the router chose for every token of every sparse layer, with the
smallest gap between consecutive probabilities among the top k + 1 (a near-tie makes the choice
or its order ambiguous). `qwen3_moe_fused` holds the top-8 model's weights with each layer's
experts in transformers 5's fused tensors (experts.gate_up_proj, experts.down_proj).

Run from anywhere: python3 make_refs.py [out_dir]  (needs torch, transformers, safetensors).
"""
import importlib.util
import json
import os
import shutil
import sys

import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM, MixtralConfig, MixtralForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
VOCAB = 256


def _families_helpers():
    """prompts, logits_of and greedy of tests/data/families/make_refs.py (same vocabulary, 256)."""
    spec = importlib.util.spec_from_file_location(
        "families_make_refs", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "families", "make_refs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.VOCAB == VOCAB
    return mod.prompts, mod.logits_of, mod.greedy


prompts, logits_of, greedy = _families_helpers()


def randomize(model, std, router_std):
    g = torch.Generator().manual_seed(4321)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("gate.weight") and p.shape[0] < p.shape[1]:  # the router [experts, hidden]
                p.copy_(router_std * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def routing(model, ids):
    """Per sparse layer: the router's top-k indices per token and the smallest probability gap."""
    k = model.config.num_experts_per_tok
    seen = {}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        router = getattr(layer.mlp, "gate", None)
        if router is None or not hasattr(router, "top_k"):
            continue

        def hook(mod, inp, out, i=i):
            logits = out[0].float()
            probs = torch.softmax(logits, dim=-1)
            top = torch.topk(probs, k + 1 if k < probs.shape[-1] else k, dim=-1)
            gaps = (top.values[:, :-1] - top.values[:, 1:]).min(dim=-1).values if top.values.shape[-1] > 1 else None
            seen[i] = {"layer": i, "experts": out[2].tolist(),
                       "min_gap": gaps.tolist() if gaps is not None else [1.0] * logits.shape[0]}
        hooks.append(router.register_forward_hook(hook))
    logits_of(model, ids)
    for h in hooks:
        h.remove()
    return [seen[i] for i in sorted(seen)]


def build(name, model, dtype, lengths, steps):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    model.to(dtype).save_pretrained(folder)
    ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    ps = prompts(len(name) + 3, lengths)
    blocks, blob, offset = [], bytearray(), 0
    changes = 0
    for pname, ids in ps.items():
        lg = logits_of(ref, ids)
        data = lg.contiguous().numpy().astype("<f4").tobytes()
        toks, margins = greedy(ref, ids, steps[pname])
        route = routing(ref, ids)
        for r in route:
            changes += sum(1 for a, b in zip(r["experts"], r["experts"][1:]) if sorted(a) != sorted(b))
        blocks.append({"name": pname, "ids": ids, "context": 128, "rows": lg.shape[0], "cols": lg.shape[1],
                       "offset_bytes": offset, "greedy": toks, "greedy_margins": margins, "routing": route})
        blob += data
        offset += len(data)
    assert changes > 0, "the routing never changes from token to token"
    with open(os.path.join(folder, "logits.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(folder, "refs.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "prompts": blocks,
                   "checks": {"routing_changes": changes}}, f, indent=1)
    print(name, "ok, routing changes between consecutive tokens:", changes)
    return folder


def fused_copy(src, dst):
    """The same weights with each sparse layer's experts fused as transformers 5 holds them in memory."""
    os.makedirs(dst, exist_ok=True)
    shutil.copy(os.path.join(src, "config.json"), dst)
    cfg = json.load(open(os.path.join(src, "config.json")))
    experts = cfg.get("num_experts", cfg.get("num_local_experts"))
    w = load_file(os.path.join(src, "model.safetensors"))
    out = {k: v for k, v in w.items() if ".experts." not in k}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}.mlp.experts."
        if p + "0.gate_proj.weight" not in w:
            continue
        out[p + "gate_up_proj"] = torch.stack(
            [torch.cat([w[f"{p}{e}.gate_proj.weight"], w[f"{p}{e}.up_proj.weight"]], dim=0) for e in range(experts)])
        out[p + "down_proj"] = torch.stack([w[f"{p}{e}.down_proj.weight"] for e in range(experts)])
    save_file(out, os.path.join(dst, "model.safetensors"), metadata={"format": "pt"})
    print(os.path.basename(dst), "ok")


def main():
    torch.manual_seed(0)
    common = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0, max_position_embeddings=256,
                  num_attention_heads=4, num_key_value_heads=2, hidden_size=64)
    lengths = {"short": 11, "long": 50}
    steps = {"short": 16, "long": 8}

    mx = MixtralConfig(intermediate_size=48, num_hidden_layers=3, num_local_experts=8, num_experts_per_tok=2,
                       rms_norm_eps=1e-5, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, **common)
    m = MixtralForCausalLM(mx)
    randomize(m, 0.1, 0.3)
    build("mixtral", m, torch.bfloat16, lengths, steps)

    q = Qwen3MoeConfig(intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=3, num_experts=16,
                       num_experts_per_tok=4, norm_topk_prob=True, mlp_only_layers=[1], head_dim=32,
                       tie_word_embeddings=True, rms_norm_eps=1e-6,
                       rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, **common)
    m = Qwen3MoeForCausalLM(q)
    randomize(m, 0.08, 0.3)
    build("qwen3_moe", m, torch.bfloat16, lengths, steps)

    q8 = Qwen3MoeConfig(intermediate_size=96, moe_intermediate_size=16, num_hidden_layers=2, num_experts=24,
                        num_experts_per_tok=8, norm_topk_prob=False, head_dim=16, rms_norm_eps=1e-6,
                        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, **common)
    m = Qwen3MoeForCausalLM(q8)
    randomize(m, 0.1, 0.3)
    folder = build("qwen3_moe_top8", m, torch.float16, lengths, steps)
    fused_copy(folder, os.path.join(OUT, "qwen3_moe_fused"))


if __name__ == "__main__":
    main()

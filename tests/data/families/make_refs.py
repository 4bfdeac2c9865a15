#!/usr/bin/env python3
"""Makes the tiny random-weight models of tests/data/families and their reference outputs.

One model per family (Qwen3, Gemma 2, Gemma 3 text, Phi-3, Mistral with a sliding window), with
shapes that exercise the family's features: local and global layers, prompts longer than the
window, soft-capping that clips, head_dim unlike hidden / heads, partial rotary and LongRoPE.
Each folder gets config.json + model.safetensors (bf16 or fp16) as transformers saves them, and
refs.json + logits.bin: fp32 logits of every position of each prompt from transformers (the model
reloaded in fp32 from the saved 16-bit weights, eager attention) and greedy continuations with
the top-1/top-2 margin of every step (full forward per step, no cache).

Run from anywhere: python3 make_refs.py [out_dir]  (needs torch, transformers, safetensors).
"""
import json
import math
import os
import sys

import torch
import transformers
from transformers import (AutoModelForCausalLM, Gemma2Config, Gemma2ForCausalLM, Gemma3ForCausalLM,
                          Gemma3TextConfig, MistralConfig, MistralForCausalLM, Phi3Config, Phi3ForCausalLM,
                          Qwen3Config, Qwen3ForCausalLM)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
VOCAB = 256


def randomize(model, std, norm_base, emb_std=None):
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(norm_base + 0.2 * torch.randn(p.shape, generator=g))
            elif "embed_tokens" in name and emb_std is not None:
                p.copy_(emb_std * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def prompts(seed, lengths):
    g = torch.Generator().manual_seed(seed)
    return {name: torch.randint(0, VOCAB, (n,), generator=g).tolist() for name, n in lengths.items()}


def logits_of(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].float()


def greedy(model, ids, steps):
    ids = list(ids)
    out, margins = [], []
    for _ in range(steps):
        row = logits_of(model, ids)[-1]
        top = torch.topk(row, 2)
        out.append(int(top.indices[0]))
        margins.append(float(top.values[0] - top.values[1]))
        ids.append(out[-1])
    return out, margins


def build(name, model, dtype, prompt_lengths, contexts, greedy_steps, checks=None):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    model.to(dtype).save_pretrained(folder)
    # The reference: the saved 16-bit weights in fp32.
    ref = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    ps = prompts(len(name), prompt_lengths)
    blocks, blob, offset = [], bytearray(), 0
    for pname, ids in ps.items():
        lg = logits_of(ref, ids)
        data = lg.contiguous().numpy().astype("<f4").tobytes()
        toks, margins = greedy(ref, ids, greedy_steps[pname])
        blocks.append({"name": pname, "ids": ids, "context": contexts[pname], "rows": lg.shape[0],
                       "cols": lg.shape[1], "offset_bytes": offset, "greedy": toks, "greedy_margins": margins})
        blob += data
        offset += len(data)
    extra = checks(ref, ps) if checks else {}
    with open(os.path.join(folder, "logits.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(folder, "refs.json"), "w") as f:
        json.dump({"transformers": transformers.__version__, "torch": torch.__version__, "prompts": blocks,
                   "checks": extra}, f, indent=1)
    print(name, "ok", extra)


def softcap_checks(ref, ps):
    """How far the uncapped final logits and attention scores go past the caps."""
    cfg = ref.config
    cap_final, cap_attn = cfg.final_logit_softcapping, cfg.attn_logit_softcapping
    ids = ps["long"]
    cfg.final_logit_softcapping = None
    raw = logits_of(ref, ids)
    cfg.final_logit_softcapping = cap_final
    import transformers.models.gemma2.modeling_gemma2 as mg
    orig = mg.eager_attention_forward
    seen = []

    def spy(module, query, key, value, attention_mask, scaling=None, **kw):
        k = mg.repeat_kv(key, module.num_key_value_groups)
        s = torch.matmul(query, k.transpose(2, 3)) * scaling
        seen.append(float(s.abs().max()))
        return orig(module, query, key, value, attention_mask, scaling=scaling, **kw)

    mg.eager_attention_forward = spy
    logits_of(ref, ids)
    mg.eager_attention_forward = orig
    res = {"final_cap": cap_final, "max_raw_logit": float(raw.abs().max()),
           "attn_cap": cap_attn, "max_raw_attn_score": max(seen)}
    assert res["max_raw_logit"] > 1.5 * cap_final and res["max_raw_attn_score"] > 1.5 * cap_attn, res
    return res


def main():
    torch.manual_seed(0)
    common = dict(vocab_size=VOCAB, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    lengths = {"short": 11, "long": 50}
    ctx = {"short": 128, "long": 128}
    steps = {"short": 16, "long": 8}

    q = Qwen3Config(hidden_size=64, intermediate_size=160, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=32, max_position_embeddings=256, tie_word_embeddings=True,
                    rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, **common)
    m = Qwen3ForCausalLM(q)
    randomize(m, 0.08, 1.0)
    build("qwen3", m, torch.bfloat16, lengths, ctx, steps)

    g2 = Gemma2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=32, query_pre_attn_scalar=48, sliding_window=16,
                      attn_logit_softcapping=2.0, final_logit_softcapping=8.0, max_position_embeddings=256,
                      rms_norm_eps=1e-6, **common)
    m = Gemma2ForCausalLM(g2)
    randomize(m, 0.12, 0.0, emb_std=0.3)
    build("gemma2", m, torch.bfloat16, lengths, ctx, steps, softcap_checks)

    g3 = Gemma3TextConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=4,
                          num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=24, sliding_window=16,
                          max_position_embeddings=256, rms_norm_eps=1e-6,
                          rope_parameters={"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
                                           "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                          **common)
    assert g3.layer_types == ["sliding_attention"] * 5 + ["full_attention"], g3.layer_types
    m = Gemma3ForCausalLM(g3)
    randomize(m, 0.12, 0.0, emb_std=0.3)
    build("gemma3", m, torch.bfloat16, lengths, ctx, steps)

    g = torch.Generator().manual_seed(7)
    short_f = (1.0 + torch.rand(6, generator=g)).tolist()
    long_f = (1.0 + 6.0 * torch.rand(6, generator=g)).tolist()
    p3 = Phi3Config(hidden_size=96, intermediate_size=192, num_hidden_layers=4, num_attention_heads=6,
                    num_key_value_heads=2, max_position_embeddings=128, original_max_position_embeddings=32,
                    sliding_window=24, tie_word_embeddings=True, rms_norm_eps=1e-5,
                    rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 0.75,
                                     "short_factor": short_f, "long_factor": long_f},
                    **common)
    m = Phi3ForCausalLM(p3)
    randomize(m, 0.08, 1.0)
    # The short prompt runs in a context within original_max_position_embeddings (short factors),
    # the long one past it (long factors).
    build("phi3", m, torch.float16, {"short": 12, "long": 50}, {"short": 32, "long": 128}, {"short": 16, "long": 8})

    mi = MistralConfig(hidden_size=64, intermediate_size=160, num_hidden_layers=3, num_attention_heads=4,
                       num_key_value_heads=2, sliding_window=16, max_position_embeddings=256, rms_norm_eps=1e-5,
                       **common)
    m = MistralForCausalLM(mi)
    randomize(m, 0.1, 1.0)
    build("mistral_swa", m, torch.float16, lengths, ctx, steps)


if __name__ == "__main__":
    main()

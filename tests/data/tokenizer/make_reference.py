#!/usr/bin/env python3
"""Generates small tokenizer.json files and their reference encodings/decodings with the HF
`tokenizers` Python package, for the C++ tokenizer tests (tests/engine/test_tokenizer_generated.cpp).

Usage:  pip install tokenizers==0.23.3 && python3 tests/data/tokenizer/make_reference.py
Reads the training text from /work/shared/fixtures/text/*.txt (or $EXL_FIXTURES/text).
Writes <name>/tokenizer.json, <name>/tokenizer_config.json, <name>/expected.json for:
  spm_bpe         Llama-2 style: normalizer Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer,
                  BPE with byte_fallback (<0x00>..<0xFF> in the vocabulary), unk <unk>, fuse_unk,
                  decoder Replace + ByteFallback + Fuse + Strip, post-processor "<s> $A".
  spm_metaspace   Mistral style: pre-tokenizer Metaspace(prepend_scheme="first", split=False),
                  byte fallback, decoder ByteFallback + Metaspace + Fuse.
  gpt2_bytelevel  GPT-2 style: ByteLevel(add_prefix_space=True, use_regex=True) pre-tokenizer and
                  decoder, added tokens with lstrip / rstrip / single_word, special and not.
"""
import glob
import json
import os
import sys

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from tokenizers import AddedToken

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.environ.get("EXL_FIXTURES", "/work/shared/fixtures")
TEXT_FILES = sorted(glob.glob(os.path.join(FIXTURES, "text", "*.txt")))

CASES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    " leading space",
    "  two leading spaces",
    "trailing space ",
    "multiple    internal     spaces",
    "   ",
    " ",
    "\n",
    "line one\nline two\r\nthree",
    "tabs\tand\t\ttabs",
    "1234567890 and 3.14159",
    "def add(a, b):\n    return a + b\n",
    "It's we'll they're I'm SHE'LL",
    "Café, naïve, résumé, Ångström, Straße",
    "日本語のテキスト",
    "中文文本测试",
    "Привет, мир!",
    "😀 I ❤️ emoji 🎉🎉",
    "👨\u200d👩\u200d👧 family ZWJ",
    "combining e\u0301 vs é, ﬁ ligature, \u00a0nbsp\u2009thin",
    "<s>Hello</s>",
    "Hi <s> there </s> end",
    "<|im_start|>user\nquestion<|im_end|>\n",
    "text with <extra> inside and <extra>again",
    "a <tool>   call <|sys|>   after",
    "say hello_world and hello_worlds",
    "<unk> literal",
    "",
    "a",
    "\u0000\u0001 control \u007f bytes",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!!!...???",
]


def long_case():
    """A few KB of real text with runs of spaces: one long word for SentencePiece-style configs."""
    with open(os.path.join(FIXTURES, "text", "heldout_tiny.txt"), encoding="utf-8") as f:
        text = f.read(3000)
    return text.replace(". ", ".   ") + " \u00e9\u6f22\U0001F600"


def byte_tokens():
    return ["<0x%02X>" % b for b in range(256)]


def train_bpe(pre, vocab_size, alphabet=None, limit_alphabet=None, normalizer=None):
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    kw = dict(vocab_size=vocab_size, min_frequency=2, show_progress=False)
    if alphabet is not None:
        kw["initial_alphabet"] = alphabet
    if limit_alphabet is not None:
        kw["limit_alphabet"] = limit_alphabet
    tok.train(TEXT_FILES, trainers.BpeTrainer(**kw))
    return json.loads(tok.to_str())


def spm_json(trained, metaspace):
    """Re-lays a trained vocabulary out as Llama-2 does: <unk> <s> </s>, 256 byte tokens, pieces."""
    pieces = sorted(trained["model"]["vocab"].items(), key=lambda kv: kv[1])
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for t in byte_tokens():
        vocab[t] = len(vocab)
    for t, _ in pieces:
        if t not in vocab:
            vocab[t] = len(vocab)
    j = trained
    j["model"] = {
        "type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
        "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
        "vocab": vocab, "merges": trained["model"]["merges"],
    }
    if metaspace:
        j["normalizer"] = None
        j["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
        j["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"},
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
            {"type": "Fuse"}]}
    else:
        j["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
        j["pre_tokenizer"] = None
        j["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    j["post_processor"] = {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    j["added_tokens"] = []
    tok = Tokenizer.from_str(json.dumps(j))
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ("<unk>", "<s>", "</s>")])
    tok.add_special_tokens([AddedToken("<|im_start|>", normalized=False), AddedToken("<|im_end|>", normalized=False)])
    tok.add_tokens([AddedToken("<extra>", normalized=True)])
    return tok


def gpt2_tokenizer():
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trained = train_bpe(pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True), 1200, alphabet=alphabet)
    tok = Tokenizer.from_str(json.dumps(trained))
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.add_special_tokens([AddedToken("<|endoftext|>", normalized=False),
                            AddedToken("<|sys|>", rstrip=True, normalized=False)])
    tok.add_tokens([AddedToken("<tool>", lstrip=True, normalized=False),
                    AddedToken("hello_world", single_word=True, normalized=False)])
    return tok


def record(name, tok, config):
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=1, ensure_ascii=False)
    cases = []
    for text in CASES + [long_case()]:
        ids = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        plain = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = False
        cases.append({"text": text, "ids": ids, "ids_special_as_text": plain,
                      "decode": tok.decode(ids, skip_special_tokens=False),
                      "decode_skip_special": tok.decode(ids, skip_special_tokens=True)})
    size = tok.get_vocab_size(with_added_tokens=True)
    singles = sorted(set([0, 1, 2, 3, 10, 0x41 + 3, 0xC3 + 3, 0xE4 + 3, 259, 260, 300, 500, size - 1] +
                         [size - k for k in range(2, 6)]))
    singles = [i for i in singles if 0 <= i < size]
    expected = {"producer": {"tokenizers": tokenizers.__version__, "script": "make_reference.py"},
                "cases": cases,
                "single_token_decode": [{"id": i, "text": tok.decode([i], skip_special_tokens=False)} for i in singles]}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
    print(name, "vocab", size, "cases", len(cases))


PRE_TOKENIZER_CONFIGS = [
    {"type": "Split", "pattern": {"String": " "}, "behavior": b, "invert": inv}
    for b in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous") for inv in (False, True)
] + [
    {"type": "Split", "pattern": {"Regex": "\\s+|[,.]"}, "behavior": b, "invert": False}
    for b in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
] + [
    {"type": "Digits", "individual_digits": True},
    {"type": "Digits", "individual_digits": False},
    {"type": "Punctuation", "behavior": "Isolated"},
    {"type": "Punctuation", "behavior": "Contiguous"},
    {"type": "Whitespace"},
    {"type": "WhitespaceSplit"},
    {"type": "BertPreTokenizer"},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": True},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True}]},
]
PRE_TOKENIZER_TEXTS = ["Hello,  world. 12 345 x", "  a1b22c333 ,,.. !? end ", "日本 語、テスト。100円", "", "...", "tab\there\nnew  line"]


def record_pre_tokenizers():
    from tokenizers import Tokenizer as T
    out = []
    for cfg in PRE_TOKENIZER_CONFIGS:
        base = {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": cfg}
        pre = T.from_str(json.dumps(base)).pre_tokenizer
        out.append({"config": cfg, "cases": [{"text": t, "pieces": [p for p, _ in pre.pre_tokenize_str(t)]}
                                             for t in PRE_TOKENIZER_TEXTS]})
    with open(os.path.join(HERE, "pre_tokenizers.json"), "w") as f:
        json.dump({"producer": {"tokenizers": tokenizers.__version__}, "configs": out}, f, indent=1, ensure_ascii=False)
    print("pre_tokenizers", len(out))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--pre-tokenizers-only":
        return record_pre_tokenizers()
    record_pre_tokenizers()
    if not TEXT_FILES:
        sys.exit("no training text under " + FIXTURES + "/text")
    spm_cfg = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True,
               "chat_template": "{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}"}
    trained = train_bpe(pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True),
                        1500, limit_alphabet=120)
    record("spm_bpe", spm_json(json.loads(json.dumps(trained)), metaspace=False), spm_cfg)
    record("spm_metaspace", spm_json(json.loads(json.dumps(trained)), metaspace=True), spm_cfg)
    record("gpt2_bytelevel", gpt2_tokenizer(), {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"})


if __name__ == "__main__":
    main()

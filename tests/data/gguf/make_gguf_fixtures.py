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


def main():
    out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    ref = write(out_dir / "types.gguf", 3)
    write(out_dir / "types_v2.gguf", 2)
    for name, v in ref.items():
        (out_dir / f"{name}.f32").write_bytes(v.astype("<f4").tobytes())


if __name__ == "__main__":
    main()

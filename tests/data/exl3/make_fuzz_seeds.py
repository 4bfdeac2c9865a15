"""Seeds for the fuzz_exl3 target (tests/fuzz): small EXL3 layers as single safetensors files,
written with the standard library only (random words; any trellis stream decodes).
  mul1_k2.safetensors     128 x 128, K = 2, mul1 marker, suh/svh
  mul1_k2_5.safetensors   128 x 256, K = 2.5 (16K + 8 words per tile), mul1, fp16 bias
  inst3_k3_legacy.safetensors  128 x 128, K = 3, 3INST (no marker), legacy packed su/sv sign words
"""
import json, random, struct, os

def write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(data)]}
        blobs.append(data); off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for b in blobs: f.write(b)

rng = random.Random(45)
def words(n): return struct.pack(f"<{n}H", *[rng.randrange(65536) for _ in range(n)])
def halves(n):  # fp16 values of magnitude 0.25..1.75, random sign
    return struct.pack(f"<{n}e", *[rng.choice((-1, 1)) * rng.uniform(0.25, 1.75) for _ in range(n)])
here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_seeds")
P = "model.layers.0.self_attn.q_proj"
write(f"{here}/mul1_k2.safetensors", [
    (P + ".trellis", "I16", [8, 8, 32], words(8 * 8 * 32)), (P + ".suh", "F16", [128], halves(128)),
    (P + ".svh", "F16", [128], halves(128)), (P + ".mul1", "I32", [], struct.pack("<I", 0x83DCD12D))])
write(f"{here}/mul1_k2_5.safetensors", [
    (P + ".trellis", "I16", [8, 16, 40], words(8 * 16 * 40)), (P + ".suh", "F16", [128], halves(128)),
    (P + ".svh", "F16", [256], halves(256)), (P + ".mul1", "I32", [], struct.pack("<I", 0x83DCD12D)),
    (P + ".bias", "F16", [256], halves(256))])
write(f"{here}/inst3_k3_legacy.safetensors", [
    (P + ".trellis", "I16", [8, 8, 48], words(8 * 8 * 48)), (P + ".su", "I16", [8], words(8)),
    (P + ".sv", "I16", [8], words(8))])

"""W-hat of random trellises from ExLlamaV3 1.6.5's own reconstruct kernel (every codebook and
bit rate, incl. 1.5/2.5/3.5) and had_r_128 with a pre-scale: ExLlamaV3's quant/reconstruct.cu and
quant/hadamard.cu compiled unmodified (its flags -O3 --use_fast_math, sm_90) behind a two-function
binding, so that the test data needs no full ExLlamaV3 build. Same generator as make_refs.py."""
import os, sys, time, json, torch
from torch.utils.cpp_extension import load
from safetensors.torch import save_file
here = os.path.dirname(os.path.abspath(__file__))
t0 = time.time()
src = f"{here}/ext"
ext = load(name = "exl3_mini", sources = [f"{src}/mini_bindings.cpp", f"{src}/quant/reconstruct.cu", f"{src}/quant/hadamard.cu"],
           extra_include_paths = [src], extra_cuda_cflags = ["-O3", "--use_fast_math", "-Xcudafe", "--diag_suppress=177", "-Xcudafe", "--diag_suppress=20012"],
           extra_cflags = ["-O3"], verbose = False)
print("build", round(time.time() - t0, 1), "s", flush = True)
dev = "cuda:0"
rnd = {}
g = torch.Generator().manual_seed(1234)
for cb in ("3inst", "mcg", "mul1"):
    Ks = [1, 2, 3, 4, 5, 6, 7, 8] + ([1.5, 2.5, 3.5] if cb == "mul1" else [])
    for K in Ks:
        words = int(16 * K)
        tr = torch.randint(-32768, 32768, (8, 16, words), generator = g, dtype = torch.int32).to(torch.int16)
        w = torch.empty((128, 256), dtype = torch.half, device = dev)
        ext.reconstruct(w, tr.to(dev).contiguous(), float(K), cb == "mcg", cb == "mul1")
        torch.cuda.synchronize()
        rnd[f"trellis.{cb}.{K}"] = tr
        rnd[f"what.{cb}.{K}"] = w.cpu()
x = (torch.randn((4, 512), generator = g) * 2.0).half()
s = (torch.where(torch.rand(512, generator = g) < 0.5, -1.0, 1.0) * (0.25 + 1.5 * torch.rand(512, generator = g))).half()
y = torch.empty_like(x, device = dev)
ext.had_r_128(x.to(dev), y, s.to(dev), None, 1.0)
rnd["had.x"] = x; rnd["had.pre"] = s; rnd["had.y"] = y.cpu()
out = os.environ.get("OUT", ".")
save_file(rnd, f"{out}/reconstruct_random.safetensors",
          metadata = {"producer": "tests/data/exl3/mini_refs.py", "exllamav3_sources": "1.6.5 PyPI wheel, quant/reconstruct.cu + quant/hadamard.cu unmodified",
                      "torch": torch.__version__, "cuda": str(torch.version.cuda), "gpu": torch.cuda.get_device_name(0)})
print("done", torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0), round(time.time() - t0, 1), "s", flush = True)

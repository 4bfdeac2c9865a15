#!/usr/bin/env python3
"""Batch-1 speed of ExLlamaV3 (reference engine, 1.6.5 wheel) on one EXL3 model folder, CUDA GPU.

usage: python3 bench/exl3_ref_bench.py MODEL_DIR [--prompt 2048] [--gen 128] [--reps 3]
                                       [--chunk 2048] [--cache TOKENS] [--json OUT.json]

Figures (each measured in its own try/except, so one API mismatch keeps the others):
  decode_forward     tok/s of a real greedy autoregressive loop at context ~0: a 1-token prompt into an
                     empty cache (untimed), then --gen steps of model.forward(1 token, cache) -> argmax ->
                     host -> next step; synchronize at both ends, best of --reps after a warm-up loop.
                     model.forward is the path the generator itself takes: the library's graph-captured
                     bsz-1 decode blocks (attention block, MLP) and its Triton attention are used there.
  decode_generator   tok/s of the library's Generator/Job path: 1-token prompt, max_new_tokens=--gen, no
                     stop conditions (EOS ignored), ArgmaxSampler; new_tokens / job's own "time_generate"
                     (first decode step to last sampled token, prefill excluded). Best of --reps.
  prefill<N>         tok/s of a random N-token prompt into an empty cache by model.prefill (what the
                     generator runs for a prompt: stops at the last K/V layer, no logits), in chunks of
                     --chunk (Generator's default max_chunk_size, 2048); best of --reps after a warm-up.
  prefill<N>_generator  (N-1) / job's "time_prefill" for a fresh random N-token prompt through the Generator
                     (it prefills all but the last prompt token); best of --reps. Extra cross-check.
ExLlamaV3's own defaults throughout (no EXL3_* variable set here; attention backend is the library's
dispatcher: Triton paged kernels first, torch SDPA fallback; flash-attn is never needed).
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback


def log(*a):
    print(*a, flush = True)


def rup(n, m = 256):
    return -(-n // m) * m


def main():
    ap = argparse.ArgumentParser(description = __doc__, formatter_class = argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--prompt", type = int, default = 2048, help = "prefill prompt length (default 2048)")
    ap.add_argument("--gen", type = int, default = 128, help = "decode tokens timed (default 128)")
    ap.add_argument("--reps", type = int, default = 3, help = "timed repetitions, best reported (default 3)")
    ap.add_argument("--chunk", type = int, default = 2048, help = "prefill chunk = Generator max_chunk_size (default 2048)")
    ap.add_argument("--cache", type = int, default = 0, help = "cache tokens (default max(4096, prompt+gen+256))")
    ap.add_argument("--warmup-steps", type = int, default = 8, help = "decode warm-up steps (default 8)")
    ap.add_argument("--no-lib-warmup", action = "store_true", help = "skip model.warmup() after load")
    ap.add_argument("--skip", default = "", help = "comma list of: forward,generator,prefill,prefill_generator")
    ap.add_argument("--json", default = None, help = "write all figures here")
    args = ap.parse_args()
    skip = set(s.strip() for s in args.skip.split(",") if s.strip())

    res = {"model_dir": os.path.abspath(args.model_dir), "prompt": args.prompt, "gen": args.gen,
           "reps": args.reps, "chunk": args.chunk, "figures": {}, "details": {}, "errors": {}}
    fig = res["figures"]
    det = res["details"]

    def write_json():
        if args.json:
            try:
                with open(args.json, "w") as f:
                    json.dump(res, f, indent = 1)
            except Exception:
                traceback.print_exc()

    # ---- import (may JIT-build the extension on first use if it is not prebuilt)
    t0 = time.perf_counter()
    import torch
    import exllamav3
    from exllamav3 import Config, Model, Cache, CacheLayer_fp16, Tokenizer, Generator, Job, ArgmaxSampler
    from exllamav3.version import __version__ as exllamav3_version  # the package has no __version__
    import_s = time.perf_counter() - t0
    res["env"] = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "exllamav3": exllamav3_version,
        "python": platform.python_version(),
        "exl3_env": {k: v for k, v in os.environ.items() if k.startswith("EXL3_")},
        "import_s": round(import_s, 2),
    }
    log(f"exl3_ref gpu {res['env']['gpu']}")
    log(f"exl3_ref torch {torch.__version__} (CUDA {torch.version.cuda})  exllamav3 {res['env']['exllamav3']}  "
        f"python {res['env']['python']}  import {import_s:.1f} s")
    if res["env"]["exl3_env"]:
        log(f"exl3_ref note: EXL3_* set in the environment: {res['env']['exl3_env']}")

    # ---- load: Config -> Model -> Cache (before load: load allocates the cache tensors) -> load -> warmup
    cache_tokens = args.cache or max(4096, rup(args.prompt + args.gen + 256))
    cache_tokens = rup(cache_tokens)
    res["cache_tokens"] = cache_tokens
    dev = "cuda:0"
    torch.cuda.reset_peak_memory_stats(0)
    t0 = time.perf_counter()
    config = Config.from_directory(args.model_dir)
    model = Model.from_config(config)
    cache = Cache(model, max_num_tokens = cache_tokens, layer_type = CacheLayer_fp16)
    model.load(dev, progressbar = False)
    torch.cuda.synchronize()
    load_s = time.perf_counter() - t0
    vocab = config.vocab_size
    det["load_s"] = round(load_s, 2)
    det["mem_after_load_GiB"] = round(torch.cuda.max_memory_allocated(0) / 1024**3, 3)
    log(f"exl3_ref load {load_s:.2f} s  max_memory_allocated {det['mem_after_load_GiB']:.3f} GiB  "
        f"(arch {config.architecture}, vocab {vocab}, cache {cache_tokens} tokens fp16)")
    try:
        bpw_layer, bpw_head, _ = model.get_storage_info()
        det["bpw_layers"], det["bpw_head"] = round(bpw_layer, 3), round(bpw_head, 3)
        log(f"exl3_ref storage {bpw_layer:.2f} bpw layers, {bpw_head:.2f} bpw head")
    except Exception:
        traceback.print_exc()

    # The library's post-load warm-up (Triton compile/autotune, GEMM autotuner, graph workspaces), as
    # model_init.init() runs it for its users; must precede any Generator on this cache
    if not args.no_lib_warmup and hasattr(model, "warmup"):
        try:
            t0 = time.perf_counter()
            failed = model.warmup(cache = cache, max_chunk_size = args.chunk)
            torch.cuda.synchronize()
            det["lib_warmup_s"] = round(time.perf_counter() - t0, 2)
            log(f"exl3_ref lib warmup {det['lib_warmup_s']:.1f} s" + (f"  failed passes: {failed}" if failed else ""))
        except Exception as e:
            res["errors"]["lib_warmup"] = repr(e)
            traceback.print_exc()
    det["mem_after_warmup_GiB"] = round(torch.cuda.max_memory_allocated(0) / 1024**3, 3)

    gen_cpu = torch.Generator().manual_seed(1234)

    def rand_ids(n, hi):
        return torch.randint(0, hi, (1, n), dtype = torch.long, generator = gen_cpu)

    # ---- 1. decode, forward loop
    def fwd(ids, past):
        params = {  # fresh dict per pass: device copies are cached inside it
            "attn_mode": "flash_attn",
            "cache": cache,
            "past_len": past,
            "batch_shape": (1, cache_tokens),
        }
        return model.forward(ids, params)

    def decode_run(steps):
        ids = rand_ids(1, vocab)
        logits = fwd(ids, 0)  # the 1-token prompt, untimed
        tok = torch.argmax(logits[0, -1, :vocab]).view(1, 1).cpu()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for i in range(steps):
            logits = fwd(tok, 1 + i)
            tok = torch.argmax(logits[0, -1, :vocab]).view(1, 1).cpu()
        torch.cuda.synchronize()
        return time.perf_counter() - t

    if "forward" not in skip:
        try:
            with torch.inference_mode():
                decode_run(args.warmup_steps)
                times = [decode_run(args.gen) for _ in range(args.reps)]
            rates = [args.gen / t for t in times]
            fig["decode_forward"] = round(max(rates), 2)
            det["decode_forward_all"] = [round(r, 2) for r in rates]
            det["decode_forward_median"] = round(statistics.median(rates), 2)
            det["decode_forward_ms_per_token"] = round(1000 * min(times) / args.gen, 4)
            log(f"exl3_ref decode_forward {fig['decode_forward']:.1f} tok/s  "
                f"({det['decode_forward_ms_per_token']:.3f} ms/token, reps {det['decode_forward_all']})")
        except Exception as e:
            res["errors"]["decode_forward"] = repr(e)
            traceback.print_exc()
        write_json()

    # ---- 3. prefill, model.prefill in generator-sized chunks into an empty cache
    def prefill_run(ids):
        n = ids.shape[-1]
        torch.cuda.synchronize()
        t = time.perf_counter()
        for a in range(0, n, args.chunk):
            b = min(a + args.chunk, n)
            params = {
                "attn_mode": "flash_attn",
                "cache": cache,
                "past_len": a,
                "batch_shape": (1, cache_tokens),
            }
            model.prefill(ids[:, a:b], params)
        torch.cuda.synchronize()
        return time.perf_counter() - t

    pkey = f"prefill{args.prompt}"
    if "prefill" not in skip:
        try:
            assert args.prompt <= cache_tokens, "prompt longer than the cache"
            with torch.inference_mode():
                prefill_run(rand_ids(args.prompt, vocab))
                times = [prefill_run(rand_ids(args.prompt, vocab)) for _ in range(args.reps)]
            rates = [args.prompt / t for t in times]
            fig[pkey] = round(max(rates), 1)
            det[pkey + "_all"] = [round(r, 1) for r in rates]
            det[pkey + "_ms"] = round(1000 * min(times), 3)
            log(f"exl3_ref {pkey} {fig[pkey]:.1f} tok/s  ({det[pkey + '_ms']:.2f} ms, chunk {args.chunk}, "
                f"reps {det[pkey + '_all']})")
        except Exception as e:
            res["errors"][pkey] = repr(e)
            traceback.print_exc()
        write_json()

    # ---- 2. decode (and prefill cross-check), Generator/Job path. Last: the generator takes over the cache
    generator = None
    tokenizer = None
    if not {"generator", "prefill_generator"} <= skip:
        try:
            tokenizer = Tokenizer.from_config(config)
            generator = Generator(model = model, cache = cache, tokenizer = tokenizer, max_chunk_size = args.chunk)
        except Exception as e:
            res["errors"]["generator_init"] = repr(e)
            traceback.print_exc()

    def run_job(ids, max_new):
        job = Job(input_ids = ids, max_new_tokens = max_new, sampler = ArgmaxSampler(), stop_conditions = None)
        generator.enqueue(job)
        final, n_stream, t_first, t_last = None, 0, None, None
        t0 = time.perf_counter()
        while generator.num_remaining_jobs():
            for r in generator.iterate():
                if r.get("stage") == "error":
                    raise r["error"]
                if r.get("stage") != "streaming":
                    continue
                tid = r.get("token_ids")
                if tid is not None:
                    now = time.perf_counter()
                    if t_first is None:
                        t_first = now
                    t_last = now
                    n_stream += tid.numel()
                if r.get("eos"):
                    final = r
        wall = time.perf_counter() - t0
        assert final is not None, "job ended without an eos result"
        return final, wall, n_stream, t_first, t_last

    if generator is not None and "generator" not in skip:
        try:
            hi = min(vocab, getattr(tokenizer, "actual_vocab_size", vocab) or vocab)
            plen = 1
            try:
                run_job(rand_ids(plen, hi), min(args.gen, 32))  # warm-up job
            except Exception:
                traceback.print_exc()
                log("exl3_ref note: 1-token prompt job failed, retrying generator with a 16-token prompt")
                plen = 16
                generator.close()
                generator = Generator(model = model, cache = cache, tokenizer = tokenizer, max_chunk_size = args.chunk)
                run_job(rand_ids(plen, hi), min(args.gen, 32))
            rates, walls, stats = [], [], []
            for _ in range(args.reps):
                final, wall, n_stream, t_first, t_last = run_job(rand_ids(plen, hi), args.gen)
                n = final.get("new_tokens", n_stream)
                tg = final.get("time_generate")
                rates.append(n / tg)
                walls.append((n_stream - 1) / (t_last - t_first) if n_stream > 1 and t_last > t_first else None)
                stats.append({"new_tokens": n, "time_generate": tg, "time_prefill": final.get("time_prefill"),
                              "eos_reason": final.get("eos_reason"), "wall_s": round(wall, 4)})
            fig["decode_generator"] = round(max(rates), 2)
            det["decode_generator_all"] = [round(r, 2) for r in rates]
            det["decode_generator_median"] = round(statistics.median(rates), 2)
            det["decode_generator_stream_rate"] = [round(w, 2) if w else None for w in walls]
            det["decode_generator_prompt_tokens"] = plen
            det["decode_generator_jobs"] = stats
            if any(s["new_tokens"] != args.gen for s in stats):
                log(f"exl3_ref note: generator produced {[s['new_tokens'] for s in stats]} tokens, asked {args.gen}")
            log(f"exl3_ref decode_generator {fig['decode_generator']:.1f} tok/s  (new_tokens/time_generate, "
                f"reps {det['decode_generator_all']}; host-side stream rate {det['decode_generator_stream_rate']})")
        except Exception as e:
            res["errors"]["decode_generator"] = repr(e)
            traceback.print_exc()
        write_json()

    gkey = pkey + "_generator"
    if generator is not None and "prefill_generator" not in skip:
        try:
            hi = min(vocab, getattr(tokenizer, "actual_vocab_size", vocab) or vocab)
            run_job(rand_ids(args.prompt, hi), 1)  # warm-up; fresh random prompts never hit the page cache
            rates = []
            for _ in range(args.reps):
                final, _, _, _, _ = run_job(rand_ids(args.prompt, hi), 1)
                rates.append((args.prompt - 1) / final["time_prefill"])
            fig[gkey] = round(max(rates), 1)
            det[gkey + "_all"] = [round(r, 1) for r in rates]
            log(f"exl3_ref {gkey} {fig[gkey]:.1f} tok/s  ((prompt-1)/time_prefill, reps {det[gkey + '_all']})")
        except Exception as e:
            res["errors"][gkey] = repr(e)
            traceback.print_exc()
        write_json()

    # ---- which attention paths actually ran
    try:
        fns, bc = set(), 0
        for m in model:
            dc = getattr(m, "dispatch_cache", None)
            if isinstance(dc, dict):
                for k, f in dc.items():
                    fns.add(f"{k}:{getattr(f, '__name__', str(f))}")
            bca = getattr(m, "bc_attn", None)
            if isinstance(bca, dict):
                bc += sum(1 for v in bca.values() if v)
        det["attn_dispatch_fns"] = sorted(fns)
        det["bc_attn_graph_layers"] = bc
        log(f"exl3_ref attention: dispatched {sorted(fns) or 'none (all via graph path?)'}; "
            f"graph-captured decode attention built for {bc} layer cache(s)")
    except Exception:
        traceback.print_exc()

    if generator is not None:
        try:
            generator.close()
        except Exception:
            pass

    det["mem_peak_GiB"] = round(torch.cuda.max_memory_allocated(0) / 1024**3, 3)
    log(f"exl3_ref max_memory_allocated {det['mem_peak_GiB']:.3f} GiB (whole run)")
    log("exl3_ref summary: " + "  ".join(f"{k}={v}" for k, v in fig.items()) +
        (f"  errors={list(res['errors'])}" if res["errors"] else ""))
    write_json()
    return 0 if fig else 1


if __name__ == "__main__":
    sys.exit(main())

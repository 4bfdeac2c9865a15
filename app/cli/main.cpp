// `exl`: the Qt-free command line of EXL Studio.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "commands.h"
#include "exl/error.h"

namespace {

const char* kUsage = R"(exl - EXL Studio command line

usage: exl COMMAND [options]
       exl --version                                   version, build and the CUDA setup found

commands:
  inspect    -m DIR [--json]                          model summary: shapes, bit widths, bpw, size
  tokenize   -m DIR [--special] [--bos] [--file F | TEXT]   token ids as a JSON array
  detokenize -m DIR IDS...                            text of token ids
  logits     -m DIR --ids 1,2,3 --out FILE            fp32 logits at every position [n, vocab]
  generate   -m DIR -p TEXT [-n N] [--ignore-eos] [--greedy | --temperature T --top-k K
             --top-p P --min-p P --seed S] [--chat [--system TEXT]] [--json]
                                                      generate a continuation (--chat: a reply to
                                                      the prompt as one user turn, chat template)
  chat       -m DIR [--system TEXT] [-n N] [sampling flags] [--json]   terminal multi-turn chat with the
             model's chat template: one user turn per stdin line; shows the tokens reused from the
             cache and the tokens prefilled per turn
  ppl        -m DIR --text FILE [--window 512] [--tokens N] [--json]   perplexity
  bench      -m DIR | --synth PRESET [--bpw X] [--format exl2|exl3] [--prompt 512,2048] [--ctx 0,2048,32768] [--gen 128]
             [--repeats N] [--json] [generate's sampler flags]   prefill speed per prompt length (and
             time to first token) and decode speed per context, each beside its bound (measured copy
             bandwidth / bytes read per token; FP16 tensor rate / 2 x weights) (--synth: a random model
             in a temporary folder; decode samples greedily unless --temperature, --top-k, --top-p,
             --min-p or --typical is given)
  selftest   [--fixtures DIR] [--filter SUITE|PREFIX*] [--device cpu|cuda]   run the built-in test
             cases (GPU ones too; --device cuda: only those, and no GPU is a failure)
  convert    -i HF_DIR|FILE.gguf -o OUT_DIR -b BPW [-hb 6] [-m MEAS] [-om MEAS] [--cal FILE] [--rows N]
             [--length N] [--fast] [--resume] [--device auto|cpu|cuda[:N]]   quantize an FP16/BF16/FP32
             (or GGUF) model to EXL2 at a target bpw (--fast: no measurement; auto: the GPU when usable;
             --resume: continue an interrupted conversion into the same OUT_DIR)
  convert    --format exl3 -i HF_DIR|FILE.gguf -o OUT_DIR -b BPW [-hb 6|16] [-c FILE|DIR] [-cr 250]
             [-cc 2048] [-cb mul1|mcg|3inst] [--out_scales always|never|auto] [-hq] [-r] [--seed N]
             quantize to EXL3 with ExLlamaV3's convert.py flags (BPW 1..8; -r: resume; on the CPU)
  fit        -m DIR|ORG/NAME:BRANCH | --config FILE --bpw B [--head-bits H] | --preset NAME [--bpw B]
             [--format exl2|exl3 (what if; default: the config's quant_method, else exl2)]  --ctx N
             [--cache fp16|fp8|q8|q6|q4|k8v4] [--batch N] [--draft DIR|PRESET] [--gpu "RTX 4090"[,...]
             | --vram GB --bandwidth GB/s] [--gpu-split 20,24 | --auto-split] [--json]   does it fit, how fast
  serve      -m DIR [--host 127.0.0.1] [--port 5001] [--api-key KEY] [--queue N] [--http-threads N]
             [--cors ORIGIN] [--model-id ID] [--max-body BYTES]   OpenAI-compatible HTTP server (/v1)
             [--max-conns N] [--max-conns-per-client N] [--keep-alive S] [--header-timeout S]
  template   (-m DIR | --template FILE) --messages FILE.json [--add-generation-prompt]
             [--bos-token T] [--eos-token T] [--tools FILE.json] [--vars FILE.json]
             [--now "YYYY-MM-DD HH:MM:SS"]   render a chat template as transformers does (exact text)
  synth      --preset NAME --bpw X [--format exl2|exl3] [--head-bits 6] [--fp16] [--seed N] [--shard-size MiB]
             -o DIR | --list   an EXL2 or EXL3 model with random weights of a real architecture's shapes
             (for benchmarks; EXL3: mul1 codebook, whole bit rates per linear, head 1-8 or 16 bits)
  import     -i FILE.gguf -o HF_DIR [--dtype fp16|bf16]   GGUF (llama, qwen2) to an HF-style folder
  search     QUERY [--exl2|--exl3] [--sort downloads|recent|likes|relevance] [--limit N] [--author ORG] [--json]
             models on the Hugging Face Hub
  repo       ORG/NAME[:BRANCH] [--json]   a Hub repo's branches: files, sizes, LFS sha256, quantization_config
  pull       ORG/NAME[:BRANCH] [--include PATTERN[,PATTERN]] [--parallel N] [--retries N] [--json]   download
             into the huggingface_hub cache (resumable; LFS files checked by sha256); prints the snapshot folder
  ls         [--dir DIR] [--json]   local models (DIR's folders and the Hub cache): format, bpw, size, path
             (Hub: HF_ENDPOINT, HF_TOKEN or $HF_HOME/token, HF_HOME / HF_HUB_CACHE, HF_HUB_OFFLINE)

options of commands that run a model:
  --device cpu|cuda|cuda:N|auto   (default auto: the GPU when usable, else the CPU)
  --cache fp16|fp32|fp8|q8|q6|q4  KV cache type (default fp16; -c8, -cq8, -cq6, -cq4 alike;
                                  --cache-k/--cache-v BITS for separate key and value widths)
  --ctx N                         context length (cache size) in tokens
  --max-chunk N                   longest prefill chunk (default 2048)
  --threads N                     CPU threads (default: all cores)
  --nondeterministic              CUDA: the head's and non-EXL2 layers' partial sums meet in fp32
                                  atomics (about 1 % faster decode), so a seed no longer repeats a
                                  generation bit for bit
  --vram-limit GiB                CUDA: most memory the backend may take on its device (with a
                                  split: on each device a -gs share does not already cap)
  -gs, --gpu-split 20,23          CUDA: split the layers over GPUs 0, 1, ... using at most these GiB
                                  on each (the VRAM planner places them; the head with the last layer)
  --auto-split                    CUDA: fill every visible GPU in order, keeping a reserve on each
  --layer-split D:N,D:N,...       CUDA: explicit split, device D holds the next N layers (the last N
                                  may be left out: the rest); "0:12,0" runs two segments on one GPU
  --split-via-host                hand the hidden state between GPUs through pinned host memory
                                  even where peer copies work
  --draft-device cuda:N           speculative decoding: the draft model's device (default: the
                                  target's GPU with the most free memory)
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "-V" || cmd == "version") return exl::cli::cmd_version();
  try {
    using namespace exl::cli;
    std::set<std::string> switches = {"--json", "--special", "--bos", "--ignore-eos", "--greedy", "--verbose",
                                      "--list", "--skip-special", "--chat", "--auto-split", "--list-gpus",
                                      "-c8", "-cq4", "-cq6", "-cq8", "--step-last", "--token-by-token",
                                      "--add-generation-prompt", "--fast", "--resume", "--quiet", "--nondeterministic", "--fp16",
                                      "--split-via-host", "--exl2", "--exl3", "-hq", "--hq"};
    // `exl convert --format exl3` takes ExLlamaV3's flags, where -r is --resume (ExLlamaV2's -r,
    // the EXL2 converter's, is the number of calibration rows).
    if (cmd == "convert")
      for (int i = 2; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--format") && !std::strcmp(argv[i + 1], "exl3")) switches.insert("-r");
    Args a(argc, argv, 2, switches);
    if (cmd == "inspect") return cmd_inspect(a);
    if (cmd == "tokenize") return cmd_tokenize(a);
    if (cmd == "detokenize") return cmd_detokenize(a);
    if (cmd == "logits") return cmd_logits(a);
    if (cmd == "generate") return cmd_generate(a);
    if (cmd == "chat") return cmd_chat(a);
    if (cmd == "ppl") return cmd_ppl(a);
    if (cmd == "bench") return cmd_bench(a);
    if (cmd == "selftest") return cmd_selftest(a);
    if (cmd == "convert") return cmd_convert(a);
    if (cmd == "fit") return cmd_fit(a);
    if (cmd == "import") return cmd_import(a);
    if (cmd == "synth") return cmd_synth(a);
    if (cmd == "serve") return cmd_serve(a);
    if (cmd == "template") return cmd_template(a);
    if (cmd == "pull") return cmd_pull(a);
    if (cmd == "search") return cmd_search(a);
    if (cmd == "repo") return cmd_repo(a);
    if (cmd == "ls") return cmd_ls(a);
    std::fprintf(stderr, "exl: unknown command '%s' (see exl --help)\n", cmd.c_str());
    return 2;
  } catch (const exl::Error& e) {
    std::fprintf(stderr, "exl %s: error (%s): %s\n", cmd.c_str(), exl::error_kind_name(e.kind()), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exl %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}

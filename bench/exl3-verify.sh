#!/bin/bash
# On the GPU machine: the CUDA backend against ExLlamaV3's EXL3 references, from a slim copy of
# tests/data/exl3 (DIR: models without their embedding shard, which is DIR/embedding.safetensors
# once, named per model in DIR/embedding_shards.json; refs/ for those models), and with `bench`
# the EXL3 kernels' selftest, EXL3 decode/prefill of synthetic 8B and 1.1B models at 4.0 bpw, the
# EXL2 8B figure, and compute-sanitizer memcheck over the EXL3 kernels.
#   bench/exl3-verify.sh DIR [bench]      (.gpu/ from bench/gpu-prep.sh, fixtures with prompts.json,
#                                          ppl_ids.json and models/hf/ref-s's tokenizer)
cd "$(dirname "$0")/.."
D=$1
(cd .gpu/bin && unxz -f ../lib/*.xz *.xz 2>/dev/null)
export LD_LIBRARY_PATH=$PWD/.gpu/lib; EXL=$PWD/.gpu/bin/exl
for n in $(python3 -c "import json; d = json.load(open('$D/embedding_shards.json')); print(' '.join(k + '/' + v for k, v in d.items()))"); do
  cp "$D/embedding.safetensors" "$D/models/$n"
done
echo "== the CUDA backend against ExLlamaV3's references ($(ls $D/models | tr '\n' ' '))"
EXL_EXL3_DATA=$PWD/$D $EXL selftest --device cuda --fixtures .gpu/fixtures --filter 'cuda_model.exl3ref_*' --verbose 2>&1 | tail -40
[ "$2" = bench ] || exit 0
echo "== EXL3 kernels"
$EXL selftest --device cuda --fixtures .gpu/fixtures --filter 'cuda_kernels.exl3_*'
M=/tmp/x3m; mkdir -p $M
for p in tinyllama-1.1b llama3-8b; do
  [ -d $M/$p ] || $EXL synth --preset $p --bpw 4.0 --format exl3 -o $M/$p --quiet
  echo "== exl bench EXL3 $p 4.0 bpw"
  $EXL bench -m $M/$p --prompt 2048 --ctx 0 --gen 128 --json | tee $OUT/bench_exl3_$p.json
done
echo "== exl bench EXL2 llama3-8b 4.0 bpw"
$EXL bench --synth llama3-8b --bpw 4.0 --prompt 2048 --ctx 0 --gen 128 --json | tee $OUT/bench_exl2_llama3-8b.json
echo "== compute-sanitizer memcheck, EXL3 kernels"
timeout 150 compute-sanitizer --tool memcheck $EXL selftest --device cuda --fixtures .gpu/fixtures --filter 'cuda_kernels.exl3_*' 2>&1 | tail -4

#!/usr/bin/env bash
# One device call that verifies the device sampler, most important first: its tests, the decode loop against a base
# module (.gpu/bin/libexl_cuda_base.so(.xz), e.g. the module of a commit before the rows path:
# xz -6 -c OTHER_BUILD/bin/libexl_cuda.so > .gpu/bin/libexl_cuda_base.so.xz), memcheck and
# racecheck over the rows path, then the whole selftest. About 3 minutes.
#   usage (on the GPU machine, after bench/gpu-prep.sh here):  bash bench/gpu-verify.sh OUT_DIR
set -u
out=${1:?usage: bench/gpu-verify.sh OUT_DIR}; mkdir -p "$out"; [[ $out == /* ]] || out=$PWD/$out
root=$(cd "$(dirname "$0")/.." && pwd)
log=$out/log.txt
source "$(dirname "$0")/gpu-env.sh"
st() {  # st TAG [VAR=VALUE ...] -- FILTER
  local tag=$1; shift; local e=(); while [ "$1" != -- ]; do e+=("$1"); shift; done; shift
  env "${e[@]}" timeout 120 ./exl selftest --device cuda --fixtures ../fixtures ${1:+--filter "$1"} >"$out/st-$tag.log" 2>&1
  say "selftest $tag rc $?: $(tail -n 1 "$out/st-$tag.log") $(grep -E '^FAIL' "$out/st-$tag.log" | head -3 | tr '\n' ' ')"
}
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/env.txt" 2>&1
st sampler -- 'cuda_kernels.sampler*'
st devsampling -- cuda_model.device_sampling_matches_host_sampling
st seeded -- cuda_model.seeded_generation_repeats_exactly
if [ -e libexl_cuda_base.so ]; then
  (cd "$root" && bash bench/gpu-ab.sh "$out/loop.txt" 1 "EXL_BENCH=loop MODULE=libexl_cuda_base.so" "EXL_BENCH=loop" \
    >/dev/null 2>&1)
  say "loop done"
fi
if [ -n "$cs" ]; then
  say "$(sanitize memcheck cuda_kernels.sampler_rows_selects_small "$out/memcheck.log")"
  say "$(sanitize racecheck cuda_kernels.sampler_rows_selects_small "$out/racecheck.log")"
fi
st all --

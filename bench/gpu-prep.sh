#!/usr/bin/env bash
# Fills .gpu/ for one GPU-machine call: a stripped exl, the CUDA module (same build tree: the
# loader checks the build id), exl_cuda_bench, the shared libraries exl needs that the GPU
# machine (Ubuntu 24.04, CUDA, no Qt/PCRE2/ICU) lacks, and a fixture subset, under 64 MiB.
#   bench/gpu-prep.sh BUILD_DIR [MODEL ...]
# On the GPU machine:  cd .gpu/bin && unxz ../lib/*.xz *.xz && export LD_LIBRARY_PATH=$PWD/../lib &&
#                      ./exl selftest --fixtures ../fixtures
set -euo pipefail
build=${1:?usage: bench/gpu-prep.sh BUILD_DIR [MODEL ...]}; shift || true
cd "$(git rev-parse --show-toplevel)"
../shared/tools/gpu-carry "$build" "$@"
# Only what the GPU run uses.
find .gpu/bin -type f ! -name exl ! -name libexl_cuda.so -delete
cp "$build/bin/exl_cuda_bench" "$build/bin/exl_launch_floor" .gpu/bin/ 2>/dev/null || true
strip .gpu/bin/* 2>/dev/null || true
mkdir -p .gpu/lib
for lib in $(ldd .gpu/bin/exl | awk '/=>/ {print $3}' | grep -E 'pcre2|icu|httplib|ssl|crypto|brotli|libz\.'); do
  cp -L "$lib" .gpu/lib/
done
# ICU's data library is most of the size; it and the next largest are compressed here, unpacked
# there (`unxz ../lib/*.xz *.xz`): with two fixture models the tree stays under the 64 MiB carry limit.
xz -9 -T2 .gpu/lib/libicudata.so.* .gpu/lib/libicuuc.so.* .gpu/lib/libcrypto.so.* .gpu/lib/libssl.so.* 2>/dev/null || true
# The CUDA module (about 21 MiB of sm_90 code) packs to a fraction of that.
xz -6 -T2 .gpu/bin/libexl_cuda.so
# References the model selftest does not read for the carried models.
rm -f .gpu/fixtures/refs/logits_hf_* .gpu/fixtures/refs/long_prompt_last_logits_hf* 2>/dev/null || true
for f in .gpu/fixtures/refs/logits_exl2_*.bin; do
  m=$(basename "$f" .bin); m=${m#logits_exl2_}
  [ -d ".gpu/fixtures/models/exl2/$m" ] || rm -f "$f" "${f%.bin}.json"
done
du -sm .gpu | cut -f1 | xargs -I{} echo ".gpu/: {} MiB"

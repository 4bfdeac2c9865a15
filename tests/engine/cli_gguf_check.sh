#!/usr/bin/env bash
# The command-line path of the default model (scripts/fetch-default-model.sh) on a tiny GGUF:
#   exl import -i FILE.gguf -o DIR   (the short -o flag), then exl inspect on the result;
#   exl generate --chat on the imported model (chat template from the GGUF metadata);
#   exl convert -i FILE.gguf with a model EXL2 cannot hold: a clear error naming the reason,
#   and no scratch import folder left behind.
# usage: cli_gguf_check.sh EXL GGUF_FILE
set -u
exl=$1 gguf=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$exl" import -i "$gguf" -o "$work/hf" 2>"$work/import.err" || { cat "$work/import.err"; fail "exl import -o"; }
for f in config.json tokenizer.json tokenizer_config.json model.safetensors; do
  [[ -f "$work/hf/$f" ]] || fail "import wrote no $f"
done
"$exl" inspect -m "$work/hf" >"$work/inspect.out" 2>&1 || { cat "$work/inspect.out"; fail "exl inspect on the import"; }
grep -q "llama" "$work/inspect.out" || fail "inspect does not name the architecture"

"$exl" generate -m "$work/hf" --chat -p "Hello" -n 4 --greedy --device cpu --json >"$work/gen.json" 2>"$work/gen.err" ||
  { cat "$work/gen.err"; fail "exl generate --chat"; }
python3 - "$work/gen.json" "$work/hf/tokenizer_config.json" <<'PY' || fail "generate --chat output"
import json, sys
out = json.load(open(sys.argv[1]))
assert out["prompt_tokens"] > 2, out  # the template adds role markers around "Hello"
assert "chat_template" in json.load(open(sys.argv[2]))
PY
"$exl" generate -m "$work/hf" -p "Hello" --system "Be brief" -n 1 --device cpu >/dev/null 2>"$work/sys.err" &&
  fail "--system without --chat was accepted"
grep -q -- "--system" "$work/sys.err" || fail "the --system error does not name the flag"

if "$exl" convert -i "$gguf" -o "$work/exl2" -b 4.0 --fast >"$work/conv.out" 2>&1; then
  fail "convert of a model with 16-wide layers succeeded"
fi
grep -q "multiple of 32" "$work/conv.out" || { cat "$work/conv.out"; fail "convert error is not specific"; }
ls -d "$work"/exl2.gguf-import-* 2>/dev/null && fail "the scratch import folder was left behind"
[[ -f "$work/exl2/config.json" ]] && fail "a failed convert left a config.json"
echo "cli_gguf: all checks passed"

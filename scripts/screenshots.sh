#!/usr/bin/env bash
# Screenshots of exl-studio (offscreen) with a fixture model on the CPU: every page (chat
# mid-reply, models with the fit calculator, the models page's Hugging Face tab with its search and
# a repository's page against the Hub-protocol test server tests/hub/hub_server.py, telemetry,
# settings) and every dialog (about,
# convert, model folders, the default model), at 1280x800 and 1024x600, in English, Dutch and German (light), plus the
# telemetry page in the dark theme; and the chat and telemetry pages with an EXL3 model (ExLlamaV3's
# conversion of ref-s at 4.0 bpw, tests/data/exl3, its decode speed beside its bound). Each PNG is
# checked (a PNG of the asked size, not blank).
#   scripts/screenshots.sh EXL_STUDIO OUT_DIR [MODEL_DIR]
# SCREENSHOTS_QUICK=1 (ctest's ui_screenshots): the pages at 1280x800 in English and the dialogs
# at 1024x600 in German only. MODEL_DIR defaults to $EXL_FIXTURES/models/exl2/ref-s-4.0bpw
# (EXL_FIXTURES defaults to ../shared/fixtures). Without the model: exit 77 (skipped), or 1 with
# EXL_REQUIRE_FIXTURES=1. The `screenshots` build target runs this into <build>/screenshots; the
# README's set is packaging/screenshots/ (copied from there).
set -euo pipefail
studio=${1:?usage: screenshots.sh EXL_STUDIO OUT_DIR [MODEL_DIR]}
out=${2:?usage: screenshots.sh EXL_STUDIO OUT_DIR [MODEL_DIR]}
here=$(cd "$(dirname "$0")/.." && pwd)
model=${3:-${EXL_FIXTURES:-$here/../shared/fixtures}/models/exl2/ref-s-4.0bpw}
if [[ ! -f "$model/config.json" ]]; then
  echo "screenshots: no model at $model" >&2
  [[ "${EXL_REQUIRE_FIXTURES:-0}" == 1 ]] && exit 1
  exit 77
fi
mkdir -p "$out"
data=$(mktemp -d)
hub_pid=
trap '[[ -n "$hub_pid" ]] && kill "$hub_pid" 2>/dev/null; rm -rf "$data"' EXIT
export QT_QPA_PLATFORM=offscreen QT_QUICK_CONTROLS_STYLE=Material
# The Hugging Face tab: the Hub-protocol test server on 127.0.0.1 with the fixture models, an empty
# Hugging Face cache (the user's own is never listed in the shots).
export HF_HOME="$data/hf-home"
unset HF_TOKEN HF_HUB_OFFLINE HF_HUB_CACHE
hub_fixtures=${EXL_FIXTURES:-$here/../shared/fixtures}
hub_pages=()
if [[ -f "$hub_fixtures/models/exl2/ref-s-4.0bpw/config.json" ]] && command -v python3 >/dev/null; then
  python3 "$here/tests/hub/hub_server.py" --fixtures "$hub_fixtures" --max-seconds 1800 >"$data/hub.json" 2>"$data/hub.log" &
  hub_pid=$!
  for _ in $(seq 100); do [[ -s "$data/hub.json" ]] && break; sleep 0.1; done
  port=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hub"])' "$data/hub.json")
  export HF_ENDPOINT="http://127.0.0.1:$port"
  hub_pages=(hub hub-repo)
fi
# The EXL3 model: tests/data/exl3's ref-s-4.0bpw with the fp16 embedding shard it leaves out (the
# fixture's embedding, which ExLlamaV3 stored unchanged) and the fixture's tokenizer.
exl3_model=
exl3_src=$here/tests/data/exl3/models/ref-s-4.0bpw hf=$(dirname "$model")/../hf/ref-s
if [[ -f "$exl3_src/config.json" && -f "$hf/tokenizer.json" ]] && command -v python3 >/dev/null; then
  exl3_model=$data/ref-s-exl3-4.0bpw
  mkdir -p "$exl3_model"
  cp "$exl3_src"/* "$hf"/tokenizer.json "$hf"/tokenizer_config.json "$exl3_model"/
  # The embedding shard as the test Hub builds it (tests/hub/hub_server.py's embedding_shard).
  python3 - "$here/tests/hub" "$hf" "$exl3_model" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
import hub_server
hf, dst = sys.argv[2], sys.argv[3]
shard = json.load(open(os.path.join(dst, "model.safetensors.index.json")))["weight_map"]["model.embed_tokens.weight"]
open(os.path.join(dst, shard), "wb").write(hub_server.embedding_shard(hf))
PY
fi
shots=()
# shot SIZE THEME LANG PAGE [DIALOG]   (MODEL_FOR_SHOT: another model folder, NAME_SUFFIX: its tag)
shot() {
  local size=$1 theme=$2 lang=$3 page=$4 dialog=${5:-}
  local name="$page${NAME_SUFFIX:-}"; [[ -n "$dialog" ]] && name="dialog-$dialog"
  local file="$out/$name-$size-$lang${theme:+-$theme}.png"
  [[ "$theme" == light ]] && file="$out/$name-$size-$lang.png"
  local page_arg=$page; [[ "$page" == hub-repo ]] && page_arg=hub
  local args=(--model "${MODEL_FOR_SHOT:-$model}" --device cpu --data-dir "$data/$size-$theme-$lang${NAME_SUFFIX:-}" --theme "$theme" --lang "$lang"
              --page "$page_arg" --size "$size" --screenshot "$file")
  if [[ -n "$dialog" ]]; then args+=(--dialog "$dialog" --quit-after 1500)
  else
    case $page in
      # Mid-reply: the shot is taken while the reply streams.
      chat) args+=(--demo-prompt "Tell me a story about a lighthouse." --quit-after 1800) ;;
      telemetry) args+=(--demo-prompt "Count from one to twenty." --quit-after 2500) ;;
      # The search's results; and with a repository's page, its branches and their fit.
      hub) args+=(--quit-after 3000) ;;
      hub-repo) args+=(--hub-repo exl-test/ref-s-exl2 --quit-after 3500) ;;
      *) args+=(--quit-after 1500) ;;
    esac
  fi
  rm -f "$file"
  "$studio" "${args[@]}" >"$data/$name-$size-$theme-$lang.log" 2>&1 || {
    echo "screenshots: exl-studio failed for $name ($size, $theme, $lang):" >&2
    tail -n 20 "$data/$name-$size-$theme-$lang.log" >&2
    exit 1
  }
  shots+=("$file:$size")
}
if [[ "${SCREENSHOTS_QUICK:-0}" == 1 ]]; then
  for page in chat models "${hub_pages[@]}" telemetry settings; do shot 1280x800 light en "$page"; done
  for dialog in about convert folders default-model; do shot 1024x600 light de models "$dialog"; done
else
  for size in 1280x800 1024x600; do
    for lang in en nl de; do
      for page in chat models "${hub_pages[@]}" telemetry settings; do shot "$size" light "$lang" "$page"; done
      for dialog in about convert folders default-model; do shot "$size" light "$lang" models "$dialog"; done
    done
  done
  shot 1280x800 dark en telemetry
fi
if [[ -n "$exl3_model" ]]; then
  for page in chat telemetry; do MODEL_FOR_SHOT=$exl3_model NAME_SUFFIX=-exl3 shot 1280x800 light en "$page"; done
fi
python3 - "${shots[@]}" <<'PY'
import struct, sys, zlib
bad = 0
for arg in sys.argv[1:]:
    path, size = arg.rsplit(":", 1)
    want = tuple(int(v) for v in size.split("x"))
    data = open(path, "rb").read()
    ok = data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24]) if ok else (0, 0)
    # Not blank: the compressed image data of a one-colour picture is a few KB.
    if not ok or (w, h) != want or len(data) < 20000:
        print(f"screenshots: {path}: {'not a PNG' if not ok else f'{w}x{h}, {len(data)} bytes'}", file=sys.stderr)
        bad += 1
print(f"{len(sys.argv) - 1 - bad} of {len(sys.argv) - 1} screenshots good")
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# Screenshots of every page of exl-studio (offscreen, 1280x800) with a fixture model on the CPU:
# chat mid-reply, models with the fit calculator, telemetry, settings; in the light and dark
# themes (English) and in Dutch (light). Each PNG is checked (a PNG, 1280x800, not blank).
#   scripts/screenshots.sh EXL_STUDIO OUT_DIR [MODEL_DIR]
# MODEL_DIR defaults to $EXL_FIXTURES/models/exl2/ref-s-4.0bpw (EXL_FIXTURES defaults to
# ../shared/fixtures). Without the model: exit 77 (skipped), or 1 with EXL_REQUIRE_FIXTURES=1.
# The `screenshots` build target runs this into <build>/screenshots.
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
trap 'rm -rf "$data"' EXIT
export QT_QPA_PLATFORM=offscreen QT_QUICK_CONTROLS_STYLE=Material
shots=()
for variant in "light en" "dark en" "light nl"; do
  read -r theme lang <<<"$variant"
  for page in chat models telemetry settings; do
    file="$out/$page-$theme-$lang.png"
    args=(--model "$model" --device cpu --data-dir "$data/$theme-$lang" --theme "$theme" --lang "$lang"
          --page "$page" --screenshot "$file")
    case $page in
      # Mid-reply: the shot is taken while the reply streams.
      chat) args+=(--demo-prompt "Tell me a story about a lighthouse." --quit-after 1800) ;;
      telemetry) args+=(--demo-prompt "Count from one to twenty." --quit-after 2500) ;;
      *) args+=(--quit-after 1500) ;;
    esac
    rm -f "$file"
    "$studio" "${args[@]}" >"$data/$page-$theme-$lang.log" 2>&1 || {
      echo "screenshots: exl-studio failed for $page ($theme, $lang):" >&2
      tail -n 20 "$data/$page-$theme-$lang.log" >&2
      exit 1
    }
    shots+=("$file")
  done
done
python3 - "${shots[@]}" <<'PY'
import struct, sys, zlib
bad = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    ok = data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24]) if ok else (0, 0)
    # Not blank: the compressed image data of a one-colour 1280x800 picture is a few KB.
    if not ok or (w, h) != (1280, 800) or len(data) < 20000:
        print(f"screenshots: {path}: {'not a PNG' if not ok else f'{w}x{h}, {len(data)} bytes'}", file=sys.stderr)
        bad += 1
print(f"{len(sys.argv) - 1 - bad} of {len(sys.argv) - 1} screenshots good")
sys.exit(1 if bad else 0)
PY

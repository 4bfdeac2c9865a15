#!/usr/bin/env bash
# Sets up a fresh clone and runs EXL Studio on its default model: installs the Debian packages,
# builds the dev preset (exl and exl-studio), fetches the default model once (SmolLM2-135M-Instruct,
# converted to EXL2 4.0 bpw into the XDG data directory: scripts/fetch-default-model.sh), then
# starts the desktop app with that model loaded (the GPU when usable, else the CPU).
# Without a display it answers one chat message with `exl generate --chat` instead.
#   EXL_MODEL=DIR   use another model folder (no download)
#   extra arguments go to exl-studio (or, without a display, to exl generate)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cmake >/dev/null || ! dpkg -s qt6-declarative-dev nlohmann-json3-dev libpcre2-dev >/dev/null 2>&1; then
  bash .ci/install-deps
fi
export CCACHE_BASEDIR="$PWD"
cmake --preset dev >/dev/null
have_display=0
[[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]] && have_display=1
targets=(exl)
((have_display)) && targets+=(exl-studio)
[[ -d kernels/cuda ]] && targets+=(exl_cuda)
cmake --build build/dev -j"$(nproc)" --target "${targets[@]}"
model=${EXL_MODEL:-}
if [[ -z "$model" ]] && ! model=$(scripts/fetch-default-model.sh build/dev/app/cli/exl); then
  model=../shared/fixtures/models/exl2/ref-s-4.0bpw
  [[ -d "$model" ]] || { echo "the default model could not be fetched (see above) and no fixture model is here" >&2; exit 1; }
  echo "the default model could not be fetched (see above); using the fixture model $model" >&2
fi
if ((have_display)); then
  exec build/dev/app/gui/exl-studio --model "$model" "$@"
fi
echo "no display (DISPLAY / WAYLAND_DISPLAY unset): answering one chat message with exl generate --chat" >&2
if [ "$#" -eq 0 ]; then set -- -p "What is the capital of France? Answer in one sentence." -n 64 --greedy; fi
exec build/dev/app/cli/exl generate -m "$model" --chat "$@"

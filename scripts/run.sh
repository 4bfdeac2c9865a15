#!/usr/bin/env bash
# Sets up a fresh clone and runs EXL Studio's main job: installs the Debian packages, builds
# the dev preset, then generates text with the default model on the best available device.
# Extra arguments are passed to `exl generate` (e.g. -p "Your prompt" -n 64).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cmake >/dev/null || ! dpkg -s qt6-declarative-dev nlohmann-json3-dev libpcre2-dev >/dev/null 2>&1; then
  bash .ci/install-deps
fi
cmake --preset dev >/dev/null
cmake --build build/dev -j"$(nproc)" --target exl
model=${EXL_MODEL:-../shared/fixtures/models/exl2/ref-s-4.0bpw}
if [ "$#" -eq 0 ]; then set -- -p "Once upon a time, there was a little girl named Lily. She loved to" -n 48; fi
exec build/dev/app/cli/exl generate -m "$model" "$@"

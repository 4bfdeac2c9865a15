#!/usr/bin/env bash
# The test command: configure and build with the dev preset, then run every test with ctest.
# GPU cases skip here with a message; run them on a GPU machine with `exl selftest`.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so every clone shares one cache.
export CCACHE_BASEDIR="$PWD"
cmake --preset dev
cmake --build build/dev -j"$(nproc)"
cd build/dev
QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} ctest --output-on-failure -j"$(nproc)"

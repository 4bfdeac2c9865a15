#!/usr/bin/env bash
# The 30-minute soak of `exl serve` (issue 51's acceptance; not run by CI, whose form is the 55 s
# `server_soak` test): 8 clients of mixed streamed, non-streamed and abandoned requests against
# the fixture model on the CPU (or --model DIR), asserting no errors and RSS flat after a 5-minute
# warm-up. Usage: bench/server_soak.sh [BUILD_DIR] [extra test_soak.py arguments]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/dev}"
shift || true
exec python3 "$here/../tests/server/test_soak.py" --exl "$build/app/cli/exl" \
  --fixtures "${EXL_FIXTURES:-$here/../../shared/fixtures}" --duration 1800 --warmup 300 "$@"

#!/bin/bash
# Keeps the EXL3 reference models and outputs (tests/data/exl3/models, refs: about 41 MiB) and the
# app screenshots (packaging/screenshots, 6 MiB) out of a
# GPU-machine call, whose copied tree (tracked and untracked-not-ignored files plus carried paths)
# may hold 64 MiB: `on` removes them from the index (the files stay) and ignores them locally,
# `off` restores the index from HEAD and the ignore list. Run `off` before any commit.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
paths=(tests/data/exl3/models tests/data/exl3/refs packaging/screenshots)
ex=.git/info/exclude
case "${1:-}" in
  on)
    git rm -r -q --cached "${paths[@]}"
    for p in "${paths[@]}"; do grep -qx "/$p/" $ex || echo "/$p/" >> $ex; done ;;
  off)
    git reset -q -- "${paths[@]}"
    for p in "${paths[@]}"; do sed -i "\\|^/$p/\$|d" $ex; done ;;
  *) echo "usage: bench/gpu-slim.sh on|off" >&2; exit 2 ;;
esac
git status --short -- "${paths[@]}" | head -3

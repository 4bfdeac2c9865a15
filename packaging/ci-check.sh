#!/usr/bin/env bash
# Packaging check (CI, after scripts/test.sh built the dev preset): builds the .deb and the
# .tar.gz with CPack from an existing build folder, lints them, installs the .deb with apt,
# runs `exl --version`, `exl generate` on a fixture model (CPU) and `exl-studio` offscreen with a
# model (quit by SIGTERM, must exit 0), opens every dialog of the installed app under Xvfb
# (`exl-studio --check-dialogs`: the QML modules the package depends on), runs both with cuBLAS hidden (they must start, run on the
# CPU and say cuBLAS is missing), runs the tarball from a random folder (relocatable), then
# purges the package and checks that nothing it installed is left in /usr.
#
#   packaging/ci-check.sh [BUILD_DIR]      (default build/dev; needs root or sudo)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
fixtures=${EXL_FIXTURES:-../shared/fixtures}
model="$fixtures/models/exl2/ref-s-4.0bpw"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
export QT_QPA_PLATFORM=offscreen  # no display in CI
work=$(mktemp -d /tmp/exl-pkg.XXXXXX)
installed=0
cleanup() {
  # A failed check leaves no package behind.
  [ $installed = 1 ] && $SUDO apt-get purge -y -q exl-studio >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "packaging: FAIL: $*" >&2; exit 1; }
step() { echo "== packaging: $*"; }

[ -d "$model" ] || fail "fixture model $model not found (EXL_FIXTURES)"
model=$(readlink -f "$model")

step "cpack (DEB, TGZ) in $build"
rm -rf "$build/packages"
(cd "$build" && cpack -G "DEB;TGZ" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$build"/packages/exl-studio_*.deb)
tgz=$(ls "$build"/packages/exl-studio-*.tar.gz)
echo "$deb"; echo "$tgz"
dpkg-deb --field "$deb" Package Version Depends Suggests

step "lintian (no errors allowed; accepted warnings: packaging/README.md)"
lintian --fail-on error --info "$deb" || fail "lintian reports errors"

step "appstreamcli validate, desktop-file-validate (files as packaged)"
dpkg-deb -x "$deb" "$work/root"
appstreamcli validate --no-net "$work/root/usr/share/metainfo/org.exlstudio.ExlStudio.metainfo.xml"
desktop-file-validate "$work/root/usr/share/applications/org.exlstudio.ExlStudio.desktop"
for f in usr/share/man/man1/exl.1.gz usr/share/man/man1/exl-studio.1.gz usr/share/icons/hicolor/scalable/apps/org.exlstudio.ExlStudio.svg \
         usr/share/icons/hicolor/256x256/apps/org.exlstudio.ExlStudio.png usr/share/doc/exl-studio/copyright; do
  [ -f "$work/root/$f" ] || fail "/$f missing from the package"
done

step "install with apt"
command -v exl >/dev/null && fail "an exl is already on PATH ($(command -v exl)); remove it first"
find /usr -xdev | sort >"$work/usr-before"
dpkg-query -W -f '${Package}\n' | sort >"$work/pkgs-before"
$SUDO apt-get install -y -q "$(readlink -f "$deb")" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install"; }
installed=1
dpkg -L exl-studio >"$work/files"
[ "$(command -v exl)" = /usr/bin/exl ] || fail "exl not installed in /usr/bin"
[ -x /usr/bin/exl-studio ] || fail "exl-studio not installed in /usr/bin"
[ -f /usr/lib/exl-studio/libexl_cuda.so ] || fail "CUDA module not installed"

step "exl --version"
exl --version | tee "$work/version"
grep -q '^exl [0-9]' "$work/version" || fail "exl --version: no version line"
grep -q '^git commit: ' "$work/version" || fail "exl --version: no git commit"
grep -q '^CUDA module: *.*/usr/lib/exl-studio/libexl_cuda.so' "$work/version" || fail "exl --version: module not found at /usr/lib/exl-studio"

step "exl generate on $(basename "$model") (CPU)"
exl generate -m "$model" -p "Once upon a time, there was a little girl named Lily. She loved to" -n 16 --greedy \
  --device cpu | tee "$work/generate.out"
[ -s "$work/generate.out" ] || fail "exl generate printed nothing"

# Starts exl-studio offscreen with the fixture model, lets it run for $1 seconds, asks it to quit
# with SIGTERM and checks that it was still running and exits with status 0. Extra arguments
# are a command prefix (the cuBLAS-less namespace).
studio_run() {
  local seconds=$1; shift
  local data; data=$(mktemp -d "$work/studio.XXXXXX")
  "$@" env QT_QPA_PLATFORM=offscreen /usr/bin/exl-studio --model "$model" --data-dir "$data" \
    >"$work/studio.out" 2>"$work/studio.err" &
  local pid=$!
  sleep "$seconds"
  kill -0 "$pid" 2>/dev/null || { cat "$work/studio.err"; fail "exl-studio exited before it was asked to"; }
  kill -TERM "$pid"
  local rc=0 waited=0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 20 ]; do sleep 0.5; waited=$((waited + 1)); done
  kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "exl-studio did not quit within 10 s of SIGTERM"; }
  wait "$pid" || rc=$?
  cat "$work/studio.err"
  [ $rc -eq 0 ] || fail "exl-studio exited with status $rc after SIGTERM"
  if grep -E 'is not installed|is not a type|module .* not found|Cannot assign|ReferenceError|TypeError' "$work/studio.err"; then
    fail "QML errors in exl-studio's output"
  fi
}

step "exl-studio offscreen with a model, quit with SIGTERM"
exl-studio --version
exl-studio --help | grep -q -- '--check-dialogs' || fail "exl-studio --help (without a display)"
studio_run 6

step "exl-studio under Xvfb: every dialog opens and closes (the QML modules the package depends on)"
if command -v xvfb-run >/dev/null; then
  env QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x800x24" /usr/bin/exl-studio --check-dialogs --device cpu \
      --data-dir "$work/dialogs" >"$work/dialogs.log" 2>&1 || { cat "$work/dialogs.log"; fail "a dialog did not open in the installed app"; }
  cat "$work/dialogs.log"
else
  fail "xvfb-run is missing (.ci/install-deps installs it)"
fi

step "cuBLAS hidden: exl and exl-studio still start, run on the CPU and say why"
# cuBLAS may be in ld.so.cache and in the CUDA toolkit's folders, which LD_LIBRARY_PATH alone
# cannot hide: inside a private mount namespace, empty folders are mounted over every folder
# holding libcublas (nothing changes outside this check), and LD_LIBRARY_PATH points nowhere.
dirs=$( { ldconfig -p | sed -n 's/^.*libcublas\(Lt\)\?\.so.*=> //p' | xargs -r -n1 dirname
          ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib 2>/dev/null; } |
        while read -r d; do ls "$d"/libcublas.so* >/dev/null 2>&1 && readlink -f "$d"; done | sort -u)
hide=(env LD_LIBRARY_PATH="$work/nothing-here")
if [ -n "$dirs" ]; then
  mkdir -p "$work/empty"
  mounts=""; for d in $dirs; do mounts+="mount --bind '$work/empty' '$d' && "; done
  if ! $SUDO unshare -m sh -c "${mounts}true" 2>/dev/null; then
    fail "cuBLAS is installed ($dirs) and cannot be hidden here (unshare -m needs CAP_SYS_ADMIN)"
  fi
  cat >"$work/hide.sh" <<EOF
#!/bin/sh
${mounts}exec "\$@"
EOF
  chmod +x "$work/hide.sh"
  hide=($SUDO unshare -m "$work/hide.sh" env LD_LIBRARY_PATH="$work/nothing-here")
fi
"${hide[@]}" exl --version | tee "$work/version-nocublas"
grep -q '^cuBLAS: *not found' "$work/version-nocublas" || fail "cuBLAS still found"
grep -q '^backend: *CPU (cuBLAS 13 not found' "$work/version-nocublas" || fail "no cuBLAS message in exl --version"
"${hide[@]}" exl generate -m "$model" -p "Hello" -n 8 --greedy >"$work/gen-nocublas.out" 2>"$work/gen-nocublas.err" ||
  { cat "$work/gen-nocublas.err"; fail "exl generate without cuBLAS"; }
cat "$work/gen-nocublas.err" "$work/gen-nocublas.out"
grep -q 'device: cpu (no usable GPU: cuBLAS 13 not found' "$work/gen-nocublas.err" || fail "exl generate did not say cuBLAS is missing"
studio_run 5 "${hide[@]}"

step "tarball: relocatable (run from a random folder)"
mkdir -p "$work/tar/some where"
tar -xzf "$tgz" -C "$work/tar/some where"
top=$(ls -d "$work/tar/some where"/exl-studio-*)
"$top/bin/exl" --version | tee "$work/version-tar"
grep -qF "$top/lib/exl-studio/libexl_cuda.so" "$work/version-tar" || fail "tarball: module not found beside the executable"
"$top/bin/exl" generate -m "$model" -p "Hello" -n 4 --greedy --device cpu >/dev/null

step "purge, and nothing left in /usr"
$SUDO apt-get purge -y -q exl-studio >"$work/apt-purge.log" 2>&1 || { cat "$work/apt-purge.log"; fail "apt-get purge"; }
installed=0
find /usr -xdev | sort >"$work/usr-after"
dpkg-query -W -f '${Package}\n' | sort >"$work/pkgs-after"
# Files of dependency packages apt installed along with ours stay (they are not ours).
: >"$work/dep-files"
comm -13 "$work/pkgs-before" "$work/pkgs-after" | while read -r p; do dpkg -L "$p" >>"$work/dep-files"; done
sort -u -o "$work/dep-files" "$work/dep-files"
left=$(comm -13 "$work/usr-before" "$work/usr-after" | comm -23 - "$work/dep-files")
[ -z "$left" ] || { echo "$left"; fail "left in /usr after purge"; }
while read -r f; do
  case "$f" in /usr/bin/*|/usr/lib/exl-studio*|*/exl-studio*|*/exl.1.gz|*org.exlstudio.*)
    [ -e "$f" ] && fail "left after purge: $f";;
  esac
done <"$work/files"
echo "== packaging: OK"

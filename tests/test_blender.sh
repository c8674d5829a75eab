#!/usr/bin/env bash
# Blender add-on test, headless: builds the add-on zip from this build's
# libskinsolve, then tests/blender/test_bake_surface.py installs it through
# Blender's preferences, imports the Fox pair and checks the operator's actions
# against the library's solved surface (depsgraph) and the CLI's quality.
# Args: $1 = the skinsolve CLI. Env: SKS_BINARY_DIR, SKS_SOURCE_DIR, SKS_SHARED_DATA.
set -u
CLI="$1"
BUILD="${SKS_BINARY_DIR:?}"
SRC="${SKS_SOURCE_DIR:?}"
command -v blender >/dev/null 2>&1 || {
  echo "SKIPPED: blender not installed (apt-get install blender; scripts/deps.sh tries it)"; exit 77; }
LIB="$BUILD/libskinsolve.so"
if [ "${SKS_SANITIZED:-0}" = 1 ] || nm -D "$LIB" 2>/dev/null | grep -q __asan_init; then
  # the ASan library needs the ASan runtime first in the process; Blender
  # itself is not instrumented and leaks at exit by design: no leak check
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
fi
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_blender_XXXXXX")"
trap 'rm -rf "$T"' EXIT
/usr/bin/python3 "$SRC/blender/make_zip.py" "$T/skinsolve_addon.zip" "$LIB" || exit 1
# a private Blender user folder: the add-on install does not touch ~/.config
export BLENDER_USER_SCRIPTS="$T/scripts" BLENDER_USER_CONFIG="$T/config"
export PYTHONDONTWRITEBYTECODE=1
mkdir -p "$T/out"
timeout 300 blender -b --factory-startup --python-exit-code 1 \
  --python "$SRC/tests/blender/test_bake_surface.py" -- "$T/skinsolve_addon.zip" "$CLI" "$T/out" \
  >"$T/log" 2>&1
rc=$?
grep -v -E '^(Blender|Read prefs|Data are loaded|glTF import|Info:|$)' "$T/log" | tail -60
if [ -f "$T/out/blender_bake_surface.png" ]; then
  cp "$T/out/blender_bake_surface.png" "$BUILD/blender_bake_surface.png" && echo "screenshot: $BUILD/blender_bake_surface.png"
fi
exit $rc

#!/usr/bin/env bash
# Python module test (python/skinsolve over BUILD/libskinsolve.so) with
# Debian's python3 + python3-numpy: tests/python/test_skinsolve.py compares
# every number with the CLI, then `cmake --install` into a temp prefix and the
# installed module is imported without PYTHONPATH tricks beyond the prefix.
# Args: $1 = the skinsolve CLI. Env: SKS_BINARY_DIR, SKS_SOURCE_DIR, SKS_SHARED_DATA.
set -u
CLI="$1"
BUILD="${SKS_BINARY_DIR:?}"
SRC="${SKS_SOURCE_DIR:?}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3 || true)"
if [ -z "$PY" ] || ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "SKIPPED: Debian's python3 with numpy not found (apt-get install python3-numpy; scripts/deps.sh does)"
  exit 77
fi
LIB="$BUILD/libskinsolve.so"
[ -f "$LIB" ] || { echo "FAIL: $LIB not built"; exit 1; }
if [ "${SKS_SANITIZED:-0}" = 1 ] || nm -D "$LIB" 2>/dev/null | grep -q __asan_init; then
  # an ASan library needs the ASan runtime first in the process; python itself
  # leaks by design, so leak checking is off here (the C tests check leaks)
  pre="$(gcc -print-file-name=libasan.so)"
  ubsan="$(gcc -print-file-name=libubsan.so)"
  export LD_PRELOAD="$pre${ubsan:+:$ubsan}"
  export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
fi
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_python_XXXXXX")"
trap 'rm -rf "$T"' EXIT
export PYTHONDONTWRITEBYTECODE=1
rc=0
PYTHONPATH="$SRC/python" SKINSOLVE_LIBRARY="$LIB" SKS_CLI="$CLI" \
  "$PY" "$SRC/tests/python/test_skinsolve.py" || rc=$?
[ "$rc" = 77 ] && exit 77
# installed module: finds the installed library by itself
if ! cmake --install "$BUILD" --prefix "$T/p" >"$T/install.log" 2>&1; then
  cat "$T/install.log"; echo "FAIL: cmake --install"; exit 1
fi
site="$(cd "$T/p" && ls -d lib/python3*/dist-packages | head -1)"
out="$(cd "$T" && env -u SKINSOLVE_LIBRARY -u SKINSOLVE_CLI PYTHONPATH="$T/p/$site" "$PY" -c '
import skinsolve, sys
print(skinsolve.library_path); print(skinsolve.cli_path())
m = skinsolve.load(sys.argv[1]); print(len(m.clips))' "${SKS_SHARED_DATA:-x}/Fox/Fox.glb" 2>&1)"
case "$out" in
  "$T/p/"*"/libskinsolve.so.0"*"$T/p/bin/skinsolve"*) echo "installed module loads the installed library: ok" ;;
  *) echo "FAIL: installed module: $out"; rc=1 ;;
esac
exit $rc

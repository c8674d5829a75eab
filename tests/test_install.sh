#!/usr/bin/env bash
# Install test: `cmake --install` into a temp prefix puts headers, libraries,
# the CLI, skinsolve.pc and skinsolveConfig.cmake in place, and a tiny C
# program builds against them both with pkg-config and with
# find_package(skinsolve). Env: SKS_BINARY_DIR (the build tree under test).
set -u
BUILD="${SKS_BINARY_DIR:?SKS_BINARY_DIR must name the build tree}"
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_install_XXXXXX")"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local desc="$1"; shift; if "$@"; then ok; else bad "$desc"; fi; }
for tool in cc pkg-config cmake; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool not found"; exit 77; }
done

P="$T/prefix"
if ! cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then
  cat "$T/install.log" >&2
  echo "FAIL: cmake --install failed"; echo "0 passed, 1 failed"; exit 1
fi
check "header installed" test -f "$P/include/skinsolve/skinsolve.h"
for h in common rig clip pose skin io solve report; do
  check "header $h.h" test -f "$P/include/skinsolve/$h.h"
done
check "CLI installed" test -x "$P/bin/skinsolve"
pc="$(find "$P" -name skinsolve.pc | head -1)"
cfg="$(find "$P" -name skinsolveConfig.cmake | head -1)"
check "skinsolve.pc installed" test -n "$pc"
check "skinsolveConfig.cmake installed" test -n "$cfg"
check "skinsolveConfigVersion.cmake installed" test -n "$(find "$P" -name skinsolveConfigVersion.cmake)"
check "static library installed" test -n "$(find "$P" -name libskinsolve.a)"
check "shared library installed" test -n "$(find "$P" -name 'libskinsolve.so*')"
[ -n "$pc" ] && [ -n "$cfg" ] || { echo "$pass passed, $((fail))  failed"; exit 1; }
libdir="$(dirname "$(dirname "$pc")")"
check "installed CLI runs" sh -c "LD_LIBRARY_PATH='$libdir' '$P/bin/skinsolve' --version >/dev/null"

# The sanitized build's libraries need the sanitizer runtime in the program too.
SAN=""
grep -q '^SKS_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SAN="-fsanitize=address,undefined"

cat >"$T/hello.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <skinsolve/skinsolve.h>
int main(void) {
  sks_model m;
  memset(&m, 0, sizeof m);
  sks_findings f;
  sks_error err;
  if (sks_check(&m, NULL, &f, &err) != SKS_OK) return 1;
  printf("skinsolve %s: %zu findings, %s\n", SKS_VERSION_STRING, f.count,
         sks_finding_kind_name(SKS_FINDING_WEIGHT_SUM));
  sks_findings_free(&f);
  sks_model_free(&m);
  return 0;
}
EOF
want="skinsolve 0.1.0: 0 findings, weight_sum"

# 1. pkg-config (shared library)
export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
check "pkg-config knows skinsolve" pkg-config --exists skinsolve
check "pkg-config version" [ "$(pkg-config --modversion skinsolve)" = "0.1.0" ]
check "pkg-config cflags point into the prefix" sh -c "pkg-config --cflags skinsolve | grep -q -- '$P'"
if cc $SAN -std=c11 -o "$T/hello_pc" "$T/hello.c" $(pkg-config --cflags --libs skinsolve) 2>"$T/cc.log"; then
  ok
  check "pkg-config program runs" [ "$(LD_LIBRARY_PATH="$libdir" "$T/hello_pc")" = "$want" ]
else
  bad "compile with pkg-config"; cat "$T/cc.log" >&2
fi
# static link through pkg-config --static
if cc $SAN -std=c11 -o "$T/hello_static" "$T/hello.c" $(pkg-config --cflags skinsolve) \
     "$libdir/libskinsolve.a" $(pkg-config --static --libs-only-other --libs-only-l skinsolve | sed 's/-lskinsolve//') 2>"$T/cc.log"; then
  ok
  check "static program runs" [ "$("$T/hello_static")" = "$want" ]
else
  bad "static link with pkg-config --static"; cat "$T/cc.log" >&2
fi

# 2. find_package(skinsolve) (static library target skinsolve::skinsolve)
mkdir -p "$T/proj"
cp "$T/hello.c" "$T/proj/"
cat >"$T/proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(hello C)
find_package(skinsolve 0.1 REQUIRED)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE skinsolve::skinsolve)
EOF
if cmake -S "$T/proj" -B "$T/proj/build" -DCMAKE_PREFIX_PATH="$P" \
     -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >"$T/cmake.log" 2>&1 &&
   cmake --build "$T/proj/build" >>"$T/cmake.log" 2>&1; then
  ok
  check "find_package program runs" [ "$("$T/proj/build/hello")" = "$want" ]
else
  bad "build with find_package(skinsolve)"; tail -30 "$T/cmake.log" >&2
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

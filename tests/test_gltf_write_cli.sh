#!/usr/bin/env bash
# skinsolve reweight end to end: usage and exit codes, then real rigs made
# into bake targets and checked by the Khronos glTF validator (0 errors).
# Arg 1: the skinsolve CLI. Exit 77 (skip) when the validator is not installed
# (after running every check that does not need it).
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
data="${SKS_SHARED_DATA:-$src/../shared/data}"
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want, description, command...
  local want="$1" what="$2"; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, want $want: $(cat "$tmp/err")"; fi
}

have_validator=1
if [ ! -f "$src/tools/node_modules/gltf-validator/package.json" ] || ! command -v node > /dev/null; then
  have_validator=0
  echo "SKIP part: glTF validator not installed (run \`cd tools && npm install\`)"
fi
validate() {
  [ "$have_validator" = 1 ] || return 0
  if node "$src/tools/validate_gltf.mjs" "$1"; then ok; else bad "validator errors in $1"; fi
}

# the validator wrapper itself: errors -> exit 1 (rotation component 2 is out of range)
if [ "$have_validator" = 1 ]; then
  printf '{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"rotation":[0,0,0,2]}]}' > "$tmp/bad.gltf"
  expect_rc 1 "validator on a bad file" node "$src/tools/validate_gltf.mjs" "$tmp/bad.gltf"
  grep -q "error VALUE_NOT_IN_RANGE" "$tmp/out" && ok || bad "validator message: $(cat "$tmp/out")"
  expect_rc 2 "validator without a file" node "$src/tools/validate_gltf.mjs"
fi

expect_rc 0 "reweight --help" "$cli" reweight --help
grep -q "usage: skinsolve reweight FILE -o OUT.glb" "$tmp/out" && ok || bad "--help text"
expect_rc 2 "no arguments" "$cli" reweight
expect_rc 2 "no output" "$cli" reweight some.glb
expect_rc 2 "unknown option" "$cli" reweight some.glb -o x.glb --bogus
expect_rc 1 "missing input" "$cli" reweight "$tmp/missing.glb" -o "$tmp/x.glb"
grep -q "missing.glb" "$tmp/err" && ok || bad "missing input message names the file: $(cat "$tmp/err")"

fox="$data/Fox/Fox.glb"
if [ -f "$fox" ]; then
  expect_rc 3 "unwritable output" "$cli" reweight "$fox" -o "$tmp/no/such/dir/out.glb"
  expect_rc 0 "reweight Fox" "$cli" reweight "$fox" -o "$tmp/fox_target.glb"
  grep -q "26 joints (was 26), 22 weighted, 1728 skinned vertices, 3 clips removed" "$tmp/out" && ok \
    || bad "Fox summary: $(cat "$tmp/out")"
  validate "$tmp/fox_target.glb"
  expect_rc 0 "reweight Fox --coarsen --rename" "$cli" reweight "$fox" -o "$tmp/fox_coarse.glb" --coarsen --rename
  grep -q "14 joints (was 26), 10 weighted" "$tmp/out" && ok || bad "Fox coarse summary: $(cat "$tmp/out")"
  validate "$tmp/fox_coarse.glb"
  # never overwrite an input: -o naming the input (even through another spelling) is refused
  cp "$tmp/fox_coarse.glb" "$tmp/input_copy.glb"
  before=$(cksum < "$tmp/input_copy.glb")
  expect_rc 2 "reweight -o INPUT" "$cli" reweight "$tmp/input_copy.glb" -o "$tmp/./input_copy.glb"
  [ "$(cksum < "$tmp/input_copy.glb")" = "$before" ] && ok || bad "reweight overwrote its input"
  # the output is itself a valid input
  expect_rc 0 "reweight the reweighted Fox" "$cli" reweight "$tmp/fox_coarse.glb" -o "$tmp/fox_again.glb"
  validate "$tmp/fox_again.glb"
else
  echo "SKIP part: $fox not found"
fi
tw="$models/X/Testwuson.X"
if [ -f "$tw" ]; then
  expect_rc 0 "reweight Testwuson --coarsen" "$cli" reweight "$tw" -o "$tmp/tw.glb" --coarsen
  validate "$tmp/tw.glb"
else
  echo "SKIP part: $tw not found (install assimp-testmodels)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] || exit 1
[ "$have_validator" = 1 ] || exit 77
exit 0

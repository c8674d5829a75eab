#!/usr/bin/env bash
# skinsolve refit end to end: table, --json (before / after, per-joint
# diagnosis), -o (Khronos validator when tools/node_modules is installed),
# bake onto the output reproduces refit's numbers, --report, bad input
# (exit 1, no output file), usage errors (exit 2). Arg 1 = the skinsolve binary.
set -u
cli="$1"
data="${SKS_SHARED_DATA:-}"
src="${SKS_SOURCE_DIR:-.}"
fox="$data/Fox/Fox.glb"
target="$data/fox_targets/fox_rig_autoweights.glb"
if [ ! -f "$fox" ] || [ ! -f "$target" ]; then echo "SKIP: $fox or $target missing"; exit 77; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
expect_rc() { local want="$1" what="$2"; shift 2; "$@" >"$tmp/out.log" 2>&1; local rc=$?
  [ "$rc" = "$want" ] && ok || { bad "$what: exit $rc, want $want"; cat "$tmp/out.log"; }; }

"$cli" refit --help | grep -q -- "--holdout NAME" && ok || bad "--help lacks --holdout"
"$cli" --help | grep -q "refit" && ok || bad "top-level help lacks refit"
expect_rc 2 "no -o" "$cli" refit --source "$fox" --target "$target"
expect_rc 2 "unknown option" "$cli" refit --source "$fox" --target "$target" -o "$tmp/a.glb" --frobnicate
expect_rc 2 "--max-influences 0" "$cli" refit --source "$fox" --target "$target" -o "$tmp/a.glb" --max-influences 0
expect_rc 2 "--max-influences 9" "$cli" refit --source "$fox" --target "$target" -o "$tmp/a.glb" --max-influences 9
expect_rc 2 "output is the target" "$cli" refit --source "$fox" --target "$target" -o "$target"
expect_rc 1 "unknown holdout" "$cli" refit --source "$fox" --target "$target" -o "$tmp/a.glb" --holdout Nope
grep -q "Nope" "$tmp/out.log" && ok || bad "unknown holdout message does not name it"
[ ! -e "$tmp/a.glb" ] && ok || bad "a failed refit left $tmp/a.glb"
# a rig of rigid parts only bakes, but has no weights to refit: refused, nothing written
cube="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}/3DS/RotatingCube.3DS"
if [ -f "$cube" ]; then
  expect_rc 1 "rigid-only target" "$cli" refit --source "$cube" --target "$cube" -o "$tmp/c.glb"
  grep -q "no weights to refit" "$tmp/out.log" && ok || bad "rigid-only refit message: $(cat "$tmp/out.log")"
  [ ! -e "$tmp/c.glb" ] && ok || bad "a refused refit left $tmp/c.glb"
fi

# one fitting clip, one round, two influences: fast also under ASan; clip
# names as words, any case ('walk' is the clip Walk, as in bake and pose)
json="$("$cli" refit --source "$fox" --target "$target" --clip walk --holdout run --rounds 1 \
        --max-influences 2 -o "$tmp/r.glb" --json --report "$tmp/r.html" 2>"$tmp/err.log")" && ok || bad "refit --json exit"
grep -q "refit round 1/1" "$tmp/err.log" && ok || bad "no progress on stderr"
flat="$(echo "$json" | tr -d ' \n\t')"
for k in '"held_out":true' '"held_out":false' '"quality_before":' '"quality_after":' '"joints_before":' \
         '"joints_after":' '"share_pct":' '"worst_vertex":' '"round_fit_quality":' '"max_influences_after":2'; do
  echo "$flat" | grep -q "$k" && ok || bad "--json lacks $k"
done
[ -s "$tmp/r.glb" ] && ok || bad "no output file"
grep -q "<canvas" "$tmp/r.html" && ok || bad "report has no viewer"
if [ -d "$src/tools/node_modules/gltf-validator" ] && command -v node >/dev/null; then
  node "$src/tools/validate_gltf.mjs" "$tmp/r.glb" >/dev/null && ok || bad "gltf-validator errors in r.glb"
else
  echo "note: gltf-validator not installed (scripts/deps.sh): validation skipped"
fi
# a bake onto the output reproduces refit's "after" numbers (4 decimals)
after="$(echo "$flat" | grep -o '"name":"[^"]*","held_out":[a-z]*,"frames":[0-9]*,"quality_before":[^,]*,"quality_after":[^,]*' |
        awk -F'[:,]' '{gsub(/"/, "", $2); printf "%s=%.4f ", $2, $10}')"
bake="$("$cli" bake --source "$fox" --target "$tmp/r.glb" --clip Walk --clip Run --json | tr -d ' \n\t' |
        grep -o '"name":"[^"]*","frames":[0-9]*,"quality":[^,]*' | awk -F'[:,]' '{gsub(/"/, "", $2); printf "%s=%.4f ", $2, $6}')"
[ -n "$after" ] && [ "$after" = "$bake" ] && ok || bad "bake onto the refit gives '$bake', refit said '$after'"
echo "refit: $after; bake: $bake"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

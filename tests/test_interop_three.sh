#!/usr/bin/env bash
# Every glTF writer's output (repair, reweight, bake -o, control -o) on Fox,
# fox_rig_autoweights and X/Testwuson.X, checked where people use it:
#  - Khronos validator: 0 errors; no warning the input does not have itself
#    (Fox's own NODE_SKINNED_MESH_NON_ROOT is kept with its hierarchy);
#    0 warnings for outputs converted from .X;
#  - three.js (tools/three_check.mjs): rest pose and every clip at 3 times
#    match `skinsolve pose` of the same file within 0.05 %D; node, material
#    and texture names / presence equal the glTF input's; no warning.
# Arg 1: the skinsolve CLI. Exit 77 when node, three or the validator is
# missing, or no input model is.
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
if ! command -v node > /dev/null || [ ! -f "$src/tools/node_modules/three/package.json" ] ||
   [ ! -f "$src/tools/node_modules/gltf-validator/package.json" ]; then
  echo "SKIP: node, three or gltf-validator not installed (run scripts/deps.sh or \`cd tools && npm install\`)"
  exit 77
fi
fox="$data/Fox/Fox.glb"; auto="$data/fox_targets/fox_rig_autoweights.glb"; wuson="$models/X/Testwuson.X"
for f in "$fox" "$auto" "$wuson"; do
  [ -f "$f" ] || { echo "SKIP: $f not found"; exit 77; }
done

run() { # description, command...
  local what="$1"; shift
  if "$@" > "$tmp/out" 2> "$tmp/err"; then ok; else bad "$what: exit $?: $(tail -3 "$tmp/err")"; return 1; fi
}

# warning codes of a file (sorted, unique)
warnings() { node "$src/tools/validate_gltf.mjs" "$1" --max 1000 | sed -n 's/^  warning \([A-Z_]*\):.*/\1/p' | sort -u; }

validate() { # out, input-or-empty
  local out="$1" in="$2"
  if node "$src/tools/validate_gltf.mjs" "$out" > "$tmp/val"; then ok; else bad "validator errors in $out: $(head -5 "$tmp/val")"; fi
  local extra
  if [ -n "$in" ]; then extra=$(comm -23 <(warnings "$out") <(warnings "$in")); else extra=$(warnings "$out"); fi
  if [ -z "$extra" ]; then ok; else bad "$(basename "$out"): validator warnings the input does not have: $extra"; fi
}

diag() { "$cli" info "$1" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).diagonal))'; }
clips() { "$cli" info "$1" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const c of JSON.parse(s).clips||[])console.log(c.name+"\t"+c.duration)})'; }

three() { # out, ref-or-empty
  local out="$1" ref="$2" d args=()
  d=$(diag "$out")
  "$cli" pose "$out" -o "$tmp/rest.f32" > /dev/null || { bad "pose rest $out"; return; }
  args+=(--rest "$tmp/rest.f32")
  local k=0
  while IFS=$'\t' read -r name dur; do
    [ -n "$name" ] || continue
    for frac in 0.13 0.5 0.87; do
      t=$(awk -v d="$dur" -v f="$frac" 'BEGIN{printf "%.6f", d*f}')
      k=$((k + 1))
      "$cli" pose "$out" --clip "$name" --time "$t" -o "$tmp/s$k.f32" > /dev/null || { bad "pose $out $name $t"; continue; }
      args+=(--sample "$name" "$t" "$tmp/s$k.f32")
    done
  done < <(clips "$out")
  [ -n "$ref" ] && args+=(--ref "$ref")
  if node "$src/tools/three_check.mjs" "$out" --diag "$d" "${args[@]}" > "$tmp/three" 2>&1; then ok
  else bad "three.js: $(grep -v '^ok' "$tmp/three" | head -5)"; fi
  grep -c '^ok' "$tmp/three" | xargs -I{} echo "  $(basename "$out"): three.js {} checks ok, $(tail -1 "$tmp/three" | cut -d: -f2-)"
}

check() { # out, glTF-input-or-empty
  validate "$1" "$2"
  three "$1" "$2"
}

run "repair Fox" "$cli" repair "$fox" -o "$tmp/fox_repair.glb" && check "$tmp/fox_repair.glb" "$fox"
run "reweight Fox" "$cli" reweight "$fox" -o "$tmp/fox_reweight.glb" && check "$tmp/fox_reweight.glb" "$fox"
run "bake Fox onto autoweights" "$cli" bake --source "$fox" --target "$auto" --clip Walk --clip Survey -o "$tmp/auto_bake.glb" &&
  check "$tmp/auto_bake.glb" "$auto"
run "control Fox -o" "$cli" control "$fox" --clip Survey -o "$tmp/fox_control.glb" && check "$tmp/fox_control.glb" "$fox"
run "repair autoweights" "$cli" repair "$auto" -o "$tmp/auto_repair.glb" && check "$tmp/auto_repair.glb" "$auto"
run "repair Testwuson" "$cli" repair "$wuson" -o "$tmp/wuson_repair.glb" && check "$tmp/wuson_repair.glb" ""
run "reweight Testwuson" "$cli" reweight "$wuson" -o "$tmp/wuson_reweight.glb" && check "$tmp/wuson_reweight.glb" ""
run "control Testwuson -o" "$cli" control "$wuson" --clip Wuson_Run -o "$tmp/wuson_control.glb" && check "$tmp/wuson_control.glb" ""
run "bake Testwuson onto its reweight" "$cli" bake --source "$wuson" --target "$tmp/wuson_reweight.glb" --clip Wuson_Walk -o "$tmp/wuson_bake.glb" &&
  check "$tmp/wuson_bake.glb" "$tmp/wuson_reweight.glb"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

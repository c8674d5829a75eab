#!/usr/bin/env bash
# The glTF writers' outputs (repair, reweight, bake -o, control -o) on Fox,
# fox_rig_autoweights and X/Testwuson.X imported in Blender (Debian's
# blender, headless, tools/blender_check.py): Rest Position matches
# `skinsolve pose --bind`, Pose Position matches `skinsolve pose`, every
# clip's action at 5 times (0, 1/4, 1/2, 3/4 of its duration and its end)
# matches `skinsolve pose --clip` (0.05 %D; Testwuson's outputs included); node
# names, materials, base colour textures and images are there; the importer
# prints no warning. Arg 1: the skinsolve CLI. Exit 77 when blender is not
# installed (scripts/deps.sh installs it) or an input model is missing.
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
if ! command -v blender > /dev/null; then
  echo "SKIP: blender not installed (scripts/deps.sh installs Debian's blender)"
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

field() { "$cli" info "$1" --json | python3 -c "import json,sys; d=json.load(sys.stdin); $2"; }

blend() { # out [--clips-not-asserted]
  local out="$1" d args=("${@:2}")
  d=$(field "$out" 'print(d["diagonal"])')
  "$cli" pose "$out" --bind -o "$tmp/bind.f32" > /dev/null || { bad "pose --bind $out"; return; }
  "$cli" pose "$out" -o "$tmp/rest.f32" > /dev/null || { bad "pose $out"; return; }
  local k=0
  while IFS=$'\t' read -r name dur; do
    [ -n "$name" ] || continue
    for frac in 0 0.25 0.5 0.75 1; do
      t=$(awk -v d="$dur" -v f="$frac" 'BEGIN{printf "%.6f", d*f}')
      k=$((k + 1))
      "$cli" pose "$out" --clip "$name" --time "$t" -o "$tmp/s$k.f32" > /dev/null || { bad "pose $out $name $t"; continue; }
      args+=(--sample "$name" "$t" "$tmp/s$k.f32")
    done
  done < <(field "$out" 'print("\n".join(c["name"]+"\t"+str(c["duration"]) for c in d.get("clips") or []))')
  if blender -b --factory-startup --python "$src/tools/blender_check.py" -- "$out" --diag "$d" \
       --bind "$tmp/bind.f32" --rest "$tmp/rest.f32" "${args[@]}" > "$tmp/blender" 2>&1; then ok
  else bad "blender: $(grep -E '^FAIL|Error|Traceback' "$tmp/blender" | head -5)"; fi
  echo "  $(basename "$out"): Blender $(grep -c '^ok ' "$tmp/blender") checks ok, $(grep -c '^FAIL' "$tmp/blender") failed"
  grep -E '^(ok|FAIL|KNOWN) ' "$tmp/blender" | grep -E 'Rest Position|FAIL|KNOWN' | sed 's/^/    /'
  local n worst
  n=$(grep -cE '^(ok|FAIL) .* t=' "$tmp/blender")
  worst=$(grep -E '^(ok|FAIL) .* t=' "$tmp/blender" | grep -oE 'worst [0-9.e+-]+' | sort -k2 -g | tail -1)
  [ "$n" = 0 ] || echo "    clips: $n samples, $worst %D"
}

run "repair Fox" "$cli" repair "$fox" -o "$tmp/fox_repair.glb" && blend "$tmp/fox_repair.glb"
run "reweight Fox" "$cli" reweight "$fox" -o "$tmp/fox_reweight.glb" && blend "$tmp/fox_reweight.glb"
run "bake Fox onto autoweights" "$cli" bake --source "$fox" --target "$auto" --clip Walk -o "$tmp/auto_bake.glb" &&
  blend "$tmp/auto_bake.glb"
run "control Fox -o" "$cli" control "$fox" --clip Survey -o "$tmp/fox_control.glb" && blend "$tmp/fox_control.glb"
run "repair Testwuson" "$cli" repair "$wuson" -o "$tmp/wuson_repair.glb" && blend "$tmp/wuson_repair.glb"
run "reweight Testwuson" "$cli" reweight "$wuson" -o "$tmp/wuson_reweight.glb" && blend "$tmp/wuson_reweight.glb"
run "control Testwuson -o" "$cli" control "$wuson" --clip Wuson_Run -o "$tmp/wuson_control.glb" && blend "$tmp/wuson_control.glb"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

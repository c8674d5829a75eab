#!/usr/bin/env bash
# A skinned FBX with an animated blend shape (issue 8), made in the test by
# Debian's Blender (tests/blender/fbx_blendshape.py: a two-bone box with the
# shape key 'bulge', animated 0 -> 1 over the first half second while the
# bones stay at rest, then the tip bone bends 60 degrees):
#  1. `info --json`: one skinned part with the morph target 'bulge', a skin of
#     the two bones, one clip with a morph track of 1 weight;
#  2. `pose` at 0, 0.25, 0.5, 0.75 and 1 s matches Blender's own evaluated
#     mesh at frames 0, 6, 12, 18, 24 within 0.05 %D (point sets: Assimp
#     splits the FBX's vertices per corner; Blender's Z-up metres map to the
#     file's Y-up centimetres by the FBX exporter's axis and unit conversion,
#     found from the rest pose), and every animated pose differs from the rest
#     by more than 1 %D (the check cannot pass on a pose that ignores them);
#  3. `repair -o` (Assimp -> glTF from scratch) keeps the shape key and its
#     weights animation: the .glb poses the same as the FBX, the Khronos
#     validator reports 0 errors and 0 warnings, and three.js agrees with
#     `skinsolve pose` at 3 times within 0.05 %D (tools/three_check.mjs).
# Exit 77 when blender is not installed.
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
command -v blender > /dev/null || { echo "SKIP: blender not installed (apt-get install blender)"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

blender -b --factory-startup --python "$src/tests/blender/fbx_blendshape.py" -- "$tmp/bs.fbx" "$tmp/bs.json" \
  > "$tmp/blender.out" 2>&1
[ -s "$tmp/bs.fbx" ] && [ -s "$tmp/bs.json" ] || { echo "FAIL: Blender did not write the FBX: $(tail -5 "$tmp/blender.out")"; exit 1; }

# 1. what the FBX gives
if "$cli" info "$tmp/bs.fbx" --json > "$tmp/info.json" 2> "$tmp/err" && python3 - "$tmp/info.json" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p, c = d['parts'], d['clips']
errs = []
if len(p) != 1 or p[0].get('morph_targets') != ['bulge'] or p[0].get('skin') is None:
    errs.append('parts %s' % [(x.get('name'), x.get('skin'), x.get('morph_targets')) for x in p])
if len(c) != 1 or [(m['weights'], m['interpolation']) for m in c[0].get('morph_tracks', [])] != [(1, 'LINEAR')] \
        or abs(c[0]['duration'] - 1.0) > 1e-4:
    errs.append('clips %s' % c)
for e in errs: print('  info: ' + e)
print('  info: part %s morph targets %s; clip %s %g s, morph tracks %s' % (p[0].get('name'), p[0].get('morph_targets'),
      c[0]['name'], c[0]['duration'], c[0].get('morph_tracks')))
sys.exit(1 if errs else 0)
PY
then ok; else bad "info --json bs.fbx: $(cat "$tmp/err")"; fi
clip=$(python3 -c "import json; print(json.load(open('$tmp/info.json'))['clips'][0]['name'])" 2> /dev/null)

# 2. skinsolve pose against Blender's evaluated mesh
cat > "$tmp/cmp.py" << 'PY'
import json, struct, sys
exp = json.load(open(sys.argv[1]))['frames']
tag = sys.argv[2]; t = sys.argv[3]
def load(p):
    d = open(p, 'rb').read(); v = struct.unpack('<%df' % (len(d) // 4), d)
    return [v[i:i + 3] for i in range(0, len(v), 3)]
def dist(a, b): return sum((a[i] - b[i]) ** 2 for i in range(3)) ** 0.5
def haus(A, B): return max(max(min(dist(a, b) for b in B) for a in A), max(min(dist(a, b) for a in A) for b in B))
def diag(P): return dist([min(p[i] for p in P) for i in range(3)], [max(p[i] for p in P) for i in range(3)])
maps = {'Y-up': lambda p: (p[0], p[2], -p[1]), 'as is': lambda p: tuple(p)}
S0 = load('%s/%s-0.f32' % (t, tag)); s = diag(S0) / diag(exp['0'])
best = min(maps, key=lambda k: haus(S0, [[s * c for c in maps[k](p)] for p in exp['0']]))
D = diag(S0); errs = []
for f in ('0', '6', '12', '18', '24'):
    S = load('%s/%s-%s.f32' % (t, tag, f)); B = [[s * c for c in maps[best](p)] for p in exp[f]]
    e, moved = 100 * haus(S, B) / D, 100 * haus(S, S0) / D
    print('  %s frame %s: %.2g %%D from Blender (moved %.3g %%D from frame 0)' % (tag, f, e, moved))
    if e > 0.05: errs.append(f)
    if f != '0' and moved < 1: errs.append(f + ' (does not move)')
print('  %s: Blender -> file: x%.6g, axes %s, D %.6g' % (tag, s, best, D))
sys.exit(1 if errs else 0)
PY
pose_frames() { # file tag
  for f in 0 6 12 18 24; do
    "$cli" pose "$1" --clip "$clip" --time "$(python3 -c "print($f / 24)")" -o "$tmp/$2-$f.f32" > /dev/null 2> "$tmp/err" ||
      bad "pose $1 at frame $f: $(cat "$tmp/err")"
  done
  if python3 "$tmp/cmp.py" "$tmp/bs.json" "$2" "$tmp"; then ok; else bad "$2: pose differs from Blender's evaluated mesh"; fi
}
pose_frames "$tmp/bs.fbx" fbx

# 3. written as glTF from scratch
if "$cli" repair "$tmp/bs.fbx" -o "$tmp/bs.glb" > /dev/null 2> "$tmp/err"; then ok
else bad "repair bs.fbx: $(cat "$tmp/err")"; fi
pose_frames "$tmp/bs.glb" glb
for f in 6 18; do
  if cmp -s "$tmp/fbx-$f.f32" "$tmp/glb-$f.f32"; then ok; else bad "bs.glb poses other positions than bs.fbx at frame $f"; fi
done
if command -v node > /dev/null && [ -f "$src/tools/node_modules/gltf-validator/package.json" ] &&
   [ -f "$src/tools/node_modules/three/package.json" ]; then
  node "$src/tools/validate_gltf.mjs" "$tmp/bs.glb" --json > "$tmp/val.json" 2> /dev/null
  if python3 -c "
import json,sys; r=json.load(open('$tmp/val.json'))['issues']
print('  bs.glb: validator %d errors, %d warnings' % (r['numErrors'], r['numWarnings']))
sys.exit(0 if r['numErrors'] == 0 and r['numWarnings'] == 0 else 1)"; then ok
  else bad "validator on bs.glb: $(head -c 800 "$tmp/val.json")"; fi
  diag=$("$cli" info "$tmp/bs.glb" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['diagonal'])")
  "$cli" pose "$tmp/bs.glb" -o "$tmp/rest.f32" > /dev/null 2>&1
  if node "$src/tools/three_check.mjs" "$tmp/bs.glb" --diag "$diag" --rest "$tmp/rest.f32" \
       --sample "$clip" 0.25 "$tmp/glb-6.f32" --sample "$clip" 0.5 "$tmp/glb-12.f32" \
       --sample "$clip" 0.75 "$tmp/glb-18.f32" > "$tmp/three.out" 2>&1; then ok; sed 's/^/  three.js: /' "$tmp/three.out"
  else bad "three.js on bs.glb: $(cat "$tmp/three.out")"; fi
else
  echo "note: node, gltf-validator or three not installed (tools/node_modules): validator / three.js checks skipped"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# An FBX texture placement becomes KHR_texture_transform (issue 8, item 1):
# Debian's Blender builds two textured planes whose materials sample the
# texture through a Mapping node (tests/blender/fbx_uv_mapping.py) and
# exports them as FBX and as its own glTF. `skinsolve repair mapping.fbx -o
# out.glb` (Assimp -> glTF from scratch) must write, for each material, the
# KHR_texture_transform Blender's glTF exporter wrote for the same node
# (offset, rotation, scale within 1e-5; FBX stores scale and rotation
# inverted, which the import undoes), name KHR_texture_transform in
# extensionsUsed, and the Khronos validator must report 0 errors and 0
# warnings. Exit 77 when blender is not installed.
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
command -v blender > /dev/null || { echo "SKIP: blender not installed (apt-get install blender)"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

blender -b --factory-startup --python "$src/tests/blender/fbx_uv_mapping.py" -- "$tmp" > "$tmp/blender.out" 2>&1
[ -s "$tmp/mapping.fbx" ] && [ -s "$tmp/mapping_blender.gltf" ] ||
  { echo "FAIL: Blender did not write the files: $(tail -5 "$tmp/blender.out")"; exit 1; }

if "$cli" repair "$tmp/mapping.fbx" -o "$tmp/out.glb" > "$tmp/repair.out" 2>&1; then ok
else bad "repair mapping.fbx: $(cat "$tmp/repair.out")"; fi

if [ -s "$tmp/out.glb" ] && python3 - "$tmp/mapping_blender.gltf" "$tmp/out.glb" << 'PY'
import json, struct, sys
ref = json.load(open(sys.argv[1]))
d = open(sys.argv[2], 'rb').read()
doc = json.loads(d[20:20 + struct.unpack('<I', d[12:16])[0]])
def tt(m):
    info = m.get('pbrMetallicRoughness', {}).get('baseColorTexture')
    if info is None: return None
    t = info.get('extensions', {}).get('KHR_texture_transform', {})
    return t.get('offset', [0, 0]) + [t.get('rotation', 0)] + t.get('scale', [1, 1])
errs = []
want = {m['name']: tt(m) for m in ref['materials']}
got = {m.get('name'): tt(m) for m in doc.get('materials', [])}
if sorted(want) != ['placed', 'tiled']: errs.append('Blender wrote materials %s' % sorted(want))
for name, w in sorted(want.items()):
    g = got.get(name)
    print('  %s: Blender glTF %s, skinsolve %s' % (name, ['%.6f' % v for v in w], g and ['%.6f' % v for v in g]))
    if g is None: errs.append('%s: no base colour texture' % name); continue
    if any(abs(a - b) > 1e-5 for a, b in zip(g, w)): errs.append('%s: transform %s, Blender %s' % (name, g, w))
if w == [0, 0, 0, 1, 1]: errs.append('reference transform is identity: the check cannot fail')
if 'KHR_texture_transform' not in doc.get('extensionsUsed', []): errs.append('extensionsUsed %s' % doc.get('extensionsUsed'))
for e in errs: print('  ' + e)
sys.exit(1 if errs else 0)
PY
then ok; else bad "out.glb's texture transforms differ from Blender's glTF"; fi

if command -v node > /dev/null && [ -f "$src/tools/node_modules/gltf-validator/package.json" ]; then
  node "$src/tools/validate_gltf.mjs" "$tmp/out.glb" --json > "$tmp/val.json" 2> /dev/null
  if python3 -c "
import json,sys; r=json.load(open('$tmp/val.json'))['issues']
print('  out.glb: validator %d errors, %d warnings' % (r['numErrors'], r['numWarnings']))
sys.exit(0 if r['numErrors'] == 0 and r['numWarnings'] == 0 else 1)"; then ok
  else bad "validator on out.glb: $(head -c 600 "$tmp/val.json")"; fi
else
  echo "  validator: node or tools/node_modules/gltf-validator absent — not run"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

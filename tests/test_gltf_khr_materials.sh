#!/usr/bin/env bash
# glTF -> glTF keeps the material extensions (issue 8): a generated skinned
# triangle whose material uses KHR_texture_transform on its base colour
# texture and KHR_materials_clearcoat / transmission / specular / ior /
# volume / sheen (with extras, a sampler and an embedded PNG) is written by
# `repair`, `reweight`, `reweight --coarsen` and `bake -o`: each output's
# materials, textures, samplers, extensionsUsed and image bytes equal the
# input's, and the Khronos validator reports 0 errors and 0 warnings.
# (A file read through Assimp is written from scratch: Assimp 5.2.5 gives
# none of these extensions, so they are not expected there.)
# Arg 1: the skinsolve CLI.
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

python3 - "$tmp/khr.gltf" << 'PY'
import base64, json, struct, sys, zlib
def png(w=2, h=2):
    raw = b''.join(b'\x00' + b'\xff\x80\x00' * w for _ in range(h))
    ch = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + ch(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            ch(b'IDAT', zlib.compress(raw)) + ch(b'IEND', b''))
b = bytearray()
def add(fmt, vals):
    while len(b) % 4: b.append(0)
    o = len(b); b.extend(struct.pack('<' + fmt * len(vals), *vals)); return o, len(b) - o
views, accs = [], []
def acc(fmt, vals, count, typ, ctype=5126, target=34962, minmax=False):
    o, n = add(fmt, vals)
    views.append({'buffer': 0, 'byteOffset': o, 'byteLength': n, **({'target': target} if target else {})})
    a = {'bufferView': len(views) - 1, 'componentType': ctype, 'count': count, 'type': typ}
    if minmax:
        k = len(vals) // count
        a['min'] = [min(vals[i::k]) for i in range(k)]; a['max'] = [max(vals[i::k]) for i in range(k)]
    accs.append(a); return len(accs) - 1
pos = acc('f', [0.0, 0, 0, 1, 0, 0, 0, 1, 0], 3, 'VEC3', minmax=True)
uv = acc('f', [0.0, 0, 1, 0, 0, 1], 3, 'VEC2')
jnt = acc('B', [0] * 12, 3, 'VEC4', 5121)
wgt = acc('f', [1.0, 0, 0, 0] * 3, 3, 'VEC4')
idx = acc('H', [0, 1, 2, 0], 3, 'SCALAR', 5123, 34963); accs[idx]['count'] = 3
ibm = acc('f', [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], 1, 'MAT4', target=None)
tin = acc('f', [0.0, 1.0], 2, 'SCALAR', target=None, minmax=True)
rot = acc('f', [0.0, 0, 0, 1, 0, 0, 0.3826834, 0.9238795], 2, 'VEC4', target=None)
tt = {'KHR_texture_transform': {'offset': [0.25, 0.5], 'rotation': 0.3, 'scale': [2, 3]}}
ext = {'KHR_materials_clearcoat': {'clearcoatFactor': 0.7, 'clearcoatRoughnessFactor': 0.2},
       'KHR_materials_transmission': {'transmissionFactor': 0.5},
       'KHR_materials_specular': {'specularFactor': 0.8, 'specularColorFactor': [1, 0.5, 0.25]},
       'KHR_materials_ior': {'ior': 1.7},
       'KHR_materials_volume': {'thicknessFactor': 0.1, 'attenuationDistance': 2, 'attenuationColor': [1, 0.9, 0.8]},
       'KHR_materials_sheen': {'sheenColorFactor': [0.5, 0.4, 0.3], 'sheenRoughnessFactor': 0.6}}
doc = {'asset': {'version': '2.0'}, 'scene': 0, 'scenes': [{'nodes': [0, 1]}],
       'nodes': [{'name': 'tri', 'mesh': 0, 'skin': 0}, {'name': 'bone'}],
       'skins': [{'joints': [1], 'inverseBindMatrices': ibm}],
       'meshes': [{'name': 'tri', 'primitives': [{'attributes': {'POSITION': pos, 'TEXCOORD_0': uv, 'JOINTS_0': jnt,
                                                               'WEIGHTS_0': wgt}, 'indices': idx, 'material': 0}]}],
       'materials': [{'name': 'fancy', 'extensions': ext, 'extras': {'artist': 'x'},
                      'pbrMetallicRoughness': {'baseColorTexture': {'index': 0, 'extensions': tt},
                                               'roughnessFactor': 0.4}}],
       'textures': [{'source': 0, 'sampler': 0}], 'samplers': [{'magFilter': 9729, 'wrapS': 33648}],
       'images': [{'mimeType': 'image/png', 'uri': 'data:image/png;base64,' + base64.b64encode(png()).decode()}],
       'animations': [{'name': 'turn', 'samplers': [{'input': tin, 'output': rot}],
                       'channels': [{'sampler': 0, 'target': {'node': 1, 'path': 'rotation'}}]}],
       'extensionsUsed': sorted(['KHR_texture_transform'] + list(ext)),
       'accessors': accs, 'bufferViews': views,
       'buffers': [{'byteLength': len(b), 'uri': 'data:application/octet-stream;base64,' + base64.b64encode(bytes(b)).decode()}]}
json.dump(doc, open(sys.argv[1], 'w'))
PY

cat > "$tmp/same.py" << 'PY'
import base64, json, struct, sys
def load(p):
    d = open(p, 'rb').read()
    jl = struct.unpack('<I', d[12:16])[0]; return json.loads(d[20:20 + jl]), d[20 + jl + 8:]
src = json.load(open(sys.argv[1])); out, binc = load(sys.argv[2])
errs = []
for k in ('materials', 'textures', 'samplers'):
    if out.get(k) != src.get(k): errs.append('%s: %s' % (k, json.dumps(out.get(k))[:400]))
if sorted(out.get('extensionsUsed', [])) != src['extensionsUsed']: errs.append('extensionsUsed %s' % out.get('extensionsUsed'))
want = base64.b64decode(src['images'][0]['uri'].split(',')[1])
im = (out.get('images') or [{}])[0]; v = out['bufferViews'][im['bufferView']] if 'bufferView' in im else None
got = binc[v.get('byteOffset', 0):v.get('byteOffset', 0) + v['byteLength']] if v else None
if got != want or im.get('mimeType') != 'image/png': errs.append('image bytes / mime type differ')
for e in errs: print('  %s: %s' % (sys.argv[2].split('/')[-1], e))
sys.exit(1 if errs else 0)
PY
validator=0
if command -v node > /dev/null && [ -f "$src/tools/node_modules/gltf-validator/package.json" ]; then validator=1
else echo "note: gltf-validator not installed (tools/node_modules): validation skipped"; fi
check() { # out.glb
  if python3 "$tmp/same.py" "$tmp/khr.gltf" "$1"; then ok; else bad "$(basename "$1"): material extensions not kept"; fi
  [ "$validator" = 1 ] || return 0
  node "$src/tools/validate_gltf.mjs" "$1" --json > "$tmp/val.json" 2> /dev/null
  if python3 -c "
import json,sys; r=json.load(open('$tmp/val.json'))['issues']
print('  %s: validator %d errors, %d warnings' % ('$(basename "$1")', r['numErrors'], r['numWarnings']))
sys.exit(0 if r['numErrors'] == 0 and r['numWarnings'] == 0 else 1)"; then ok
  else bad "validator on $1: $(head -c 800 "$tmp/val.json")"; fi
}
run() { # out.glb command...
  local out="$1"; shift
  if "$cli" "$@" -o "$out" > /dev/null 2> "$tmp/err"; then ok; check "$out"; else bad "$*: $(cat "$tmp/err")"; fi
}
run "$tmp/repair.glb" repair "$tmp/khr.gltf"
run "$tmp/reweight.glb" reweight "$tmp/khr.gltf"
run "$tmp/coarsen.glb" reweight "$tmp/khr.gltf" --coarsen
run "$tmp/bake.glb" bake --source "$tmp/khr.gltf" --target "$tmp/khr.gltf" --quiet

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

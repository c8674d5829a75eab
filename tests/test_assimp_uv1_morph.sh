#!/usr/bin/env bash
# Non-glTF models written as glTF keep their second UV set, their morph
# targets and their tangents (issue 8):
#  1. a generated Collada quad with two UV sets and its diffuse texture on
#     set 1 (bind_vertex_input input_set 1): `repair -o` writes TEXCOORD_0 and
#     TEXCOORD_1 (the file's UVs, V flipped to glTF's origin), the base colour
#     textureInfo has texCoord 1, the PNG's bytes are embedded, no warning;
#  2. assimp's Collada/cube_with_2UVs.DAE keeps its second set as TEXCOORD_1;
#  3. assimp's glTF2 AnimatedMorphCube read through Assimp (copied under an
#     extension the glTF reader does not claim, so Assimp reads it by its
#     signature): both morph targets with the file's POSITION / NORMAL /
#     TANGENT deltas, mesh.weights, extras.targetNames, and the base TANGENT
#     (xyz and the handedness w) as in the file; a variant with named targets
#     and default weights 0.25 / 0.5 keeps the names and weights;
#  4. a skinned FBX's tangents (huesitos.fbx) stay unit and perpendicular to the
#     normals after the import moves its vertices to the scene root;
#  5. the generated quad with an emission of (2, 1, 0.5): emissiveFactor (1, 0.5,
#     0.25) and KHR_materials_emissive_strength 2 (listed in extensionsUsed);
#  6. three.js's GLTFLoader shows UV channel 1, the named morph targets with their
#     influences and emissiveIntensity 2, without a warning (tools/three_attrs.mjs);
#  7. a generated ASCII FBX blend shape becomes a morph target (deltas, name, weight 0);
#  8. Blender's glTF importer shows the second UV map, the shape keys and the emission
#     strength (tools/blender_attrs.py).
# The Khronos validator reports 0 errors and 0 warnings on every output.
# Arg 1: the skinsolve CLI. Exit 77 when the test models are not installed.
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
convert() { # model out.glb: `repair` writes it (Assimp -> glTF from scratch)
  if "$cli" repair "$1" -o "$2" > /dev/null 2> "$tmp/err"; then ok; else bad "repair $1: $(cat "$tmp/err")"; fi
}
cube="$models/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF"
[ -f "$cube/AnimatedMorphCube.gltf" ] || { echo "SKIP: $cube not found (apt-get install assimp-testmodels)"; exit 77; }
validator=0
if command -v node > /dev/null && [ -f "$src/tools/node_modules/gltf-validator/package.json" ]; then validator=1
else echo "note: gltf-validator not installed (tools/node_modules): validation skipped"; fi

validate() { # out.glb: 0 errors and 0 warnings
  [ "$validator" = 1 ] || return 0
  node "$src/tools/validate_gltf.mjs" "$1" --json > "$tmp/val.json" 2> /dev/null
  if python3 -c "
import json,sys; r=json.load(open('$tmp/val.json'))['issues']
print('  %s: validator %d errors, %d warnings' % ('$(basename "$1")', r['numErrors'], r['numWarnings']))
sys.exit(0 if r['numErrors'] == 0 and r['numWarnings'] == 0 else 1)"; then ok
  else bad "validator on $1: $(head -c 800 "$tmp/val.json")"; fi
}

# glb.py: helpers to read a GLB's JSON and accessors (float / ushort / uint).
cat > "$tmp/glb.py" << 'EOF'
import json, struct
def load(path):
    d = open(path, 'rb').read()
    jl = struct.unpack('<I', d[12:16])[0]
    doc = json.loads(d[20:20 + jl])
    return doc, d[20 + jl + 8:]
def acc(doc, binc, i, bins=None):
    a = doc['accessors'][i]
    v = doc['bufferViews'][a['bufferView']]
    data = binc if bins is None else bins[v.get('buffer', 0)]
    n = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4, 'MAT4': 16}[a['type']]
    fmt = {5126: 'f', 5123: 'H', 5125: 'I'}[a['componentType']]
    size = struct.calcsize(fmt)
    stride = v.get('byteStride', n * size)
    off = v.get('byteOffset', 0) + a.get('byteOffset', 0)
    return [list(struct.unpack_from('<%d%s' % (n, fmt), data, off + k * stride)) for k in range(a['count'])]
EOF

# 1. generated Collada: two UV sets, the texture on set 1
mkdir -p "$tmp/uv1"
python3 - "$tmp/uv1" << 'EOF'
import sys, struct, zlib, os
d = sys.argv[1]
def chunk(t, b): return struct.pack('>I', len(b)) + t + b + struct.pack('>I', zlib.crc32(t + b) & 0xffffffff)
raw = b''.join(b'\x00' + bytes((200, 40, 10)) * 2 for _ in range(2))
open(os.path.join(d, 'uv1.png'), 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 2, 2, 8, 2, 0, 0, 0)) +
                                             chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
def src(i, vals, params):
    n = len(vals); k = len(params)
    return ('<source id="%s"><float_array id="%s-a" count="%d">%s</float_array><technique_common>'
            '<accessor source="#%s-a" count="%d" stride="%d">%s</accessor></technique_common></source>'
            % (i, i, n, ' '.join(map(str, vals)), i, n // k, k, ''.join('<param name="%s" type="float"/>' % p for p in params)))
xyz, st = ('X', 'Y', 'Z'), ('S', 'T')
doc = '''<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><unit name="meter" meter="1"/><up_axis>Y_UP</up_axis></asset>
<library_images><image id="img" name="img"><init_from>uv1.png</init_from></image></library_images>
<library_effects><effect id="fx"><profile_COMMON>
<newparam sid="surf"><surface type="2D"><init_from>img</init_from></surface></newparam>
<newparam sid="samp"><sampler2D><source>surf</source></sampler2D></newparam>
<technique sid="common"><phong><diffuse><texture texture="samp" texcoord="UVSET1"/></diffuse></phong></technique>
</profile_COMMON></effect></library_effects>
<library_materials><material id="mat" name="uv1_material"><instance_effect url="#fx"/></material></library_materials>
<library_geometries><geometry id="quad" name="quad"><mesh>%s%s%s%s
<vertices id="quad-v"><input semantic="POSITION" source="#quad-p"/></vertices>
<triangles material="mat" count="2"><input semantic="VERTEX" source="#quad-v" offset="0"/>
<input semantic="NORMAL" source="#quad-n" offset="0"/><input semantic="TEXCOORD" source="#quad-t0" offset="0" set="0"/>
<input semantic="TEXCOORD" source="#quad-t1" offset="0" set="1"/><p>0 1 2 0 2 3</p></triangles></mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="scene"><node id="quad_node" name="quad_node">
<instance_geometry url="#quad"><bind_material><technique_common><instance_material symbol="mat" target="#mat">
<bind_vertex_input semantic="UVSET1" input_semantic="TEXCOORD" input_set="1"/></instance_material></technique_common></bind_material></instance_geometry>
</node></visual_scene></library_visual_scenes>
<scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
''' % (src('quad-p', [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0], xyz), src('quad-n', [0, 0, 1] * 4, xyz),
       src('quad-t0', [0, 0, 1, 0, 1, 1, 0, 1], st), src('quad-t1', [0.5, 0.5, 0.75, 0.5, 0.75, 0.75, 0.5, 0.75], st))
open(os.path.join(d, 'quad.dae'), 'w').write(doc)
EOF
if "$cli" repair "$tmp/uv1/quad.dae" -o "$tmp/quad.glb" > /dev/null 2> "$tmp/err"; then ok
else bad "repair quad.dae: $(cat "$tmp/err")"; fi
if grep -q 'warning' "$tmp/err"; then bad "quad.dae: unexpected warning: $(cat "$tmp/err")"; else ok; fi
if python3 - "$tmp/quad.glb" "$tmp/uv1/uv1.png" "$tmp" << 'EOF'
import sys; sys.path.insert(0, sys.argv[3]); import glb
doc, binc = glb.load(sys.argv[1])
errs = []
mats = doc.get('materials', [])
bct = mats[0].get('pbrMetallicRoughness', {}).get('baseColorTexture') if mats else None
if not bct or bct.get('texCoord') != 1:
    errs.append('baseColorTexture %s, want texCoord 1' % bct)
else:
    img = doc['images'][doc['textures'][bct['index']]['source']]
    v = doc['bufferViews'][img['bufferView']]
    if binc[v.get('byteOffset', 0):v.get('byteOffset', 0) + v['byteLength']] != open(sys.argv[2], 'rb').read():
        errs.append('the image is not uv1.png')
prims = [p for m in doc['meshes'] for p in m['primitives']]
uv_pairs = set()
for p in prims:
    at = p['attributes']
    if 'TEXCOORD_0' not in at or 'TEXCOORD_1' not in at or p.get('material') != 0:
        errs.append('primitive %s: want TEXCOORD_0, TEXCOORD_1 and material 0' % at); continue
    for q, u0, u1 in zip(glb.acc(doc, binc, at['POSITION']), glb.acc(doc, binc, at['TEXCOORD_0']),
                         glb.acc(doc, binc, at['TEXCOORD_1'])):
        # the file's set 1 is set 0 / 4 + 0.5; glTF's V = 1 - the file's
        want = [q[0] / 4 + 0.5, 1 - (q[1] / 4 + 0.5)]
        if abs(u1[0] - want[0]) > 1e-6 or abs(u1[1] - want[1]) > 1e-6 or abs(u0[0] - q[0]) > 1e-6:
            errs.append('vertex %s: TEXCOORD_0 %s TEXCOORD_1 %s, want %s' % (q, u0, u1, want))
for e in errs: print('  quad.glb: ' + e)
print('  quad.glb: %d primitives, texCoord %s' % (len(prims), bct and bct.get('texCoord')))
sys.exit(1 if errs else 0)
EOF
then ok; else bad "quad.dae: UV set 1 / texCoord 1 not carried"; fi
validate "$tmp/quad.glb"

# 2. assimp's cube with two UV sets
dae="$models/Collada/cube_with_2UVs.DAE"
if [ -f "$dae" ]; then
  convert "$dae" "$tmp/cube2uv.glb"
  if python3 -c "
import sys; sys.path.insert(0, '$tmp'); import glb
doc, b = glb.load('$tmp/cube2uv.glb')
at = [p['attributes'] for m in doc['meshes'] for p in m['primitives']]
u0 = glb.acc(doc, b, at[0]['TEXCOORD_0']) if 'TEXCOORD_0' in at[0] else []
u1 = glb.acc(doc, b, at[0]['TEXCOORD_1']) if 'TEXCOORD_1' in at[0] else []
print('  cube2uv.glb: attributes', sorted(at[0]))
sys.exit(0 if u1 and len(u1) == len(u0) and u1 != u0 else 1)"; then ok
  else bad "cube_with_2UVs.DAE: no TEXCOORD_1 distinct from TEXCOORD_0"; fi
  validate "$tmp/cube2uv.glb"
fi

# 3. morph targets and tangents through Assimp (AnimatedMorphCube, as is and with names / weights)
mkdir -p "$tmp/mc"
cp "$cube/AnimatedMorphCube.bin" "$tmp/mc/"
cp "$cube/AnimatedMorphCube.gltf" "$tmp/mc/cube.morph"
python3 -c "
import json; d=json.load(open('$cube/AnimatedMorphCube.gltf')); m=d['meshes'][0]
m['weights']=[0.25, 0.5]; m['extras']={'targetNames':['thin','angle']}
d.pop('animations')  # the default weights, not the weights animation, are what Blender shows here
json.dump(d, open('$tmp/mc/named.morph','w'))"
for f in cube named; do
  if "$cli" repair "$tmp/mc/$f.morph" -o "$tmp/$f.glb" > /dev/null 2> "$tmp/err"; then ok
  else bad "repair $f.morph: $(cat "$tmp/err")"; continue; fi
  # cube.morph keeps AnimatedMorphCube's weights animation: the one warning
  # is that Assimp gives no interpolation for it (named.morph has none)
  want=0; [ "$f" = cube ] && want=1
  nw=$(grep -c 'warning' "$tmp/err")
  ni=$(grep -c 'morph weight interpolation is not given by Assimp: read as LINEAR' "$tmp/err")
  if [ "$nw" = "$want" ] && [ "$ni" = "$want" ]; then ok; else bad "$f.morph: $nw warnings (want $want: the interpolation one): $(cat "$tmp/err")"; fi
  if python3 - "$tmp/$f.glb" "$tmp/mc/$f.morph" "$tmp/mc/AnimatedMorphCube.bin" "$tmp" << 'EOF'
import sys, json; sys.path.insert(0, sys.argv[4]); import glb
doc, binc = glb.load(sys.argv[1])
src = json.load(open(sys.argv[2])); sbin = open(sys.argv[3], 'rb').read()
sm = src['meshes'][0]; sp = sm['primitives'][0]
errs = []
meshes = doc.get('meshes', [])
if len(meshes) != 1 or len(meshes[0]['primitives']) != 1:
    print('  want one mesh, one primitive'); sys.exit(1)
m = meshes[0]; p = m['primitives'][0]
# vertex pairing by position (Assimp keeps glTF's vertex order; checked, not assumed)
sa = lambda i: glb.acc(src, None, i, [sbin])
base_src, base_out = sa(sp['attributes']['POSITION']), glb.acc(doc, binc, p['attributes']['POSITION'])
if len(base_src) != len(base_out) or any(max(abs(a - b) for a, b in zip(x, y)) > 1e-6 for x, y in zip(base_src, base_out)):
    errs.append('POSITION differs from the file (vertex order / values)')
want_w = sm.get('weights', [0.0, 0.0])
want_n = sm.get('extras', {}).get('targetNames', ['target_0', 'target_1'])
if m.get('weights') != want_w: errs.append('weights %s, want %s' % (m.get('weights'), want_w))
if m.get('extras', {}).get('targetNames') != want_n:
    errs.append('targetNames %s, want %s' % (m.get('extras', {}).get('targetNames'), want_n))
tg = p.get('targets', [])
if len(tg) != len(sp['targets']): errs.append('%d targets, want %d' % (len(tg), len(sp['targets'])))
worst = 0.0
for k, (st, ot) in enumerate(zip(sp['targets'], tg)):
    for attr in ('POSITION', 'NORMAL', 'TANGENT'):
        if attr not in ot: errs.append('target %d: no %s' % (k, attr)); continue
        a, b = sa(st[attr]), glb.acc(doc, binc, ot[attr])
        d = max(abs(x - y) for u, v in zip(a, b) for x, y in zip(u, v))
        worst = max(worst, d)
        if len(a) != len(b) or d > 1e-5: errs.append('target %d %s: off by %g' % (k, attr, d))
if 'TANGENT' not in p['attributes']: errs.append('no TANGENT')
else:
    a, b = sa(sp['attributes']['TANGENT']), glb.acc(doc, binc, p['attributes']['TANGENT'])
    d = max(abs(x - y) for u, v in zip(a, b) for x, y in zip(u, v))
    if len(a) != len(b) or d > 1e-5: errs.append('TANGENT (xyz, w) off by %g' % d)
for e in errs: print('  ' + sys.argv[1].split('/')[-1] + ': ' + e)
print('  %s: %d targets %s, weights %s, delta error %.2g' % (sys.argv[1].split('/')[-1], len(tg),
      m.get('extras', {}).get('targetNames'), m.get('weights'), worst))
sys.exit(1 if errs else 0)
EOF
  then ok; else bad "$f.morph: morph targets / tangents not carried"; fi
  validate "$tmp/$f.glb"
done

# 4. tangents of a skinned FBX (huesitos.fbx: its vertices are moved to the scene root with
#    the bind matrices, rebase_to_scene_root): TANGENT on the primitive, unit and
#    perpendicular to NORMAL (|n.t| < 1e-3), w = +-1
fbx="$models/FBX/huesitos.fbx"
if [ -f "$fbx" ]; then
  convert "$fbx" "$tmp/huesitos.glb"
  if python3 - "$tmp/huesitos.glb" "$tmp" << 'EOF'
import sys; sys.path.insert(0, sys.argv[2]); import glb
doc, binc = glb.load(sys.argv[1])
prims = [p for m in doc['meshes'] for p in m['primitives']]
errs, worst = [], 0.0
for p in prims:
    at = p['attributes']
    if 'TANGENT' not in at or 'NORMAL' not in at: errs.append('no TANGENT / NORMAL'); continue
    for n, t in zip(glb.acc(doc, binc, at['NORMAL']), glb.acc(doc, binc, at['TANGENT'])):
        worst = max(worst, abs(sum(x * y for x, y in zip(n, t[:3]))), abs(sum(x * x for x in t[:3]) - 1))
        if t[3] not in (1.0, -1.0): errs.append('w %g' % t[3]); break
if worst > 1e-3: errs.append('tangent not unit / perpendicular to the normal: %g' % worst)
for e in errs: print('  huesitos.glb: ' + e)
print('  huesitos.glb: %d primitives, worst |n.t| or | |t| - 1 | %.2g' % (len(prims), worst))
sys.exit(1 if errs or not prims else 0)
EOF
  then ok; else bad "huesitos.fbx: tangents not carried"; fi
  validate "$tmp/huesitos.glb"
fi

# 5. an emission brighter than 1 keeps its colour through KHR_materials_emissive_strength
sed 's|<phong><diffuse>|<phong><emission><color>2 1 0.5 1</color></emission><diffuse>|' "$tmp/uv1/quad.dae" > "$tmp/uv1/bright.dae"
grep -q '<emission>' "$tmp/uv1/bright.dae" || bad "could not make bright.dae"
if "$cli" repair "$tmp/uv1/bright.dae" -o "$tmp/bright.glb" > /dev/null 2> "$tmp/err"; then ok
else bad "repair bright.dae: $(cat "$tmp/err")"; fi
if python3 -c "
import sys; sys.path.insert(0, '$tmp'); import glb
doc, b = glb.load('$tmp/bright.glb')
m = doc['materials'][0]
es = m.get('extensions', {}).get('KHR_materials_emissive_strength', {}).get('emissiveStrength')
print('  bright.glb: emissiveFactor %s, emissiveStrength %s, extensionsUsed %s' % (m.get('emissiveFactor'), es, doc.get('extensionsUsed')))
sys.exit(0 if m.get('emissiveFactor') == [1, 0.5, 0.25] and es == 2 and
         'KHR_materials_emissive_strength' in doc.get('extensionsUsed', []) else 1)"; then ok
else bad "bright.dae: emission (2, 1, 0.5) not kept as factor x strength"; fi
validate "$tmp/bright.glb"
# ... and in assimp's 3ds Max PBR FBX, whose emissive is (pi, pi, 0): factor (1, 1, 0), strength pi
fbx="$models/FBX/maxPbrMaterial_metalRough.fbx"
if [ -f "$fbx" ]; then
  convert "$fbx" "$tmp/maxpbr.glb"
  if python3 -c "
import sys, math; sys.path.insert(0, '$tmp'); import glb
doc, b = glb.load('$tmp/maxpbr.glb')
m = doc['materials'][0]
ef = m.get('emissiveFactor', [0, 0, 0])
es = m.get('extensions', {}).get('KHR_materials_emissive_strength', {}).get('emissiveStrength', 1)
print('  maxpbr.glb: emissiveFactor %s, emissiveStrength %s' % (ef, es))
sys.exit(0 if max(abs(x - y) for x, y in zip(ef, [1, 1, 0])) < 1e-6 and abs(es - math.pi) < 1e-5 else 1)"; then ok
  else bad "maxPbrMaterial_metalRough.fbx: emissive (pi, pi, 0) not kept as factor x strength"; fi
  validate "$tmp/maxpbr.glb"
fi

# 7. an FBX blend shape (assimp's ASCII FBX box with a Shape geometry, a BlendShape deformer and a
#    channel at DeformPercent 30 added): one target 'lift' whose POSITION deltas are the shape's
#    (control point 0 +10 in z, point 3 +5, the rest 0) on every vertex split from those points,
#    default weight 0 (Assimp does not give DeformPercent); validator clean
box="$models/FBX/embedded_ascii/box.FBX"
if [ -f "$box" ]; then
  python3 - "$box" "$tmp/blend.fbx" << 'EOF'
import sys
s = open(sys.argv[1], encoding='latin-1').read()
shape = '''	Geometry: 900001, "Geometry::lift", "Shape" {
		Version: 100
		Indexes: *2 {
			a: 0,3
		}
		Vertices: *6 {
			a: 0,0,10,0,0,5
		}
		Normals: *6 {
			a: 0,0,0,0,0,0
		}
	}
	Deformer: 900002, "Deformer::blend", "BlendShape" {
		Version: 100
	}
	Deformer: 900003, "SubDeformer::lift", "BlendShapeChannel" {
		Version: 100
		DeformPercent: 30
		FullWeights: *1 {
			a: 100
		}
	}
'''
i = s.index('\tModel: 2672936127584')
s = s[:i] + shape + s[i:]
j = s.index('Connections:  {') + len('Connections:  {')
s = s[:j] + '\n\tC: "OO",900002,2671579482576\n\tC: "OO",900003,900002\n\tC: "OO",900001,900003\n' + s[j:]
open(sys.argv[2], 'w', encoding='latin-1').write(s)
EOF
  if "$cli" repair "$tmp/blend.fbx" -o "$tmp/blend.glb" > /dev/null 2> "$tmp/err"; then ok
  else bad "repair blend.fbx: $(cat "$tmp/err")"; fi
  if python3 - "$tmp/blend.glb" "$tmp" << 'EOF'
import sys; sys.path.insert(0, sys.argv[2]); import glb
doc, b = glb.load(sys.argv[1])
errs = []
m = doc['meshes'][0]; p = m['primitives'][0]
tg = p.get('targets', [])
if m.get('extras', {}).get('targetNames') != ['lift'] or m.get('weights') != [0] or len(tg) != 1:
    errs.append('targetNames %s weights %s, %d targets' % (m.get('extras', {}).get('targetNames'), m.get('weights'), len(tg)))
else:
    c = 23.6220474243164
    moved = 0
    for q, d in zip(glb.acc(doc, b, p['attributes']['POSITION']), glb.acc(doc, b, tg[0]['POSITION'])):
        want = [0, 0, 10] if max(abs(q[0] + c), abs(q[1] + c), abs(q[2])) < 1e-3 else \
               [0, 0, 5] if max(abs(q[0] - c), abs(q[1] - c), abs(q[2])) < 1e-3 else [0, 0, 0]
        moved += want != [0, 0, 0]
        if max(abs(x - y) for x, y in zip(d, want)) > 1e-4: errs.append('vertex %s: delta %s, want %s' % (q, d, want))
    if moved != 6: errs.append('%d vertices on the two moved control points, want 6 (3 faces each)' % moved)
for e in errs[:5]: print('  blend.glb: ' + e)
print('  blend.glb: targets %s, weights %s' % (m.get('extras', {}).get('targetNames'), m.get('weights')))
sys.exit(1 if errs else 0)
EOF
  then ok; else bad "blend.fbx: the blend shape is not a morph target"; fi
  validate "$tmp/blend.glb"
fi

# 6. three.js (GLTFLoader, npm three in tools/node_modules) shows the same: the quad's map on UV
#    channel 1 with a uv1 attribute, the named cube's morph targets by name with the default
#    influences, the bright quad's emissive intensity 2; no import warning
if command -v node > /dev/null && [ -f "$src/tools/node_modules/three/package.json" ]; then
  for f in quad named bright; do
    if node "$src/tools/three_attrs.mjs" "$tmp/$f.glb" > "$tmp/three_$f.json" 2> "$tmp/err"; then ok
    else bad "three.js cannot load $f.glb: $(cat "$tmp/err")"; fi
  done
  if python3 - "$tmp" << 'EOF'
import json, sys
t = sys.argv[1]
rows = {f: [json.loads(l) for l in open('%s/three_%s.json' % (t, f))] for f in ('quad', 'named', 'bright')}
errs = []
for f, r in rows.items():
    if r[-1].get('warnings'): errs.append('%s: three.js warns %s' % (f, r[-1]['warnings']))
q, n, b = rows['quad'][0], rows['named'][0], rows['bright'][0]
if q['mapChannel'] != 1 or 'uv1' not in q['attributes']: errs.append('quad: map channel %s, attributes %s' % (q['mapChannel'], q['attributes']))
if n['morphTargets'] != {'thin': 0, 'angle': 1} or n['influences'] != [0.25, 0.5] or 'tangent' not in n['attributes']:
    errs.append('named: morph targets %s influences %s attributes %s' % (n['morphTargets'], n['influences'], n['attributes']))
if b['emissiveIntensity'] != 2 or b['emissive'] != [1, 0.5, 0.25]:
    errs.append('bright: emissive %s intensity %s' % (b['emissive'], b['emissiveIntensity']))
for e in errs: print('  three.js: ' + e)
print('  three.js: quad map channel %s; named %s %s; bright intensity %s' % (q['mapChannel'], n['morphTargets'], n['influences'], b['emissiveIntensity']))
sys.exit(1 if errs else 0)
EOF
  then ok; else bad "three.js does not show UV set 1 / morph targets / emissive strength"; fi
else
  echo "note: node or npm three not installed (tools/node_modules): three.js check skipped"
fi

# info --json lists what a part carries: UV sets, tangents, morph target names
if python3 -c "
import json, subprocess, sys
def parts(f): return json.loads(subprocess.run(['$cli', 'info', f, '--json'], capture_output=True, text=True).stdout)['parts']
q, n = parts('$tmp/uv1/quad.dae')[0], parts('$tmp/mc/named.morph')[0]
print('  info --json: quad uv_sets %s; named tangents %s, morph_targets %s' % (q['uv_sets'], n['tangents'], n['morph_targets']))
sys.exit(0 if q['uv_sets'] == 2 and n['tangents'] is True and n['morph_targets'] == ['thin', 'angle'] else 1)"; then ok
else bad "info --json: uv_sets / tangents / morph_targets"; fi

# 8. Blender 3.4's glTF importer (headless) shows the same: the quad's texture on the second UV
#    map, the named cube's shape keys thin 0.25 / angle 0.5, the FBX blend shape's 'lift' at 0,
#    the bright quad's emission strength 2
if command -v blender > /dev/null; then
  blender -b --factory-startup --python "$src/tools/blender_attrs.py" -- "$tmp/quad.glb" "$tmp/named.glb" \
    "$tmp/bright.glb" $([ -f "$tmp/blend.glb" ] && echo "$tmp/blend.glb") > "$tmp/blender.out" 2>&1
  if python3 - "$tmp/blender.out" "$([ -f "$tmp/blend.glb" ] && echo 1 || echo 0)" << 'EOF'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith('ATTRS '):
        r = json.loads(line[6:]); rows[r['file']] = r
errs = []
q, n, b, f = (rows.get(k, {}) for k in ('quad.glb', 'named.glb', 'bright.glb', 'blend.glb'))
uv = q.get('uv_layers', [])
if len(uv) != 2 or q.get('texture_uv_map') != uv[1]: errs.append('quad: UV maps %s, texture on %s' % (uv, q.get('texture_uv_map')))
if n.get('shape_keys') != [['Basis', 0], ['thin', 0.25], ['angle', 0.5]]: errs.append('named: shape keys %s' % n.get('shape_keys'))
if b.get('emission_strength') != 2: errs.append('bright: emission strength %s' % b.get('emission_strength'))
if sys.argv[2] == '1' and f.get('shape_keys') != [['Basis', 0], ['lift', 0]]: errs.append('blend: shape keys %s' % f.get('shape_keys'))
for e in errs: print('  Blender: ' + e)
print('  Blender: quad texture on %s of %s; named %s; bright emission %s' % (q.get('texture_uv_map'), uv, n.get('shape_keys'), b.get('emission_strength')))
sys.exit(1 if errs else 0)
EOF
  then ok; else bad "Blender does not show UV set 1 / shape keys / emission strength: $(grep -v '^ATTRS' "$tmp/blender.out" | tail -5)"; fi
else
  echo "note: blender not installed: Blender check skipped"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

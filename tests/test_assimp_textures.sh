#!/usr/bin/env bash
# Non-glTF models converted to glTF keep their materials and textures
# (issue 8): `repair -o` of assimp-testmodels files that have a base colour
# texture writes the material (name, factors), a texture + sampler and the
# image bytes in the GLB (sha256 equal to the source image file, or a PNG for
# an embedded one), TEXCOORD_0 on the primitives using it, and the Khronos
# validator reports 0 errors and 0 warnings. A texture path that leaves the
# model's folder (also through a symlink) or names a non-PNG/JPEG file is left
# out with a warning naming the file, never read into the output. A TGA texture
# (Collada/duck.dae) is converted to PNG and carried.
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
[ -f "$models/X/test.x" ] || { echo "SKIP: $models/X/test.x not found (apt-get install assimp-testmodels)"; exit 77; }
validator=0
if command -v node > /dev/null && [ -f "$src/tools/node_modules/gltf-validator/package.json" ]; then validator=1; fi

# glb_check OUT.glb EXPECT: EXPECT is a python dict literal:
#   images: number of images; sha: sha256 of image 0's bytes (or None: a PNG);
#   material: name of the material that must use image 0 (None: any named one;
#   test.x's material has no name in the file)
glb_check() {
  python3 - "$1" "$2" << 'EOF'
import sys, json, struct, hashlib, ast
path, want = sys.argv[1], ast.literal_eval(sys.argv[2])
d = open(path, 'rb').read()
jl = struct.unpack('<I', d[12:16])[0]
doc = json.loads(d[20:20 + jl])
binc = d[20 + jl + 8:]
imgs = doc.get('images', [])
errs = []
if len(imgs) != want['images']:
    errs.append('%d images, want %d' % (len(imgs), want['images']))
if want['images']:
    texs, mats = doc.get('textures', []), doc.get('materials', [])
    img = imgs[0]
    v = doc['bufferViews'][img['bufferView']]
    data = binc[v.get('byteOffset', 0):v.get('byteOffset', 0) + v['byteLength']]
    sha = hashlib.sha256(data).hexdigest()
    if want['sha'] and sha != want['sha']:
        errs.append('image 0 sha256 %s, source file %s' % (sha, want['sha']))
    if not want['sha'] and not data.startswith(b'\x89PNG\r\n\x1a\n'):
        errs.append('image 0 is not a PNG')
    if img.get('mimeType') not in ('image/png', 'image/jpeg'):
        errs.append('mimeType %s' % img.get('mimeType'))
    users = [i for i, m in enumerate(mats)
             if texs[m.get('pbrMetallicRoughness', {}).get('baseColorTexture', {}).get('index', -1)]['source'] == 0]
    if not users or not mats[users[0]].get('name') or (want['material'] and mats[users[0]].get('name') != want['material']):
        errs.append('material using image 0: %s, want %s' % ([mats[u].get('name') for u in users], want['material']))
    if not doc.get('samplers') or texs[0].get('sampler') != 0:
        errs.append('no sampler')
    prims = [p for m in doc['meshes'] for p in m['primitives'] if p.get('material') in users]
    if not prims or any('TEXCOORD_0' not in p['attributes'] for p in prims):
        errs.append('%d primitives use the material, some without TEXCOORD_0' % len(prims))
for e in errs: print('  ' + path.split('/')[-1] + ': ' + e)
print('  %s: %d images, %d textures, %d materials' % (path.split('/')[-1], len(imgs), len(doc.get('textures', [])),
                                                    len(doc.get('materials', []))))
sys.exit(1 if errs else 0)
EOF
}

validate() { # out.glb: 0 errors and 0 warnings
  [ "$validator" = 1 ] || return 0
  node "$src/tools/validate_gltf.mjs" "$1" --json > "$tmp/val.json" 2> /dev/null
  if python3 -c "
import json,sys; r=json.load(open('$tmp/val.json'))['issues']
print('  %s: validator %d errors, %d warnings' % ('$(basename "$1")', r['numErrors'], r['numWarnings']))
sys.exit(0 if r['numErrors'] == 0 and r['numWarnings'] == 0 else 1)"; then ok
  else bad "validator on $1: $(head -c 600 "$tmp/val.json")"; fi
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# 1. X: an external PNG beside the model (TextureFilename ".\\test.png")
if "$cli" repair "$models/X/test.x" -o "$tmp/test_x.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair test.x: $(cat "$tmp/err")"; fi
if glb_check "$tmp/test_x.glb" "{'images': 1, 'sha': '$(sha "$models/X/test.png")', 'material': None}"; then ok
else bad "test.x: material / texture / image"; fi
validate "$tmp/test_x.glb"
if grep -q 'warning' "$tmp/err"; then bad "test.x: unexpected warning: $(cat "$tmp/err")"; else ok; fi

# 2. FBX: a PNG embedded in the file
fbx="$models/FBX/embedded_ascii/box_embedded_texture_fragmented.fbx"
if [ -f "$fbx" ]; then
  if "$cli" repair "$fbx" -o "$tmp/fbx.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair $fbx: $(cat "$tmp/err")"; fi
  mat=$(python3 -c "
import json,struct,sys; d=open('$tmp/fbx.glb','rb').read(); n=struct.unpack('<I',d[12:16])[0]; j=json.loads(d[20:20+n])
print(next((m.get('name','') for m in j.get('materials',[]) if 'baseColorTexture' in m.get('pbrMetallicRoughness',{})), ''))")
  if [ -n "$mat" ] && glb_check "$tmp/fbx.glb" "{'images': 1, 'sha': None, 'material': '$mat'}"; then ok
  else bad "embedded FBX texture not carried"; fi
  validate "$tmp/fbx.glb"
fi

# 3. a texture path that leaves the model's folder: refused, with a warning
mkdir -p "$tmp/model"
cp "$models/X/test.png" "$tmp/secret.png"
sed 's/"\.\\\\test\.png"/"..\\\\secret.png"/' "$models/X/test.x" > "$tmp/model/out.x"
grep -q 'secret.png' "$tmp/model/out.x" || bad "could not make the out-of-folder .x"
if "$cli" repair "$tmp/model/out.x" -o "$tmp/out.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair out.x: $(cat "$tmp/err")"; fi
if grep -q "warning: .*out.x: material 0 texture uri '../secret.png'.*left out" "$tmp/err"; then ok
else bad "no warning for ../secret.png: $(cat "$tmp/err")"; fi
if glb_check "$tmp/out.glb" "{'images': 0}" > /dev/null; then ok; else bad "out.glb carries an image"; fi
python3 -c "
d=open('$tmp/out.glb','rb').read(); s=open('$tmp/secret.png','rb').read()
import sys; sys.exit(1 if s[8:64] in d else 0)" && ok || bad "out.glb contains the secret image's bytes"
validate "$tmp/out.glb"
# ... and through a symlink inside the folder
ln -s ../secret.png "$tmp/model/test.png"
cp "$models/X/test.x" "$tmp/model/link.x"
if "$cli" repair "$tmp/model/link.x" -o "$tmp/link.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair link.x: $(cat "$tmp/err")"; fi
if grep -q "warning: .*link.x: material 0 texture.*left out" "$tmp/err" && glb_check "$tmp/link.glb" "{'images': 0}" > /dev/null; then ok
else bad "symlink out of the folder not refused: $(cat "$tmp/err")"; fi

# 4. Collada with TGA textures ("./../X/bottom.tga": outside its folder too)
dae="$models/Collada/kwxport_test_vcolors.dae"
if [ -f "$dae" ]; then
  if "$cli" repair "$dae" -o "$tmp/dae.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair $dae: $(cat "$tmp/err")"; fi
  if grep -q "warning: .*kwxport_test_vcolors.dae: material .*left out" "$tmp/err" && glb_check "$tmp/dae.glb" "{'images': 0}" > /dev/null; then ok
  else bad "TGA / out-of-folder Collada textures: $(cat "$tmp/err")"; fi
  validate "$tmp/dae.glb"
fi

# 5. Collada with a TGA beside it (duck.dae: ./duckCM.tga): converted to PNG in the isolated
#    import (pixels checked against stb's decode of the TGA in tests/test_image_convert.c)
dae="$models/Collada/duck.dae"
if [ -f "$dae" ]; then
  if "$cli" repair "$dae" -o "$tmp/duck.glb" > /dev/null 2> "$tmp/err"; then ok; else bad "repair $dae: $(cat "$tmp/err")"; fi
  if grep -q 'warning' "$tmp/err"; then bad "duck.dae: unexpected warning: $(cat "$tmp/err")"; else ok; fi
  if glb_check "$tmp/duck.glb" "{'images': 1, 'sha': None, 'material': 'blinn3'}"; then ok
  else bad "duck.dae: TGA texture not carried as a PNG"; fi
  validate "$tmp/duck.glb"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

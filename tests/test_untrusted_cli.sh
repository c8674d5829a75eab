#!/usr/bin/env bash
# Untrusted input through the CLI (issue 11): check flags a non-finite rest
# transform that pose refuses; pose never writes NaN with exit 0; bake
# reports a TARGET defect as an input error (exit 1, naming it) before any
# solve; --max-memory / --timeout are parsed on every loading command and
# reach the Assimp child. Files are made here (test_safety.sh's triangle).
set -u
CLI="${1:?usage: test_untrusted_cli.sh PATH/TO/skinsolve}"
. "$(dirname "$0")/util/sks_test.sh" untrusted 120
# here has FILE TEXT DESC counts the check itself
has() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 300 "$1")"; fi; }

SRC="${SKS_SOURCE_DIR:-$(dirname "$0")/..}"
B64="$(grep "^B64=" "$SRC/tests/test_safety.sh" | cut -d"'" -f2)"
[ -n "$B64" ] || { echo "skip: cannot read the triangle from tests/test_safety.sh"; exit 77; }
printf '%s' "$B64" | base64 -d >"$T/tri.bin"
gltf() { # gltf BONE_TRANSLATION BUFFER > file
  cat <<JSON
{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,2]}],"nodes":[{"name":"root","children":[1]},{"name":"bone","translation":[$1]},{"name":"mesh","mesh":0,"skin":0}],"skins":[{"name":"skin","joints":[0,1],"inverseBindMatrices":4}],"meshes":[{"name":"tri","primitives":[{"attributes":{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2},"indices":3}]}],"buffers":[{"byteLength":244,"uri":"$2"}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24},{"buffer":0,"byteOffset":60,"byteLength":48},{"buffer":0,"byteOffset":108,"byteLength":6},{"buffer":0,"byteOffset":116,"byteLength":128}],"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},{"bufferView":1,"componentType":5123,"count":3,"type":"VEC4"},{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"},{"bufferView":3,"componentType":5123,"count":3,"type":"SCALAR"},{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}]}
JSON
}
gltf "0,1e39,0" tri.bin >"$T/inf.gltf"          # 1e39 does not fit a float: +inf
# weights start at byte 60: vertex 1's first weight (byte 76) becomes NaN
cp "$T/tri.bin" "$T/nan.bin"
printf '\x00\x00\xc0\x7f' | dd of="$T/nan.bin" bs=1 seek=76 conv=notrunc status=none
gltf "0,2,0" nan.bin >"$T/nan.gltf"
# a negative weight at vertex 1 (byte 76 = -0.5)
cp "$T/tri.bin" "$T/neg.bin"
printf '\x00\x00\x00\xbf' | dd of="$T/neg.bin" bs=1 seek=76 conv=notrunc status=none
gltf "0,2,0" neg.bin >"$T/neg.gltf"

# ---- check flags what pose refuses ----
run 1 "check: infinite rest translation" "$CLI" check "$T/inf.gltf"
has "$T/out" "inf.gltf: joint 1 'bone': rest translation is not finite" "check names the joint"
run 1 "check --json exit" "$CLI" check "$T/inf.gltf" --json
has "$T/out" '"nonfinite_transform"' "check --json kind"
run 1 "pose refuses the infinite rest translation" "$CLI" pose "$T/inf.gltf" -o "$T/inf.obj"
has "$T/err" "rest translation is not finite" "pose names the problem"
[ ! -e "$T/inf.obj" ] && ok || bad "pose wrote inf.obj"
# ---- pose never writes NaN with exit 0 ----
run 1 "pose: NaN weight gives NaN positions" "$CLI" pose "$T/nan.gltf" -o "$T/nan.obj"
has "$T/err" "nan.gltf: the posed position of vertex 1 is not finite" "pose NaN message"
[ ! -e "$T/nan.obj" ] && ok || bad "pose wrote nan.obj"

# ---- rest poses the other commands refuse, flagged by check (issue 11) ----
# a zero scale on the weighted bone: bake / control / repair refused it
# ("rest transform has zero scale") while check said 0 errors
gltf "0,2,0" tri.bin | sed 's/"translation":\[0,2,0\]}/"translation":[0,2,0],"scale":[0,0,0]}/' >"$T/scale0.gltf"
grep -q '"scale":\[0,0,0\]' "$T/scale0.gltf" || bad "scale0.gltf was not made"
run 1 "check: zero rest scale of a weighted joint" "$CLI" check "$T/scale0.gltf"
has "$T/out" "scale0.gltf: joint 1 'bone': its rest matrix (from the root) is not invertible" "check names the joint"
run 1 "repair refuses it too" "$CLI" repair "$T/scale0.gltf" -o "$T/scale0_rep.glb"
# finite rest scales of 3e38 on the root: the bone's rest position overflows
# a float (pose refused, bake solved and then failed on non-finite keys),
# check said 0 errors
gltf "0,2,0" tri.bin | sed 's/{"name":"root","children":\[1\]}/{"name":"root","children":[1],"scale":[3e38,3e38,3e38]}/' >"$T/big.gltf"
grep -q '3e38' "$T/big.gltf" || bad "big.gltf was not made"
run 1 "check: rest transforms that overflow when skinned" "$CLI" check "$T/big.gltf"
has "$T/out" "big.gltf: part 0 'tri', vertex 0: skinned in the rest pose it is not finite" "check names the vertex"
run 1 "pose refuses it too" "$CLI" pose "$T/big.gltf" -o "$T/big.obj"

# ---- bake: target defects are input errors before any solve ----
X="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}/X/Testwuson.X"
if [ -f "$X" ]; then
  run 1 "bake: negative weight in the target" "$CLI" bake --source "$X" --target "$T/neg.gltf" -o "$T/neg_out.glb"
  has "$T/err" "neg.gltf: part 0 'tri', vertex 1" "bake names the target and vertex"
  has "$T/err" "bake target" "bake says it is the target"
  [ ! -e "$T/neg_out.glb" ] && ok || bad "bake wrote an output"
  if grep -q "^Wuson_" "$T/out"; then bad "bake solved before failing"; else ok; fi
  for t in scale0 big; do # what check flags above: input errors before any solve
    run 1 "bake: the target's rest pose ($t)" "$CLI" bake --source "$X" --target "$T/$t.gltf" -o "$T/${t}_out.glb"
    has "$T/err" "$t.gltf: " "bake names the target ($t)"
    has "$T/err" "nothing solved" "bake refuses before solving ($t)"
    [ ! -e "$T/${t}_out.glb" ] && ok || bad "bake wrote an output ($t)"
  done
  # ---- load limits reach the Assimp child ----
  run 1 "--timeout 0.001" "$CLI" info "$X" --timeout 0.001
  has "$T/err" "Testwuson.X: Assimp failed (no result in 0.001 s)" "timeout message"
  run 1 "--timeout=0.001 on check" "$CLI" check "$X" --timeout=0.001
  run 1 "--timeout on bake" "$CLI" bake --source "$X" --target "$X" --timeout 0.001
  has "$T/err" "Assimp failed (no result in 0.001 s)" "bake timeout message"
  run 0 "--max-memory 1G --timeout 60 loads" "$CLI" pose "$X" --bind --max-memory 1G --timeout 60 -o "$T/b.obj"
else
  echo "skip (part): $X not found"
fi
# ---- a load that fails before it reaches its buffers still names them ----
# cyc.gltf: a node cycle (refused before any buffer is read), a buffer uri
# naming out.glb (percent-encoded, through "sub/..") and an image out.html.
# The output guard hears of both from the JSON: an output naming one (or a
# symlink to it) is the usage error (exit 2), not the load's exit 1, and
# the file is untouched.
mkdir -p "$T/cyc/sub"
cp "$T/tri.bin" "$T/cyc/out.glb"
echo precious >"$T/cyc/out.html"
ln -s out.glb "$T/cyc/link.glb"
gltf "0,2,0" 'sub/../out%2Eglb' |
  sed 's/{"name":"bone","translation":\[0,2,0\]}/{"name":"bone","translation":[0,2,0],"children":[0]}/;
       s/"buffers":/"images":[{"uri":"out.html"}],"buffers":/' >"$T/cyc/bad.gltf"
grep -q '"children":\[0\]' "$T/cyc/bad.gltf" && grep -q '"out.html"' "$T/cyc/bad.gltf" || bad "cyc/bad.gltf was not made"
(cd "$T/cyc" && sha256sum out.glb out.html) >"$T/cyc.sha256"
run 1 "info: the cycle fails the load before its buffers" "$CLI" info "$T/cyc/bad.gltf"
has "$T/err" "bad.gltf: node 0 is its own ancestor" "the cycle is the load's error"
run 2 "repair -o the buffer the failed load named" "$CLI" repair "$T/cyc/bad.gltf" -o "$T/cyc/out.glb"
has "$T/err" "refusing to write $T/cyc/out.glb: an input's import reads or names it" "repair names the buffer"
[ "$(wc -l <"$T/err")" = 1 ] && ok || bad "repair: more than one line: $(cat "$T/err")"
run 2 "repair -o a symlink to that buffer" "$CLI" repair "$T/cyc/bad.gltf" -o "$T/cyc/link.glb"
run 2 "control --report the image the failed load named" "$CLI" control "$T/cyc/bad.gltf" --report "$T/cyc/out.html"
has "$T/err" "refusing to write $T/cyc/out.html" "control names the image"
run 1 "repair -o another file: the load error" "$CLI" repair "$T/cyc/bad.gltf" -o "$T/cyc/other.glb"
[ ! -e "$T/cyc/other.glb" ] && ok || bad "repair wrote other.glb"
(cd "$T/cyc" && sha256sum -c --quiet "$T/cyc.sha256") && test -L "$T/cyc/link.glb" && ok ||
  bad "out.glb / out.html changed or the link replaced"

# ---- a load that succeeds without reading every file it names ----
# ok.gltf loads (tri.bin), but also names a buffer no accessor uses
# (spare.glb) and an image no texture uses (spare.html): the reader need
# not open them, yet they are the model's files. An output naming one (or a
# symlink to it) is refused by the guard (exit 2) and the file is untouched.
mkdir -p "$T/ok"
cp "$T/tri.bin" "$T/ok/tri.bin"
echo precious >"$T/ok/spare.glb"
echo precious >"$T/ok/spare.html"
ln -s spare.glb "$T/ok/spare_link.glb"
gltf "0,2,0" tri.bin |
  sed 's/"buffers":\[{"byteLength":244,"uri":"tri.bin"}\]/"images":[{"uri":"spare.html"}],"buffers":[{"byteLength":9,"uri":"spare.glb"},{"byteLength":244,"uri":"tri.bin"}]/;
       s/{"buffer":0,/{"buffer":1,/g' >"$T/ok/ok.gltf"
grep -q '"spare.glb"' "$T/ok/ok.gltf" && grep -q '"spare.html"' "$T/ok/ok.gltf" && ! grep -q '"buffer":0' "$T/ok/ok.gltf" ||
  bad "ok/ok.gltf was not made"
(cd "$T/ok" && sha256sum spare.glb spare.html) >"$T/ok.sha256"
run 0 "info: the model with unused files loads" "$CLI" info "$T/ok/ok.gltf"
run 2 "repair -o the unused buffer" "$CLI" repair "$T/ok/ok.gltf" -o "$T/ok/spare.glb"
has "$T/err" "refusing to write $T/ok/spare.glb: an input's import reads or names it" "repair names the unused buffer"
run 2 "repair -o a symlink to the unused buffer" "$CLI" repair "$T/ok/ok.gltf" -o "$T/ok/spare_link.glb"
has "$T/err" "refusing to write $T/ok/spare_link.glb: an input's import reads or names it" "repair names the link"
run 2 "control -o the unused buffer" "$CLI" control "$T/ok/ok.gltf" -o "$T/ok/spare.glb"
has "$T/err" "refusing to write $T/ok/spare.glb: an input's import" "control names the unused buffer"
run 2 "control --report the unused image" "$CLI" control "$T/ok/ok.gltf" --report "$T/ok/spare.html"
has "$T/err" "refusing to write $T/ok/spare.html: an input's import" "control names the unused image"
run 0 "repair -o another file still writes" "$CLI" repair "$T/ok/ok.gltf" -o "$T/ok/fixed.glb"
[ -s "$T/ok/fixed.glb" ] && ok || bad "repair did not write fixed.glb"
(cd "$T/ok" && sha256sum -c --quiet "$T/ok.sha256") && test -L "$T/ok/spare_link.glb" && ok ||
  bad "spare.glb / spare.html changed or the link replaced"

for cmd in info check; do
  run 2 "$cmd --max-memory 12" "$CLI" $cmd "$T/inf.gltf" --max-memory 12
  run 2 "$cmd --max-memory lots" "$CLI" $cmd "$T/inf.gltf" --max-memory lots
  run 2 "$cmd --timeout -1" "$CLI" $cmd "$T/inf.gltf" --timeout -1
  run 2 "$cmd --timeout" "$CLI" $cmd "$T/inf.gltf" --timeout
done
for cmd in info check pose repair bake control reweight; do
  "$CLI" $cmd --help >"$T/help" 2>&1
  has "$T/help" "--max-memory SIZE" "$cmd --help documents --max-memory"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Compressed glTF as web pipelines ship characters (extension required):
#  - KHR_draco_mesh_compression: the native reader does not decode Draco,
#    so sks_load reads the file through Assimp (Debian's links libdraco);
#  - EXT_meshopt_compression: the native reader decodes it (meshoptimizer),
#    without filters and with the octahedral / quaternion / exponential ones.
# The variants are made here from the shared rigs with glTF-Transform
# (tools/compress_gltf.mjs). For each kind:
#  - info reads them and says how; control holds the issue's bars (mean
#    <= 0.001 % D, worst <= 0.01 % D, quality >= 99.99 %) on every clip,
#    also on what -o wrote (and the Khronos validator finds no error there);
#  - Fox onto the compressed copy of fox_rig_autoweights, and the compressed
#    Fox onto the plain target, give the plain pair's quality within 0.05
#    point and its mean / worst errors within 2 % (issue 7's invariance).
# gltfpack's own output (-cc) holds the control, written file too; Khronos'
# Draco 2CylinderEngine (assimp-testmodels) loads and is written back.
# And: a Draco .gltf whose buffer uri leaves the model's folder ("../", or a
# symlink pointing out) is refused with that reason, exit 1 (Assimp's file
# access is confined like the native reader's); a meshopt stream whose
# header is broken is refused (exit 1, "does not decode"), and so is one
# whose count x byteStride is not the view's byteLength (the extension's rule).
# Arg 1: the skinsolve CLI.
set -u
cli="$1"
data="${SKS_SHARED_DATA:-}"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
fox="$data/Fox/Fox.glb"
target="$data/fox_targets/fox_rig_autoweights.glb"
if [ ! -f "$fox" ] || [ ! -f "$target" ]; then echo "SKIP: $fox or $target missing"; exit 77; fi
nm="$src/tools/node_modules"
if ! command -v node > /dev/null || [ ! -f "$nm/draco3dgltf/package.json" ] || [ ! -f "$nm/meshoptimizer/package.json" ] ||
   [ ! -f "$nm/@gltf-transform/extensions/package.json" ]; then
  echo "SKIP: node or tools/node_modules (draco3dgltf, meshoptimizer, @gltf-transform) missing: cd tools && npm install"
  exit 77
fi
. "$(dirname "$0")/util/sks_test.sh" compressed_gltf
tmp="$T"
fps=""
[ "${SKS_SANITIZED:-0}" = "1" ] && fps="--fps 6"
compress() { node "$src/tools/compress_gltf.mjs" "$@" > /dev/null; }

bars='
  const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
  let bad = 0;
  for (const c of d.clips) if (!(c.quality >= 99.99 && c.mean_error_pct <= 0.001 && c.worst_error_pct <= 0.01)) {
    console.error("control out of bounds", c.name, c.quality, c.mean_error_pct, c.worst_error_pct); bad = 1; }
  if (d.clips.length !== 3) { console.error("expected 3 clips, got", d.clips.length); bad = 1; }
  process.exit(bad);'
same='
  const fs = require("fs");
  const a = JSON.parse(fs.readFileSync(process.argv[1], "utf8")), b = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  let bad = 0;
  for (const c of a.clips) {
    const d = b.clips.find((x) => x.name === c.name && x.mode === c.mode);
    if (!d) { console.error("clip missing", c.name); bad = 1; continue; }
    const dq = Math.abs(d.quality - c.quality), dm = Math.abs(d.mean_error_pct / c.mean_error_pct - 1),
          dw = Math.abs(d.worst_error_pct / c.worst_error_pct - 1);
    console.log(`${process.argv[3]} ${c.name}: ${c.quality.toFixed(4)} -> ${d.quality.toFixed(4)} %, mean ` +
                `${c.mean_error_pct.toFixed(5)} -> ${d.mean_error_pct.toFixed(5)}, worst ${c.worst_error_pct.toFixed(4)} -> ` +
                `${d.worst_error_pct.toFixed(4)} %D`);
    if (!(dq <= 0.05 && dm <= 0.02 && dw <= 0.02)) { console.error("  over the tolerances (0.05 point, 2 %)"); bad = 1; }
  }
  process.exit(bad);'
# control_written LABEL FILE: control of FILE and of what its -o wrote hold
# the bars, and the written file validates
control_written() {
  "$cli" control "$2" --json --quiet $fps -o "$tmp/ctl_$1.glb" > "$tmp/ctl.json" 2> /dev/null && ok ||
    bad "$1: control: exit $?"
  node -e "$bars" < "$tmp/ctl.json" && ok || bad "$1: control misses the bars"
  "$cli" control "$tmp/ctl_$1.glb" --json --quiet $fps > "$tmp/ctl2.json" && ok || bad "$1: control of the written file: exit $?"
  node -e "$bars" < "$tmp/ctl2.json" && ok || bad "$1: control of the written file misses the bars"
  if [ -f "$nm/gltf-validator/package.json" ]; then
    node "$src/tools/validate_gltf.mjs" "$tmp/ctl_$1.glb" > /dev/null && ok || bad "$1: gltf-validator errors in the written file"
  fi
}

"$cli" bake --source "$fox" --target "$target" --json --quiet $fps > "$tmp/plain.json" && ok || bad "bake plain: exit $?"
for m in draco meshopt meshopt-filter; do
  compress "$m" "$fox" "$tmp/fox_$m.glb" && ok || bad "compress $m Fox"
  compress "$m" "$target" "$tmp/auto_$m.glb" && ok || bad "compress $m autoweights"
  ext=KHR_draco_mesh_compression; note="Draco-compressed meshes (KHR_draco_mesh_compression): read through Assimp"
  if [ "$m" != draco ]; then ext=EXT_meshopt_compression; note="EXT_meshopt_compression: [0-9]* buffer views decoded"; fi
  grep -aq "$ext" "$tmp/fox_$m.glb" && ok || bad "$m: the Fox copy does not use $ext"

  # info: read, with the note on stderr
  "$cli" info "$tmp/fox_$m.glb" > "$tmp/info.txt" 2> "$tmp/info.err" && ok || bad "$m: info: exit $?"
  grep -q "$note" "$tmp/info.err" && ok || bad "$m: info: no note saying how the file was read: $(cat "$tmp/info.err")"
  grep -q "^skeleton  26 joints" "$tmp/info.txt" && ok || bad "$m: info: not the Fox's 26 joints: $(head -3 "$tmp/info.txt")"
  for c in Survey Walk Run; do grep -q "'$c'" "$tmp/info.txt" && ok || bad "$m: info: clip $c missing"; done

  control_written "$m" "$tmp/fox_$m.glb"

  # the pair as given vs either side compressed
  "$cli" bake --source "$fox" --target "$tmp/auto_$m.glb" --json --quiet $fps > "$tmp/tgt.json" 2> /dev/null && ok ||
    bad "$m: bake onto the compressed target: exit $?"
  "$cli" bake --source "$tmp/fox_$m.glb" --target "$target" --json --quiet $fps > "$tmp/src.json" 2> /dev/null && ok ||
    bad "$m: bake from the compressed Fox: exit $?"
  for side in tgt src; do
    node -e "$same" "$tmp/plain.json" "$tmp/$side.json" "$m $side" && ok || bad "$m, $side side: numbers differ from the plain pair"
  done
done

# gltfpack's own output (meshopt, positions quantized to integers with the
# dequantization in the inverse bind matrices, seams welded): the control
# holds the bars, on what -o wrote too, and that file validates
gp="$nm/gltfpack/cli.js"
if [ -f "$gp" ]; then
  node "$gp" -i "$fox" -o "$tmp/gp_fox.glb" -cc > /dev/null 2>&1 && ok || bad "gltfpack -cc Fox"
  control_written gltfpack "$tmp/gp_fox.glb"
else
  echo "note: tools/node_modules/gltfpack missing (cd tools && npm install): gltfpack's output not checked"
fi

# a third-party Draco file (Khronos' 2CylinderEngine, assimp-testmodels):
# read with the note, repaired into a .glb that validates
eng="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}/glTF2/draco/2CylinderEngine.gltf"
if [ -f "$eng" ]; then
  "$cli" info "$eng" > "$tmp/eng.txt" 2> "$tmp/eng.err" && ok || bad "2CylinderEngine.gltf: info exit $?"
  grep -q "Draco-compressed meshes" "$tmp/eng.err" && ok || bad "2CylinderEngine.gltf: no note: $(cat "$tmp/eng.err")"
  grep -q "^parts     34 (55887 vertices" "$tmp/eng.txt" && ok || bad "2CylinderEngine.gltf: not its 34 parts: $(grep parts "$tmp/eng.txt")"
  "$cli" repair "$eng" -o "$tmp/eng.glb" > /dev/null 2>&1 && ok || bad "2CylinderEngine.gltf: repair -o exit $?"
  if [ -f "$nm/gltf-validator/package.json" ]; then
    node "$src/tools/validate_gltf.mjs" "$tmp/eng.glb" > /dev/null && ok || bad "2CylinderEngine: gltf-validator errors"
  fi
else
  echo "note: $eng missing (apt-get install assimp-testmodels): the third-party Draco file not checked"
fi

# Draco through Assimp, confined: a .gltf + .bin whose buffer lies outside the model's folder
mkdir -p "$tmp/m/model" "$tmp/m/outside"
compress draco "$fox" "$tmp/m/model/fox.gltf" && ok || bad "compress draco to .gltf"
"$cli" info "$tmp/m/model/fox.gltf" > /dev/null 2>&1 && ok || bad "the Draco .gltf + .bin copy does not load"
bin="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).buffers[0].uri)' "$tmp/m/model/fox.gltf")"
mv "$tmp/m/model/$bin" "$tmp/m/outside/$bin"
node -e '
  const fs = require("fs"), p = process.argv[1], j = JSON.parse(fs.readFileSync(p, "utf8"));
  j.buffers[0].uri = "../outside/" + j.buffers[0].uri;
  fs.writeFileSync(p, JSON.stringify(j));' "$tmp/m/model/fox.gltf"
"$cli" info "$tmp/m/model/fox.gltf" > /dev/null 2> "$tmp/out.err"; rc=$?
[ "$rc" = 1 ] && ok || bad "a buffer outside the folder: exit $rc, expected 1"
grep -q "outside the model's folder" "$tmp/out.err" && ok || bad "no reason given: $(cat "$tmp/out.err")"
ln -s "../outside/$bin" "$tmp/m/model/$bin"
node -e '
  const fs = require("fs"), p = process.argv[1], j = JSON.parse(fs.readFileSync(p, "utf8"));
  j.buffers[0].uri = j.buffers[0].uri.replace("../outside/", "");
  fs.writeFileSync(p, JSON.stringify(j));' "$tmp/m/model/fox.gltf"
"$cli" info "$tmp/m/model/fox.gltf" > /dev/null 2> "$tmp/out.err"; rc=$?
[ "$rc" = 1 ] && ok || bad "a symlink out of the folder: exit $rc, expected 1"
grep -q "outside the model's folder" "$tmp/out.err" && ok || bad "symlink: no reason given: $(cat "$tmp/out.err")"

# meshopt: a stream whose header byte is broken does not decode
mkdir -p "$tmp/c"
compress meshopt "$fox" "$tmp/c/fox.gltf" && ok || bad "compress meshopt to .gltf"
"$cli" info "$tmp/c/fox.gltf" > /dev/null 2>&1 && ok || bad "the meshopt .gltf + .bin copy does not load"
node -e '
  const fs = require("fs"), path = require("path"), p = process.argv[1], j = JSON.parse(fs.readFileSync(p, "utf8"));
  const v = j.bufferViews.find((x) => x.extensions && x.extensions.EXT_meshopt_compression);
  const e = v.extensions.EXT_meshopt_compression, f = path.join(path.dirname(p), j.buffers[e.buffer].uri);
  const b = fs.readFileSync(f); b[e.byteOffset || 0] = 0x00; fs.writeFileSync(f, b);' "$tmp/c/fox.gltf"
"$cli" info "$tmp/c/fox.gltf" > /dev/null 2> "$tmp/out.err"; rc=$?
[ "$rc" = 1 ] && ok || bad "a broken meshopt stream: exit $rc, expected 1"
grep -q "EXT_meshopt_compression: the compressed data does not decode" "$tmp/out.err" && ok ||
  bad "broken meshopt stream: no reason given: $(cat "$tmp/out.err")"

# meshopt: an extension whose count x byteStride is not the view's
# byteLength breaks the extension's rule: refused before decoding
mkdir -p "$tmp/r"
compress meshopt "$fox" "$tmp/r/fox.gltf" && ok || bad "compress meshopt to .gltf (rules)"
node -e '
  const fs = require("fs"), p = process.argv[1], j = JSON.parse(fs.readFileSync(p, "utf8"));
  j.bufferViews.find((x) => x.extensions && x.extensions.EXT_meshopt_compression).extensions.EXT_meshopt_compression.count += 1;
  fs.writeFileSync(p, JSON.stringify(j));' "$tmp/r/fox.gltf"
"$cli" info "$tmp/r/fox.gltf" > /dev/null 2> "$tmp/out.err"; rc=$?
[ "$rc" = 1 ] && ok || bad "meshopt count off by one: exit $rc, expected 1"
grep -q "is not the view's byteLength" "$tmp/out.err" && ok || bad "meshopt count off by one: $(cat "$tmp/out.err")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

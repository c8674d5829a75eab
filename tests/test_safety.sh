#!/usr/bin/env bash
# Inputs are sacred, reads stay inside (untrusted-files issue 11, items 0, 1 and 2):
#  - no command writes over one of its inputs (bake / control / pose / repair /
#    reweight, -o and --report, directly or through a symlink), nor onto a
#    FIFO or other non-regular file, nor two outputs onto one file: exit 2,
#    input unchanged;
#  - a glTF buffer uri resolves inside the model's folder only: '..' that
#    leaves it (also percent-encoded), absolute paths, file: and other schemes,
#    symlinks out of the folder are refused (exit 1, message names the uri);
#    a FIFO is refused without blocking; no more than byteLength is read.
# Files are made here (a 3-vertex skinned triangle). Usage: test_safety.sh PATH/TO/skinsolve
set -u
CLI="${1:?usage: test_safety.sh PATH/TO/skinsolve}"
. "$(dirname "$0")/util/sks_test.sh" safety

# test_cli.sh's 3-vertex, 2-joint skinned triangle (weights 0.7/0.5 and all-zero:
# `repair` makes a clean copy for the bake cases); its 244-byte buffer is external.
B64='AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAABAAAAAAAAAAEAAAAAAAAAAQAAAAAAMzMzPwAAAD8AAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAIAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAgL8AAAAAAACAPw=='
gltf() { # gltf URI > file
  cat <<JSON
{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,2]}],"nodes":[{"name":"root","children":[1]},{"name":"bone","translation":[0,2,0]},{"name":"mesh","mesh":0,"skin":0}],"skins":[{"name":"skin","joints":[0,1],"inverseBindMatrices":4}],"meshes":[{"name":"tri","primitives":[{"attributes":{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2},"indices":3}]}],"buffers":[{"byteLength":244,"uri":"$1"}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24},{"buffer":0,"byteOffset":60,"byteLength":48},{"buffer":0,"byteOffset":108,"byteLength":6},{"buffer":0,"byteOffset":116,"byteLength":128}],"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},{"bufferView":1,"componentType":5123,"count":3,"type":"VEC4"},{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"},{"bufferView":3,"componentType":5123,"count":3,"type":"SCALAR"},{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}]}
JSON
}
mkdir -p "$T/m/sub" "$T/o"
printf '%s' "$B64" | base64 -d >"$T/m/tri.bin"
check "buffer is 244 bytes" test "$(stat -c %s "$T/m/tri.bin")" = 244
cp "$T/m/tri.bin" "$T/secret.bin"            # outside the model's folder
gltf tri.bin >"$T/m/tri.gltf"
gltf "sub/../tri.bin" >"$T/m/inner_dots.gltf"
gltf "../secret.bin" >"$T/m/dotdot.gltf"
gltf "%2e%2e/secret.bin" >"$T/m/dotdot_pct.gltf"
gltf "sub/%2E%2E/%2e%2e/secret.bin" >"$T/m/dotdot_deep.gltf"
gltf "$T/secret.bin" >"$T/m/absolute.gltf"
gltf "file:///$T/secret.bin" >"$T/m/file_scheme.gltf"
gltf "file:tri.bin" >"$T/m/file_rel.gltf"
gltf "tri.bin%00.png" >"$T/m/nul.gltf"
ln -s ../secret.bin "$T/m/link.bin"
gltf "link.bin" >"$T/m/symlink.gltf"
mkfifo "$T/m/fifo.bin"
gltf "fifo.bin" >"$T/m/fifo.gltf"

# ---- reads stay inside the model's folder ----
run 0 "external buffer beside the model loads" "$CLI" pose "$T/m/tri.gltf" -o "$T/o/tri.obj"
run 0 "'sub/../tri.bin' stays inside and loads" "$CLI" pose "$T/m/inner_dots.gltf" -o "$T/o/inner.obj"
for f in dotdot dotdot_pct dotdot_deep absolute file_scheme file_rel nul symlink; do
  run 1 "$f uri refused" "$CLI" pose "$T/m/$f.gltf" -o "$T/o/$f.obj"
  check "$f: message names the file and the buffer" has "$T/err" "$f.gltf: buffer 0"
  check "$f: nothing written" test ! -e "$T/o/$f.obj"
done
check "'..' message says why" grep -q "leaves the model's folder" <(cat "$T/err" ; "$CLI" pose "$T/m/dotdot.gltf" -o "$T/o/x.obj" 2>&1)
check "symlink message says where it leads" grep -q "outside the model's folder" <("$CLI" info "$T/m/symlink.gltf" 2>&1)
start=$(date +%s)
run 1 "FIFO buffer refused without blocking" "$CLI" info "$T/m/fifo.gltf"
check "FIFO: 'not a regular file'" has "$T/err" "is not a regular file"
check "FIFO refused within 10 s" test $(( $(date +%s) - start )) -lt 10
mkfifo "$T/main_fifo.gltf"
run 1 "a FIFO as the model file is refused without blocking" "$CLI" info "$T/main_fifo.gltf"
# A 3 GB (sparse) buffer file behind a 244-byte byteLength: only 244 bytes are read.
cp "$T/m/tri.bin" "$T/m/big.bin" && truncate -s 3G "$T/m/big.bin"
gltf big.bin >"$T/m/big.gltf"
if [ "${SKS_SANITIZED:-0}" = 1 ]; then
  run 0 "3 GB buffer file, 244-byte buffer loads" "$CLI" pose "$T/m/big.gltf" -o "$T/o/big.obj"
else
  run 0 "3 GB buffer file, 244-byte buffer loads under a 1 GB address-space limit" \
    bash -c "ulimit -v 1000000; exec '$CLI' pose '$T/m/big.gltf' -o '$T/o/big.obj'"
fi
check "big.bin gives the same surface" cmp -s <(tail -n +2 "$T/o/big.obj") <(tail -n +2 "$T/o/tri.obj")

# ---- no command writes over an input ----
"$CLI" repair "$T/m/tri.gltf" -o "$T/a.glb" >/dev/null 2>&1 || bad "repair to make a .glb"
cp "$T/a.glb" "$T/b.glb"
cp "$T/a.glb" "$T/a.orig" && cp "$T/b.glb" "$T/b.orig"
ln -s a.glb "$T/link_a.glb"
ln "$T/b.glb" "$T/hard_b.glb"
unchanged() { cmp -s "$T/a.glb" "$T/a.orig" && cmp -s "$T/b.glb" "$T/b.orig" && test -L "$T/link_a.glb"; }
bake=("$CLI" bake --source "$T/a.glb" --target "$T/b.glb")
run 2 "bake -o SOURCE" "${bake[@]}" -o "$T/a.glb"
run 2 "bake -o TARGET" "${bake[@]}" -o "$T/b.glb"
check "message names the input" has "$T/err" "it is the input file"
run 2 "bake --report SOURCE" "${bake[@]}" --report "$T/a.glb"
run 2 "bake --report TARGET" "${bake[@]}" --report "$T/b.glb"
run 2 "bake -o symlink to SOURCE" "${bake[@]}" -o "$T/link_a.glb"
run 2 "bake --report hard link of TARGET" "${bake[@]}" --report "$T/hard_b.glb"
run 2 "bake -o ./dir/../SOURCE" "${bake[@]}" -o "$T/m/../a.glb"
run 2 "bake -o X --report X" "${bake[@]}" -o "$T/o/same.html" --report "$T/o/same.html"
run 2 "control -o FILE" "$CLI" control "$T/a.glb" -o "$T/a.glb"
run 2 "control --report FILE via symlink" "$CLI" control "$T/a.glb" --report "$T/link_a.glb"
run 2 "pose -o symlink to input" "$CLI" pose "$T/a.glb" -o "$T/link_a.glb"
run 2 "repair -o symlink to input" "$CLI" repair "$T/a.glb" -o "$T/link_a.glb"
run 2 "reweight -o input" "$CLI" reweight "$T/a.glb" -o "$T/a.glb"
check "inputs unchanged, symlink still a symlink" unchanged
# a .gltf's external buffer is an input too: an output naming it (directly or
# through a symlink) is refused, the buffer untouched (before: repair wrote its
# .glb over the buffer, exit 0, and the .gltf no longer loaded)
mkdir -p "$T/x"
cp "$T/m/tri.bin" "$T/x/tri.glb"
gltf tri.glb >"$T/x/tri.gltf"
cp "$T/x/tri.glb" "$T/x/tri.orig"
ln -s tri.glb "$T/x/link.glb"
run 2 "repair -o the .gltf's buffer file" "$CLI" repair "$T/x/tri.gltf" -o "$T/x/tri.glb"
check "message names the output and the buffer as the reader opened it" \
  has "$T/err" "refusing to write $T/x/tri.glb: an input's import reads or names it (as $(realpath "$T/x/tri.glb");"
run 2 "bake -o symlink to the target's buffer" "$CLI" bake --source "$T/a.glb" --target "$T/x/tri.gltf" -o "$T/x/link.glb"
run 2 "control --report the buffer" "$CLI" control "$T/x/tri.gltf" --report "$T/x/tri.glb"
cp "$T/m/tri.bin" "$T/x/buf.obj"   # pose writes .obj: a buffer of that name
gltf buf.obj >"$T/x/p.gltf"
run 2 "pose -o the buffer" "$CLI" pose "$T/x/p.gltf" -o "$T/x/buf.obj"
check "pose: message names the buffer" has "$T/err" "(as $(realpath "$T/x/buf.obj");"
check "the buffers unchanged, the link still a link" \
  sh -c "cmp -s '$T/x/tri.glb' '$T/x/tri.orig' && cmp -s '$T/x/buf.obj' '$T/m/tri.bin' && test -L '$T/x/link.glb'"
run 0 "the .gltf still loads" "$CLI" pose "$T/x/tri.gltf" -o "$T/o/x.obj"
# the files the glTF reader reports (sks_load_options.on_file_read), not a
# re-parse of the JSON, decide: a .gltf + external buffer + external PNG
# image; every command that writes, each output pointing at the buffer or
# the image directly, through a symlink or a hard link: exit 2, nothing
# changed. The file names carry the extension each command writes, so the
# refusal is the overlap, not a wrong extension.
mkdir -p "$T/g"
PNG='iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
for ext in glb obj html; do
  cp "$T/m/tri.bin" "$T/g/buf.$ext"
  printf '%s' "$PNG" | base64 -d >"$T/g/img.$ext"
  gltf "buf.$ext" | sed "s/\"buffers\":/\"images\":[{\"uri\":\"img.$ext\"}],\"buffers\":/" >"$T/g/$ext.gltf"
  for k in buf img; do
    ln -s "$k.$ext" "$T/g/sym_$k.$ext"   # relative: resolves beside it
    ln "$T/g/$k.$ext" "$T/g/hard_$k.$ext"
  done
done
sums() { (cd "$T/g" && sha256sum buf.* img.* ./*.gltf); }
sums >"$T/g.sha256"
run 0 "the .gltf with an external buffer and image loads" "$CLI" info "$T/g/glb.gltf"
for k in buf img; do
  for how in "" sym_ hard_; do
    o="$T/g/$how$k"
    what="${how:-direct }${how:+link to the }$k"
    real="$(realpath "$T/g/$k.glb")"
    run 2 "repair -o $what" "$CLI" repair "$T/g/glb.gltf" -o "$o.glb"
    check "repair -o $what: message names the file read" has "$T/err" "refusing to write $o.glb: an input's import reads or names it (as $real;"
    run 2 "bake -o $what of the target" "$CLI" bake --source "$T/a.glb" --target "$T/g/glb.gltf" -o "$o.glb"
    run 2 "bake -o $what of the source" "$CLI" bake --source "$T/g/glb.gltf" --target "$T/b.glb" -o "$o.glb"
    run 2 "reweight -o $what" "$CLI" reweight "$T/g/glb.gltf" -o "$o.glb"
    run 2 "refit -o $what of the target" "$CLI" refit --source "$T/a.glb" --target "$T/g/glb.gltf" -o "$o.glb"
    run 2 "pose -o $what" "$CLI" pose "$T/g/obj.gltf" -o "$o.obj"
    check "pose -o $what: message names the file read" has "$T/err" "(as $(realpath "$T/g/$k.obj");"
    run 2 "control --report $what" "$CLI" control "$T/g/html.gltf" --report "$o.html"
    run 2 "bake --report $what of the source" "$CLI" bake --source "$T/g/html.gltf" --target "$T/b.glb" --report "$o.html"
  done
done
# An output naming a buffer the load read, when the load then fails for
# another reason: the usage error wins (exit 2, the output-is-input message,
# nothing written), not the input error (before: exit 1). The buffer file is
# 200 bytes for a byteLength of 244 (the reader opens it, reports it, then
# fails), or the buffer is fine and the next one (the indices') is missing,
# or an accessor runs past its bufferView.
mkdir -p "$T/f"
cp "$T/m/tri.bin" "$T/f/buf.glb"
head -c 200 "$T/m/tri.bin" >"$T/f/short.glb"
cp "$T/f/short.glb" "$T/f/short.obj" # pose writes .obj: a buffer of that name
gltf short.glb >"$T/f/short.gltf"
gltf buf.glb | sed 's/"buffers":\[{"byteLength":244,"uri":"buf.glb"}\]/"buffers":[{"byteLength":244,"uri":"buf.glb"},{"byteLength":8,"uri":"missing.bin"}]/; s/{"buffer":0,"byteOffset":108,"byteLength":6}/{"buffer":1,"byteOffset":0,"byteLength":6}/' >"$T/f/second.gltf"
gltf buf.glb | sed 's/"count":3,"type":"VEC3"/"count":300,"type":"VEC3"/' >"$T/f/accessor.gltf"
gltf short.obj >"$T/f/short_obj.gltf"
(cd "$T/f" && sha256sum buf.glb short.glb short.obj) >"$T/f.sha256"
for c in "short short.glb" "second buf.glb" "accessor buf.glb"; do
  set -- $c
  run 1 "$1.gltf alone fails to load" "$CLI" info "$T/f/$1.gltf"
  o="$T/f/$2"
  real="$(realpath "$o")"
  msg="refusing to write $o: an input's import reads or names it (as $real;"
  run 2 "repair $1.gltf -o its buffer (the load fails too)" "$CLI" repair "$T/f/$1.gltf" -o "$o"
  check "repair $1.gltf: the output-is-input message" has "$T/err" "$msg"
  check "repair $1.gltf: one line, no load error" test "$(wc -l <"$T/err")" = 1
  run 2 "reweight $1.gltf -o its buffer" "$CLI" reweight "$T/f/$1.gltf" -o "$o"
  check "reweight $1.gltf: message" has "$T/err" "$msg"
  run 2 "bake --target $1.gltf -o its buffer" "$CLI" bake --source "$T/a.glb" --target "$T/f/$1.gltf" -o "$o"
  check "bake --target $1.gltf: message" has "$T/err" "$msg"
  run 2 "bake --source $1.gltf -o its buffer" "$CLI" bake --source "$T/f/$1.gltf" --target "$T/b.glb" -o "$o"
  run 2 "control $1.gltf -o its buffer" "$CLI" control "$T/f/$1.gltf" -o "$o"
  run 2 "refit --target $1.gltf -o its buffer" "$CLI" refit --source "$T/a.glb" --target "$T/f/$1.gltf" -o "$o"
done
run 2 "pose short_obj.gltf -o its buffer" "$CLI" pose "$T/f/short_obj.gltf" -o "$T/f/short.obj"
check "pose: message" has "$T/err" "refusing to write $T/f/short.obj: an input's import reads or names it"
run 2 "pose --clips short_obj.gltf -o its buffer" "$CLI" pose "$T/a.glb" --clips "$T/f/short_obj.gltf" --clip x -o "$T/f/short.obj"
check "the buffers unchanged, nothing written" sh -c "cd '$T/f' && sha256sum -c --quiet '$T/f.sha256' && ! ls -A | grep -q '\.tmp'"
check "buffers, images and .gltf files unchanged (sha256)" sh -c "cd '$T/g' && sha256sum -c --quiet '$T/g.sha256'"
check "the symlinks are still symlinks" sh -c "cd '$T/g' && for l in sym_*; do test -L \$l || exit 1; done"
run 0 "an output beside them that is none of them is written" "$CLI" repair "$T/g/glb.gltf" -o "$T/g/fixed.glb"
mkfifo "$T/o/out_fifo"
run 2 "bake -o FIFO refused" "${bake[@]}" -o "$T/o/out_fifo"
check "FIFO message" has "$T/err" "not a regular file"
run 2 "control --report FIFO refused" "$CLI" control "$T/a.glb" --report "$T/o/out_fifo"
run 2 "pose -o FIFO refused" "$CLI" pose "$T/a.glb" -o "$T/o/out_fifo"
check "FIFO still a FIFO" test -p "$T/o/out_fifo"
run 0 "pose -o a new file beside the inputs works" "$CLI" pose "$T/a.glb" -o "$T/o/new.obj"
check "pose output written" test -s "$T/o/new.obj"
check "no temp files left behind" sh -c "! ls -A '$T/o' '$T' | grep -q '\.tmp'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

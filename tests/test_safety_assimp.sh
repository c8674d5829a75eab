#!/usr/bin/env bash
# Inputs are sacred for Assimp formats too (untrusted-files issue, item 0):
# the files an Assimp import reads besides the model (an .obj's .mtl, the
# texture the .mtl names) are known exactly only once the import ran (the
# isolated child records every file it opens and sends the list back); every
# command checks every output (-o, --report, batch's outputs) against them,
# device + inode, directly, through a symlink or a hard link: exit 2, a
# message naming the output and the file, the file unchanged (sha256).
# Files are made here (a textured triangle). Usage: test_safety_assimp.sh PATH/TO/skinsolve
set -u
CLI="${1:?usage: test_safety_assimp.sh PATH/TO/skinsolve}"
. "$(dirname "$0")/util/sks_test.sh" safety_assimp
sums() { (cd "$T/m" && sha256sum mat.glb tex.html m.mtl tex.png); }

# A 2x2 red PNG.
PNG='iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAEUlEQVR4nGP4z8DwH4QZYAwAR8oH+WdZbrcAAAAASUVORK5CYII='
mkdir -p "$T/m" "$T/o"
printf '%s' "$PNG" | base64 -d >"$T/m/tex.html"  # a PNG by its bytes, named like a report
cp "$T/m/tex.html" "$T/m/tex.png"
# m.obj's material file is named like a .glb output, its texture like a .html
printf 'newmtl mat\nKd 1 1 1\nmap_Kd tex.html\n' >"$T/m/mat.glb"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nusemtl mat\nf 1/1 2/2 3/3\n' >"$T/m/tri.txt"
{ echo 'mtllib mat.glb'; cat "$T/m/tri.txt"; } >"$T/m/m.obj"
# n.obj: the usual names (m.mtl, tex.png), reached through links
printf 'newmtl mat\nKd 1 1 1\nmap_Kd tex.png\n' >"$T/m/m.mtl"
{ echo 'mtllib m.mtl'; cat "$T/m/tri.txt"; } >"$T/m/n.obj"
sums >"$T/sums.before"

# control: the model imports, its texture is read (embedded in the .glb)
run 0 "repair m.obj -o a fresh file works" "$CLI" repair "$T/m/m.obj" -o "$T/o/fresh.glb"
check "the .glb embeds the texture's bytes" grep -q "image/png" "$T/o/fresh.glb"

# directly: the .mtl as -o, the texture as --report
run 2 "repair -o the .mtl refused" "$CLI" repair "$T/m/m.obj" -o "$T/m/mat.glb"
check "message names the output and the file read" has "$T/err" "refusing to write $T/m/mat.glb: an input's import read it"
run 2 "control --report the texture refused" "$CLI" control "$T/m/m.obj" --report "$T/m/tex.html"
check "message names the texture" has "$T/err" "tex.html; choose another output"
run 2 "bake -o the .mtl refused" "$CLI" bake --source "$T/m/m.obj" --target "$T/m/m.obj" -o "$T/m/mat.glb"
run 2 "bake --report the texture refused" "$CLI" bake --source "$T/m/m.obj" --target "$T/m/m.obj" \
  -o "$T/o/b.glb" --report "$T/m/tex.html"
run 2 "refit --report the texture refused" "$CLI" refit --source "$T/m/m.obj" --target "$T/m/m.obj" \
  -o "$T/o/r.glb" --report "$T/m/tex.html"
run 2 "reweight -o the .mtl refused" "$CLI" reweight "$T/m/m.obj" -o "$T/m/mat.glb"
# through a symlink and a hard link
ln -s m.mtl "$T/m/link.glb"
ln -s tex.png "$T/m/link.obj"
ln -s ../m/tex.png "$T/o/link.html"
ln "$T/m/m.mtl" "$T/o/hard.glb"
run 2 "repair -o a symlink to the .mtl refused" "$CLI" repair "$T/m/n.obj" -o "$T/m/link.glb"
check "message names the .mtl" has "$T/err" "(as $T/m/m.mtl;"
run 2 "pose -o a symlink to the texture refused" "$CLI" pose "$T/m/n.obj" -o "$T/m/link.obj"
run 2 "control --report a symlink (other folder) to the texture refused" "$CLI" control "$T/m/n.obj" \
  --report "$T/o/link.html"
run 2 "repair -o a hard link to the .mtl refused" "$CLI" repair "$T/m/n.obj" -o "$T/o/hard.glb"
check "links still links" sh -c "test -L '$T/m/link.glb' && test -L '$T/m/link.obj' && test -L '$T/o/link.html'"

# batch: a job named like the .mtl, output into the model's folder
echo '{"name": "mat", "source": "'"$T/m/m.obj"'", "target": "'"$T/m/m.obj"'"}' >"$T/man.jsonl"
timeout 60 "$CLI" batch "$T/man.jsonl" --out "$T/m" >"$T/out" 2>"$T/err"
check "batch: the job whose .glb is the .mtl is not run" has "$T/err" "mat: not run: refusing to write $T/m/mat.glb"
check "batch: no record written for it" test ! -e "$T/m/mat.json"

sums >"$T/sums.after"
check "every file read is unchanged (sha256)" cmp -s "$T/sums.before" "$T/sums.after"
check "the hard link unchanged" cmp -s "$T/o/hard.glb" "$T/m/m.mtl"
check "no temp files left behind" sh -c "! ls -A '$T/m' '$T/o' | grep -q '\.tmp'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

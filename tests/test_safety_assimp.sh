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
check "message names the output and the file read" has "$T/err" "refusing to write $T/m/mat.glb: an input's import reads or names it"
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

# A FAILING import that had already opened the output: the child streams each
# file as it opens it, so the parent knows the .mtl even when Assimp then
# fails (an error, or killed at the deadline): the usage error wins (exit 2,
# the output-is-input message, one line), not the load's exit 1; nothing
# written. fail.obj names its .mtl (fm.glb, fm.html a symlink to it), then a
# face whose index is out of range (Assimp 5.2.5: "OBJ: vertex index out of
# range", after it read the .mtl). slow.obj names the .mtl, then one
# 12,000-sided polygon whose triangulation takes seconds (release: ~4 s):
# --timeout 1 kills it after the .mtl was read.
mkdir -p "$T/f"
printf 'newmtl mat\nKd 1 1 1\nmap_Kd tex.png\n' >"$T/f/fm.glb"
cp "$T/m/tex.png" "$T/f/tex.png"
ln -s fm.glb "$T/f/fm.html"
printf 'mtllib fm.glb\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl mat\nf 1 2 99\n' >"$T/f/fail.obj"
awk 'BEGIN { n = 12000; print "mtllib fm.glb"; for (i = 0; i < n; i++) printf "v %d %d 0\n", i, i * i
  print "usemtl mat"; printf "f"; for (i = n; i >= 1; i--) printf " %d", i; print "" }' >"$T/f/slow.obj"
(cd "$T/f" && sha256sum fm.glb tex.png) >"$T/f.sha256"
msg="refusing to write $T/f/fm.glb: an input's import reads or names it (as $T/f/fm.glb; choose another output)"
run 1 "fail.obj alone: the import fails" "$CLI" info "$T/f/fail.obj"
check "fail.obj: Assimp's error" has "$T/err" "fail.obj: Assimp cannot import it: OBJ: vertex index out of range"
run 1 "repair fail.obj -o another file: the load error (exit 1)" "$CLI" repair "$T/f/fail.obj" -o "$T/o/fail.glb"
check "repair fail.obj: nothing written" test ! -e "$T/o/fail.glb"
run 2 "repair fail.obj -o its .mtl (the import fails too)" "$CLI" repair "$T/f/fail.obj" -o "$T/f/fm.glb"
check "repair fail.obj: the output-is-input message" has "$T/err" "$msg"
check "repair fail.obj: one line, no load error" test "$(wc -l <"$T/err")" = 1
run 2 "control fail.obj --report a symlink to its .mtl" "$CLI" control "$T/f/fail.obj" --report "$T/f/fm.html"
check "control fail.obj: message names the .mtl" has "$T/err" "refusing to write $T/f/fm.html: an input's import reads or names it (as $T/f/fm.glb;"
run 2 "reweight fail.obj -o its .mtl" "$CLI" reweight "$T/f/fail.obj" -o "$T/f/fm.glb"
check "reweight fail.obj: message" has "$T/err" "$msg"
run 2 "bake --source fail.obj -o its .mtl" "$CLI" bake --source "$T/f/fail.obj" --target "$T/m/n.obj" -o "$T/f/fm.glb"
check "bake --source fail.obj: message" has "$T/err" "$msg"
run 2 "bake --target fail.obj --report its .mtl" "$CLI" bake --source "$T/m/n.obj" --target "$T/f/fail.obj" \
  -o "$T/o/fb.glb" --report "$T/f/fm.html"
run 2 "refit --target fail.obj -o its .mtl" "$CLI" refit --source "$T/m/n.obj" --target "$T/f/fail.obj" -o "$T/f/fm.glb"
check "no bake / refit output written" sh -c "test ! -e '$T/o/fb.glb'"
# killed at the deadline after it read the .mtl
t0=$(date +%s)
run 1 "info slow.obj --timeout 1: no result in 1 s" "$CLI" info "$T/f/slow.obj" --timeout 1
check "slow.obj: the timeout message" has "$T/err" "slow.obj: Assimp failed (no result in 1 s)"
run 2 "repair slow.obj --timeout 1 -o its .mtl (killed after reading it)" "$CLI" repair "$T/f/slow.obj" \
  --timeout 1 -o "$T/f/fm.glb"
check "repair slow.obj: the output-is-input message" has "$T/err" "$msg"
check "repair slow.obj: one line, no load error" test "$(wc -l <"$T/err")" = 1
run 2 "control slow.obj --timeout 1 --report a symlink to its .mtl" "$CLI" control "$T/f/slow.obj" --timeout 1 \
  --report "$T/f/fm.html"
check "the deadline ends them (3 imports of slow.obj within 20 s)" test $(($(date +%s) - t0)) -lt 20
check "fm.glb and tex.png unchanged, still a symlink, no temp file" sh -c "cd '$T/f' && sha256sum -c --quiet '$T/f.sha256' &&
  test -L fm.html && ! ls -A | grep -q '\.tmp'"
# crashed after it read the .mtl: crash.obj's first line names its .mtl
# (fc.glb, fc.html a symlink to it), whose first line is a texture before
# any "newmtl": Assimp 5.2.5's .mtl reader writes through its NULL current
# material (signal 11; under ASan the child's sanitizer reports the SEGV).
# The child had sent the .mtl before it died: exit 2 with the guard's one
# line; alone, the clean crash message (exit 1).
printf 'map_Kd tex.png\nnewmtl mat\nKd 1 1 1\n' >"$T/f/fc.glb"
ln -s fc.glb "$T/f/fc.html"
printf 'mtllib fc.glb\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl mat\nf 1 2 3\n' >"$T/f/crash.obj"
(cd "$T/f" && sha256sum fc.glb) >"$T/fc.sha256"
run 1 "info crash.obj: Assimp crashes on its .mtl" "$CLI" info "$T/f/crash.obj"
if [ -n "${SKS_SANITIZED:-}" ]; then
  check "crash.obj: the crash message" has "$T/err" "crash.obj: Assimp failed ("
else
  check "crash.obj: the crash message" has "$T/err" "crash.obj: Assimp failed (signal 11)"
fi
check "crash.obj: one line" test "$(wc -l <"$T/err")" = 1
cmsg="refusing to write $T/f/fc.glb: an input's import reads or names it (as $T/f/fc.glb; choose another output)"
run 2 "repair crash.obj -o its .mtl (the child crashed after reading it)" "$CLI" repair "$T/f/crash.obj" \
  -o "$T/f/fc.glb"
check "repair crash.obj: the output-is-input message" has "$T/err" "$cmsg"
check "repair crash.obj: one line, no crash message" test "$(wc -l <"$T/err")" = 1
run 2 "control crash.obj --report a symlink to its .mtl" "$CLI" control "$T/f/crash.obj" --report "$T/f/fc.html"
check "control crash.obj: message names the .mtl" has "$T/err" "refusing to write $T/f/fc.html: an input's import reads or names it (as $T/f/fc.glb;"
run 2 "bake --target crash.obj -o its .mtl" "$CLI" bake --source "$T/m/n.obj" --target "$T/f/crash.obj" -o "$T/f/fc.glb"
check "bake --target crash.obj: message" has "$T/err" "$cmsg"
run 1 "repair crash.obj -o another file: the crash message" "$CLI" repair "$T/f/crash.obj" -o "$T/o/crash.glb"
check "repair crash.obj: nothing written" test ! -e "$T/o/crash.glb"
check "fc.glb unchanged, fc.html still a symlink, no temp file" sh -c "cd '$T/f' &&
  sha256sum -c --quiet '$T/fc.sha256' && test -L fc.html && ! ls -A | grep -q '\.tmp'"
# the same files import when nothing fails: the guard still hears the .mtl
printf 'mtllib fm.glb\nv 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nusemtl mat\nf 1/1 2/2 3/3\n' >"$T/f/ok.obj"
run 0 "repair ok.obj (same .mtl) -o a fresh file works" "$CLI" repair "$T/f/ok.obj" -o "$T/o/ok.glb"
check "ok.glb embeds the texture" grep -q "image/png" "$T/o/ok.glb"
run 2 "repair ok.obj -o its .mtl refused" "$CLI" repair "$T/f/ok.obj" -o "$T/f/fm.glb"
check "repair ok.obj: message" has "$T/err" "$msg"

# Assimp opens only files inside the model's folder (like the native glTF
# reader's uris): an .mtl named by "../" or reached through a symlink that
# leads out is not read, so its texture is not embedded; the same .mtl
# inside the folder is (the control)
mkdir -p "$T/c/model" "$T/c/outside"
cp "$T/m/tex.png" "$T/c/model/tex.png"
printf 'newmtl mat\nKd 1 1 1\nmap_Kd tex.png\n' >"$T/c/outside/o.mtl"
{ echo 'mtllib ../outside/o.mtl'; cat "$T/m/tri.txt"; } >"$T/c/model/up.obj"
run 0 "repair up.obj (its .mtl outside the folder) still imports" "$CLI" repair "$T/c/model/up.obj" -o "$T/o/up.glb"
check "the .mtl outside the folder was not read (no texture)" sh -c "! grep -q image/png '$T/o/up.glb'"
check "a warning names the .mtl left unread" has "$T/err" "../outside/o.mtl' lies outside the model's folder: not read"
ln -s ../outside/o.mtl "$T/c/model/link.mtl"
{ echo 'mtllib link.mtl'; cat "$T/m/tri.txt"; } >"$T/c/model/link.obj"
run 0 "repair link.obj (a symlink out) still imports" "$CLI" repair "$T/c/model/link.obj" -o "$T/o/link.glb"
check "the symlinked .mtl was not read (no texture)" sh -c "! grep -q image/png '$T/o/link.glb'"
cp "$T/c/outside/o.mtl" "$T/c/model/in.mtl"
{ echo 'mtllib in.mtl'; cat "$T/m/tri.txt"; } >"$T/c/model/in.obj"
run 0 "repair in.obj (its .mtl inside) works" "$CLI" repair "$T/c/model/in.obj" -o "$T/o/in.glb"
check "the .mtl inside the folder was read (texture embedded)" grep -q "image/png" "$T/o/in.glb"

sums >"$T/sums.after"
check "every file read is unchanged (sha256)" cmp -s "$T/sums.before" "$T/sums.after"
check "the hard link unchanged" cmp -s "$T/o/hard.glb" "$T/m/m.mtl"
check "no temp files left behind" sh -c "! ls -A '$T/m' '$T/o' | grep -q '\.tmp'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

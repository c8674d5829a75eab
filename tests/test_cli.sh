#!/usr/bin/env bash
# End-to-end CLI tests: info / pose / check / repair on real files
# (assimp-testmodels' X/Testwuson.X, shared data Fox/Fox.glb) and on a small
# glTF written here with known defects (weights 0.7/0.5 and all-zero).
# Usage: test_cli.sh PATH/TO/skinsolve   (env SKS_ASSIMP_MODELS, SKS_SHARED_DATA)
# Needs only coreutils (od, cmp, stat) and awk.
set -u
CLI="${1:?usage: test_cli.sh PATH/TO/skinsolve}"
ASSIMP_MODELS="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
SHARED="${SKS_SHARED_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}"
TESTWUSON="$ASSIMP_MODELS/X/Testwuson.X"
FOX="$SHARED/Fox/Fox.glb"
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_cli_XXXXXX")"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local desc="$1"; shift; if "$@"; then ok; else bad "$desc"; fi; }

# run CODE DESC CMD... : runs CMD with stdout/stderr in $T/out, $T/err; checks the exit code.
run() {
  local want="$1" desc="$2"; shift 2
  "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" = "$want" ]; then ok; else
    bad "$desc: exit $rc, expected $want"; sed 's/^/  stderr: /' "$T/err" | head -5 >&2
  fi
}
has() { grep -qF -- "$2" "$1"; }
json_num() { sed -n "s/.*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1" | head -1; }
# max |a_i - b_i| over two .f32 files (od prints 8+ significant digits)
f32_maxdiff() {
  paste <(od -An -v -f -w4 "$1") <(od -An -v -f -w4 "$2") |
    awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.9g\n", m + 0}'
}
# value i (0-based float index) of a .f32 file
f32_at() { od -An -v -f -w4 -j $((4 * $2)) -N 4 "$1" | awk '{print $1}'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a < b)}'; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= t)}'; }
# No file besides the listed ones, and no temp leftovers, in $T/o.
only_files() {
  local got want
  got="$(cd "$T/o" && ls -A | sort | tr '\n' ' ')"
  want="$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')"
  [ "$got" = "$want" ] || { echo "  files in out dir: '$got', expected '$want'" >&2; return 1; }
}
mkdir -p "$T/o"
# Khronos glTF validator (tools/, npm) for written .glb files, when installed.
SRC="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
have_validator=0
if command -v node >/dev/null && [ -f "$SRC/tools/node_modules/gltf-validator/package.json" ]; then
  have_validator=1
else
  echo "SKIP part: glTF validator not installed (scripts/deps.sh runs npm install in tools/)"
fi
validate() {
  [ "$have_validator" = 1 ] || return 0
  if node "$SRC/tools/validate_gltf.mjs" "$1" >"$T/validator.log" 2>&1; then ok; else
    bad "validator errors in $1"; head -12 "$T/validator.log" >&2
  fi
}

# ---- --help on every command -------------------------------------------------
run 0 "skinsolve --help" "$CLI" --help
for c in info pose check repair; do
  run 0 "$c --help" "$CLI" "$c" --help
  check "$c --help shows usage" has "$T/out" "usage: skinsolve $c"
  check "$c --help shows examples" has "$T/out" "examples:"
  check "$c --help shows exit codes" has "$T/out" "exit codes"
  run 2 "$c without arguments" "$CLI" "$c"
  run 2 "$c with an unknown option" "$CLI" "$c" --no-such-option x.glb
  check "$c unknown option named" has "$T/err" "--no-such-option"
done
run 2 "unknown command" "$CLI" frobnicate

# ---- missing / unreadable input ---------------------------------------------
for c in info check; do
  run 1 "$c on a missing file" "$CLI" "$c" "$T/nope/missing.glb"
  check "$c names the missing file" has "$T/err" "missing.glb"
done
run 1 "pose on a missing file" "$CLI" pose "$T/missing.X" -o "$T/o/x.obj"
check "pose names the missing file" has "$T/err" "missing.X"
run 1 "info on a folder" "$CLI" info "$T"
printf 'this is not a model\n' >"$T/garbage.glb"
run 1 "info on a garbage .glb" "$CLI" info "$T/garbage.glb"
check "garbage file named" has "$T/err" "garbage.glb"
check "nothing written after input errors" only_files

# ---- a small glTF with known defects -----------------------------------------
# Triangle skinned to root (joint 0) and bone (joint 1). bone rest translation
# (0,2,0), inverse bind = translate(0,-1,0): in the rest pose bone's palette is
# translate(0,1,0). Vertex 0 (0,0,0) has weights 0.7/0.5 (sum 1.2), vertex 1
# (1,0,0) weight 1 on root, vertex 2 (0,1,0) all-zero weights.
cat >"$T/defects.gltf" <<'EOF'
{"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0,2]}],"nodes":[{"name":"root","children":[1]},{"name":"bone","translation":[0,2,0]},{"name":"mesh","mesh":0,"skin":0}],"skins":[{"name":"skin","joints":[0,1],"inverseBindMatrices":4}],"meshes":[{"name":"tri","primitives":[{"attributes":{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2},"indices":3}]}],"buffers":[{"byteLength":244,"uri":"data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAABAAAAAAAAAAEAAAAAAAAAAQAAAAAAMzMzPwAAAD8AAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABAAIAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AACAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAgL8AAAAAAACAPw=="}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":24},{"buffer":0,"byteOffset":60,"byteLength":48},{"buffer":0,"byteOffset":108,"byteLength":6},{"buffer":0,"byteOffset":116,"byteLength":128}],"accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},{"bufferView":1,"componentType":5123,"count":3,"type":"VEC4"},{"bufferView":2,"componentType":5126,"count":3,"type":"VEC4"},{"bufferView":3,"componentType":5123,"count":3,"type":"SCALAR"},{"bufferView":4,"componentType":5126,"count":2,"type":"MAT4"}]}
EOF
D="$T/defects.gltf"
run 1 "check finds the defects" "$CLI" check "$D"
check "weight sum finding (file, part, vertex)" has "$T/out" "defects.gltf: part 0 'tri', vertex 0: weights sum to 1.2"
check "all-zero finding" has "$T/out" "defects.gltf: part 0 'tri', vertex 2: weights sum to 0"
check "summary line" has "$T/out" "2 errors, 0 warnings (weight_sum 1, weight_zero 1)"
run 1 "check --json" "$CLI" check "$D" --json
check "check --json errors" [ "$(json_num "$T/out" errors)" = 2 ]
check "check --json kind" has "$T/out" '"kind":	"weight_sum"'
run 1 "check --json" "$CLI" check "$D" --json
check "check --json load_warnings (none)" has "$T/out" '"load_warnings":	[]'
# a bufferView no accessor reads that lies outside its buffer: the load warns,
# check counts it at the end of its summary line and lists it in --json
sed 's/"byteLength":128}\]/"byteLength":128},{"buffer":0,"byteOffset":240,"byteLength":8}]/' "$D" >"$T/view_outside.gltf"
run 1 "check, a view outside its buffer" "$CLI" check "$T/view_outside.gltf"
check "load warning on stderr" has "$T/err" "view_outside.gltf: bufferView 5 (byteOffset 240, byteLength 8) lies outside buffer 0 (244 bytes)"
check "load warning counted" has "$T/out" "2 errors, 0 warnings (weight_sum 1, weight_zero 1); 1 load warning (on stderr)"
run 1 "check --json, a view outside its buffer" "$CLI" check "$T/view_outside.gltf" --json
check "check --json load_warnings" has "$T/out" "bufferView 5 (byteOffset 240, byteLength 8) lies outside buffer 0"
run 0 "info, a view outside its buffer" "$CLI" info "$T/view_outside.gltf"
check "info counts the load warning" has "$T/out" "load      1 warning (on stderr)"
run 0 "info --json, a view outside its buffer" "$CLI" info "$T/view_outside.gltf" --json
check "info --json load_warnings" has "$T/out" "bufferView 5 (byteOffset 240, byteLength 8) lies outside buffer 0"
run 0 "info on a file with findings still exits 0" "$CLI" info "$D"
check "info summarises findings" has "$T/out" "2 errors, 0 warnings"
check "info marks skinned joints" has "$T/out" "* bone"

run 0 "pose defects (rest)" "$CLI" pose "$D" -o "$T/o/defects_rest.f32"
check "pose warns about weight errors" has "$T/err" "skin-data errors"
check "unrepaired vertex 0 y = 0.5 (weights used as stored)" near "$(f32_at "$T/o/defects_rest.f32" 1)" 0.5 1e-6

run 0 "repair defects" "$CLI" repair "$D" -o "$T/o/fixed.glb"
check "repair reports renormalising" has "$T/out" "1 vertices renormalised"
check "repair reports the zero vertex" has "$T/out" "1 all-zero vertices"
run 0 "check repaired" "$CLI" check "$T/o/fixed.glb"
validate "$T/o/fixed.glb"
run 0 "pose repaired" "$CLI" pose "$T/o/fixed.glb" -o "$T/o/fixed_rest.f32"
# 0.7/0.5 -> 0.583/0.417: vertex 0 moves by bone's weight along y.
check "repaired vertex 0 y = 0.5/1.2 (0.417)" near "$(f32_at "$T/o/fixed_rest.f32" 1)" 0.416667 1e-3
check "repaired vertex 0 y exact" near "$(f32_at "$T/o/fixed_rest.f32" 1)" 0.41666667 1e-6
check "vertex 1 untouched (1,0,0)" near "$(f32_at "$T/o/fixed_rest.f32" 3)" 1 1e-6
check "zero vertex bound to root: stays at (0,1,0)" near "$(f32_at "$T/o/fixed_rest.f32" 7)" 1 1e-6
run 0 "repair --max-influences 1" "$CLI" repair "$D" -o "$T/o/fixed1.glb" --max-influences 1
run 0 "pose limited" "$CLI" pose "$T/o/fixed1.glb" -o "$T/o/fixed1.f32"
check "limit 1 keeps the larger weight (root, 0.7 -> 1): y = 0" near "$(f32_at "$T/o/fixed1.f32" 1)" 0 1e-6
# The same rig with bone's inverse bind matrix all zeros: repair cannot fix
# that, so it lists it and writes nothing.
sed 's|CAPwAAAAAAAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAgL8AAAAAAACAPw==|AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==|' \
  "$D" >"$T/singular.gltf"
check "singular variant differs" sh -c "! cmp -s '$D' '$T/singular.gltf'"
run 1 "check singular bind" "$CLI" check "$T/singular.gltf"
check "singular bind finding" has "$T/out" "singular.gltf: skin 0 'skin', joint 1 'bone': inverse bind matrix is not invertible"
run 1 "repair refuses to write with unfixable errors" "$CLI" repair "$T/singular.gltf" -o "$T/o/singular_fixed.glb"
check "repair lists the unfixable error" has "$T/err" "inverse bind matrix is not invertible"
check "repair says nothing was written" has "$T/err" "nothing written"
run 1 "pose --bind refuses a singular bind matrix" "$CLI" pose "$T/singular.gltf" --bind -o "$T/o/singular_bind.obj"
run 2 "repair --max-influences 0" "$CLI" repair "$D" -o "$T/o/bad.glb" --max-influences 0
run 2 "repair --max-influences 9" "$CLI" repair "$D" -o "$T/o/bad.glb" --max-influences 9
run 2 "repair to a non-.glb" "$CLI" repair "$D" -o "$T/o/bad.obj"

# ---- never overwrite an input ---------------------------------------------------
cp "$D" "$T/in.glb.gltf"
cp "$T/o/fixed.glb" "$T/in.glb"
cp "$T/in.glb" "$T/in_orig.glb"
run 2 "repair -o INPUT refused" "$CLI" repair "$T/in.glb" -o "$T/in.glb"
check "refusal says why" has "$T/err" "input"
run 2 "repair -o INPUT via another spelling refused" "$CLI" repair "$T/in.glb" -o "$T/o/../in.glb"
ln "$T/in.glb" "$T/in_hardlink.glb"
run 2 "repair -o hard link of INPUT refused" "$CLI" repair "$T/in.glb" -o "$T/in_hardlink.glb"
check "input unchanged after refusals" cmp -s "$T/in.glb" "$T/in_orig.glb"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' >"$T/tri.obj"
cp "$T/tri.obj" "$T/tri_orig.obj"
run 2 "pose -o INPUT refused" "$CLI" pose "$T/tri.obj" -o "$T/tri.obj"
check "obj input unchanged" cmp -s "$T/tri.obj" "$T/tri_orig.obj"
run 2 "pose -o a folder refused" "$CLI" pose "$D" -o "$T/o"
run 3 "pose into a missing folder" "$CLI" pose "$D" -o "$T/o/no/such/dir/x.obj"
check "unwritable output named" has "$T/err" "x.obj"
run 2 "pose to an unknown extension" "$CLI" pose "$D" -o "$T/o/x.ply"
check "unknown extension explained" has "$T/err" ".obj or .f32"
run 2 "pose --time without --clip" "$CLI" pose "$D" --time 1 -o "$T/o/x.obj"
run 2 "pose --time not a number" "$CLI" pose "$D" --clip a --time abc -o "$T/o/x.obj"
run 2 "pose --bind with --clip" "$CLI" pose "$D" --bind --clip a -o "$T/o/x.obj"
run 1 "pose unknown clip on a file without clips" "$CLI" pose "$D" --clip Walk -o "$T/o/x.obj"
check "says the file has no clips" has "$T/err" "no clips"
check "nothing written on errors" only_files defects_rest.f32 fixed.glb fixed_rest.f32 fixed1.glb fixed1.f32

# ---- real files ---------------------------------------------------------------
real=0
if [ -r "$TESTWUSON" ]; then
  real=1
  run 0 "info Testwuson" "$CLI" info "$TESTWUSON"
  for clip in Wuson_Run Wuson_Walk Wuson_Bind; do check "info lists $clip" has "$T/out" "'$clip'"; done
  check "info shows the tree with skinned joints" has "$T/out" "* Spine_Back01"
  check "info shows D" has "$T/out" "D         "
  run 0 "info Testwuson --json" "$CLI" info "$TESTWUSON" --json
  cp "$T/out" "$T/tw.json"
  n="$(json_num "$T/tw.json" total_vertex_count)"
  check "Testwuson has vertices" [ "${n:-0}" -gt 0 ]
  check "json lists clips" has "$T/tw.json" '"name":	"Wuson_Walk"'
  run 0 "check Testwuson" "$CLI" check "$TESTWUSON"
  run 0 "pose Testwuson rest .f32" "$CLI" pose "$TESTWUSON" -o "$T/o/tw_rest.f32"
  check "f32 size = 12 x vertices ($n)" [ "$(stat -c %s "$T/o/tw_rest.f32")" = $((12 * n)) ]
  run 1 "pose --clip wuson (a word of three clips)" "$CLI" pose "$TESTWUSON" --clip wuson -o "$T/o/tw_amb.obj"
  check "says several clips hold the name" has "$T/err" "several clips hold the name 'wuson'"
  check "nothing written for the ambiguous name" [ ! -e "$T/o/tw_amb.obj" ]
  run 0 "pose Testwuson walk .obj" "$CLI" pose "$TESTWUSON" --clip Wuson_Walk --time 1.5 -o "$T/o/tw_walk.obj"
  check "obj has one v line per vertex" [ "$(grep -c '^v ' "$T/o/tw_walk.obj")" = "$n" ]
  check "obj faces index existing vertices" awk -v n="$n" '
    $1 == "f" { for (i = 2; i <= 4; ++i) if ($i < 1 || $i > n) bad = 1; ++f }
    END { exit bad || f == 0 }' "$T/o/tw_walk.obj"
  run 0 "pose Testwuson walk .f32" "$CLI" pose "$TESTWUSON" --clip Wuson_Walk --time 1.5 -o "$T/o/tw_walk.f32"
  run 0 "pose Testwuson bind .f32" "$CLI" pose "$TESTWUSON" --bind -o "$T/o/tw_bind.f32"
  d="$(f32_maxdiff "$T/o/tw_walk.f32" "$T/o/tw_bind.f32")"
  check "walk at 1.5 s differs from the bind pose (max $d)" lt 0.01 "$d"
  # obj and f32 of the same pose agree
  check "obj v lines equal the f32 values" awk -v n="$n" 'NR == FNR { if ($1 == "v") { x[c++] = $2; x[c++] = $3; x[c++] = $4 } next }
    { d = $1 - x[k++]; if (d < 0) d = -d; if (d > 1e-5 * (1 + ($1 < 0 ? -$1 : $1))) bad = 1 }
    END { exit bad || k != 3 * n }' "$T/o/tw_walk.obj" <(od -An -v -f -w4 "$T/o/tw_walk.f32")
  # The file's own 'Wuson_Bind' clip is its bind pose: it must agree with the
  # pose computed from the inverse bind matrices (--bind).
  run 0 "pose Testwuson Wuson_Bind clip" "$CLI" pose "$TESTWUSON" --clip Wuson_Bind -o "$T/o/tw_bindclip.f32"
  D_tw="$(json_num "$T/tw.json" diagonal)"
  d="$(f32_maxdiff "$T/o/tw_bindclip.f32" "$T/o/tw_bind.f32")"
  check "Wuson_Bind clip = --bind pose (max diff $d, D $D_tw)" lt "$d" "$(awk -v D="$D_tw" 'BEGIN {print 1e-5 * D}')"
  run 0 "pose Testwuson walk DQS" "$CLI" pose "$TESTWUSON" --clip Wuson_Walk --time 1.5 --dqs -o "$T/o/tw_walk_dqs.f32"
  check "DQS output has the same size" [ "$(stat -c %s "$T/o/tw_walk_dqs.f32")" = $((12 * n)) ]
  run 1 "unknown clip" "$CLI" pose "$TESTWUSON" --clip Gallop -o "$T/o/tw_x.obj"
  check "unknown clip named" has "$T/err" "no clip named 'Gallop'"
  check "available clips listed" has "$T/err" "'Wuson_Run', 'Wuson_Walk', 'Wuson_Bind'"
  check "no output for unknown clip" [ ! -e "$T/o/tw_x.obj" ]
else
  echo "SKIP part: $TESTWUSON not found (install Debian's assimp-testmodels)"
fi

# A real file whose weights do not sum to 1 (as Assimp reads it): check
# names them, repair fixes them, the result is clean and valid glTF.
HUES="$ASSIMP_MODELS/FBX/huesitos.fbx"
if [ -r "$HUES" ]; then
  real=1
  run 1 "check huesitos.fbx finds weight sums" "$CLI" check "$HUES"
  check "huesitos finding names file, part, vertex" grep -q "^error: huesitos.fbx: part 0 'Cylinder', vertex [0-9]*: weights sum to 0\.9" "$T/out"
  run 0 "repair huesitos.fbx" "$CLI" repair "$HUES" -o "$T/o/hues.glb"
  run 0 "repaired huesitos is clean" "$CLI" check "$T/o/hues.glb"
  validate "$T/o/hues.glb"
  run 0 "pose repaired huesitos" "$CLI" pose "$T/o/hues.glb" --bind -o "$T/o/hues.f32"
else
  echo "SKIP part: $HUES not found"
fi

if [ -r "$FOX" ]; then
  real=1
  run 0 "info Fox --json" "$CLI" info "$FOX" --json
  cp "$T/out" "$T/fox.json"
  n="$(json_num "$T/fox.json" total_vertex_count)"
  D_fox="$(json_num "$T/fox.json" diagonal)"
  check "Fox has 1728 vertices" [ "$n" = 1728 ]
  check "Fox D ~ 176" near "$D_fox" 176 2
  for clip in Survey Walk Run; do check "Fox clip $clip" has "$T/fox.json" "\"name\":	\"$clip\""; done
  run 0 "check Fox" "$CLI" check "$FOX"
  run 0 "pose Fox rest" "$CLI" pose "$FOX" -o "$T/o/fox_rest.f32"
  check "Fox f32 size = 12 x 1728" [ "$(stat -c %s "$T/o/fox_rest.f32")" = $((12 * 1728)) ]
  run 0 "pose Fox bind" "$CLI" pose "$FOX" --bind -o "$T/o/fox_bind.f32"
  # The Fox's rest pose is its bind pose: skinning at rest gives back its vertices.
  d="$(f32_maxdiff "$T/o/fox_rest.f32" "$T/o/fox_bind.f32")"
  check "Fox rest pose = bind vertices (max diff $d, D $D_fox)" lt "$d" "$(awk -v D="$D_fox" 'BEGIN {print 1e-5 * D}')"
  run 0 "pose Fox walk" "$CLI" pose "$FOX" --clip Walk --time 0.3 -o "$T/o/fox_walk.f32"
  d="$(f32_maxdiff "$T/o/fox_walk.f32" "$T/o/fox_rest.f32")"
  check "Fox walk moves vertices (max $d)" lt 1 "$d"
  # --loop: t + duration wraps to t
  dur="$(sed -n '/"name":	"Walk"/,/}/s/.*"duration":[[:space:]]*\([-0-9.eE+]*\).*/\1/p' "$T/fox.json" | head -1)"
  t2="$(awk -v t=0.3 -v d="$dur" 'BEGIN {printf "%.9g", t + d}')"
  run 0 "pose Fox walk looped" "$CLI" pose "$FOX" --clip Walk --time "$t2" --loop -o "$T/o/fox_loop.f32"
  d="$(f32_maxdiff "$T/o/fox_walk.f32" "$T/o/fox_loop.f32")"
  check "--loop: t + duration = t (max diff $d)" lt "$d" "$(awk -v D="$D_fox" 'BEGIN {print 1e-4 * D}')"
  run 0 "pose Fox walk clamped" "$CLI" pose "$FOX" --clip Walk --time 1000 -o "$T/o/fox_late.f32"
  run 0 "pose Fox walk at its end" "$CLI" pose "$FOX" --clip Walk --time "$dur" -o "$T/o/fox_end.f32"
  d="$(f32_maxdiff "$T/o/fox_late.f32" "$T/o/fox_end.f32")"
  check "time is clamped to the duration (max diff $d)" lt "$d" 1e-4
  run 1 "Fox unknown clip" "$CLI" pose "$FOX" --clip Gallop -o "$T/o/fox_x.f32"
  check "Fox clips listed" has "$T/err" "'Survey'"
  # no exact name: the one clip holding it as a word, any case
  run 0 "Fox clip by a loose name" "$CLI" pose "$FOX" --clip walk --time 0.5 -o "$T/o/fox_walk_loose.f32"
  check "the loose name is the clip Walk" has "$T/out" "clip 'Walk'"
  # a number is an index before it is a word: clips renamed a_2, b_0, c_1
  python3 - "$FOX" "$T/o/fox_renamed.glb" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", b, 12)[0]
j = json.loads(b[20:20 + n])
for a, name in zip(j["animations"], ["a_2", "b_0", "c_1"]):
    a["name"] = name
t = json.dumps(j).encode()
t += b" " * (-len(t) % 4)
rest = b[20 + n:]
open(sys.argv[2], "wb").write(struct.pack("<III", 0x46546C67, 2, 20 + len(t) + len(rest)) + struct.pack("<II", len(t), 0x4E4F534A) + t + rest)
PY
  run 0 "Fox renamed, clip by index" "$CLI" pose "$T/o/fox_renamed.glb" --clip 1 -o "$T/o/fox_idx.f32"
  check "--clip 1 is clip 1 (b_0), not the clip holding the word 1 (c_1)" has "$T/out" "clip 'b_0'"
  run 0 "Fox renamed, clip by a word" "$CLI" pose "$T/o/fox_renamed.glb" --clip c -o "$T/o/fox_word.f32"
  check "--clip c is c_1" has "$T/out" "clip 'c_1'"
  # repair of a clean file round-trips: same surface at a clip time
  run 0 "repair Fox" "$CLI" repair "$FOX" -o "$T/o/fox_repaired.glb"
  validate "$T/o/fox_repaired.glb"
  run 0 "pose repaired Fox" "$CLI" pose "$T/o/fox_repaired.glb" --clip Walk --time 0.3 -o "$T/o/fox_rep_walk.f32"
  d="$(f32_maxdiff "$T/o/fox_walk.f32" "$T/o/fox_rep_walk.f32")"
  check "repaired Fox poses like the original (max diff $d)" lt "$d" "$(awk -v D="$D_fox" 'BEGIN {print 1e-5 * D}')"
  run 0 "repair Fox --max-influences 2" "$CLI" repair "$FOX" -o "$T/o/fox_k2.glb" --max-influences 2
  check "repair reports limited vertices" has "$T/out" "vertices limited to 2 influences"
  validate "$T/o/fox_k2.glb"
  run 0 "check Fox k2 --max-influences 2" "$CLI" check "$T/o/fox_k2.glb" --max-influences 2
  check "no vertex over 2 influences" has "$T/out" "0 errors, 0 warnings"
  run 0 "check Fox --max-influences 2 warns" "$CLI" check "$FOX" --max-influences 2
  check "Fox has vertices with 3-4 influences" has "$T/out" "too_many_influences 39"
  cp "$FOX" "$T/Fox.glb"
  run 2 "repair Fox onto itself refused" "$CLI" repair "$T/Fox.glb" -o "$T/Fox.glb"
  check "Fox copy unchanged" cmp -s "$T/Fox.glb" "$FOX"
else
  echo "SKIP part: $FOX not found (set SKS_SHARED_DATA)"
fi
[ $real = 1 ] || echo "SKIP part: no real model files found; ran the synthetic cases only"
check "no temp files left behind" sh -c "! ls -A '$T/o' | grep -q '\.tmp'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

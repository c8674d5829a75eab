#!/usr/bin/env bash
# Clips from animation-only files (--clips) for info / pose / control / bake
# with exact joint-match reports (ozz FBX, assimp BVH); skeleton-only files
# ("no mesh", no made-up bone meshes); bake output order and flushing
# (header, one row per clip, progress), --quiet, --keep-clips /
# --replace-clips; pose's clamped-time message; reweight --coarsen on a
# multi-skin Collada. Arg 1 = the skinsolve binary.
set -u
cli="$1"
data="${SKS_SHARED_DATA:-}"
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
ozz="$data/ozz"
loco="$ozz/ozz_locomotions.fbx"; skel="$ozz/ozz_skeleton.fbx"; arnaud="$ozz/ozz_arnaud.fbx"
bvh="$models/BVH"
fox="$data/Fox/Fox.glb"
for f in "$loco" "$skel" "$arnaud" "$ozz/ozz_astro_max.dae" "$fox" "$bvh/01_01.bvh" "$bvh/01_03.bvh" "$bvh/Boxing_Toes.bvh"; do
  [ -f "$f" ] || { echo "SKIP: $f missing (shared data / assimp-testmodels)"; exit 77; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { grep -qF -- "$2" "$1" && ok || bad "$3: '$2' not in $(cat "$1")"; }
fps="--fps 10"
[ "${SKS_SANITIZED:-0}" = "1" ] && fps="--fps 3"

# ---- skeleton-only files: no mesh, no made-up parts ----
"$cli" info "$loco" > "$tmp/o" 2>&1 && ok || bad "info locomotions exit"
has "$tmp/o" "parts     0: no mesh" "locomotions parts"
has "$tmp/o" "D         no mesh" "locomotions D"
has "$tmp/o" "'walk': 1.333 s" "locomotions clips"
"$cli" info "$bvh/01_01.bvh" > "$tmp/o" 2>&1 && ok || bad "info bvh exit"
has "$tmp/o" "parts     0: no mesh" "BVH: Assimp's bone mesh is not a part"
has "$tmp/o" "skeleton  38 joints" "BVH joints"
"$cli" info "$bvh/01_01.bvh" --json > "$tmp/j" && ok || bad "info --json exit"
tr -d ' \t\n' < "$tmp/j" | grep -q '"diagonal":null,"skeleton_only":true' && ok || bad "json skeleton_only: $(cat "$tmp/j" | tail -12)"
"$cli" info "$skel" --json | tr -d ' \t\n' | grep -q '"skeleton_only":false' && ok || bad "a rig is not skeleton-only"

# ---- --clips: exact joint-match reports ----
"$cli" info "$skel" --clips "$loco" > "$tmp/o" 2> "$tmp/e" && ok || bad "info --clips exit: $(cat "$tmp/e")"
has "$tmp/o" "clips     3" "rig shows the anim file's clips"
has "$tmp/o" "'walk': 1.333 s, 162 tracks" "walk tracks on the rig"
has "$tmp/e" "clips from ozz_locomotions.fbx onto ozz_skeleton.fbx: 3 clips ('jog', 'run', 'walk')" "report head"
has "$tmp/e" "joints: 58 of 72 (ozz_locomotions.fbx) match 58 of 78 (ozz_skeleton.fbx) by name" "skeleton match"
has "$tmp/e" "only in ozz_skeleton.fbx: 20 (keep their rest pose): 'Bip01 HeadNub'," "rig-only joints"
has "$tmp/e" "only in ozz_locomotions.fbx: 14 (14 keyed: their tracks are dropped): 'Bip01 Footsteps', 'Bip01HeadNub'," "anim-only joints"
has "$tmp/e" "rest pose: 54 matched joints differ" "rest differences"
has "$tmp/e" "1 have other joint frames: keys retargeted by the local-rest difference: 'Pelvis'" "retargeted joints"
has "$tmp/e" "tracks: 486 kept, 48 dropped" "tracks"
"$cli" info "$arnaud" --clips "$loco" > "$tmp/o" 2> "$tmp/e" && ok || bad "arnaud --clips exit"
has "$tmp/e" "joints: 58 of 72 (ozz_locomotions.fbx) match 58 of 59 (ozz_arnaud.fbx) by name" "arnaud match"
has "$tmp/e" "only in ozz_arnaud.fbx: 1 (keep their rest pose): 'Generic_Man_LR_polySurface1'" "arnaud rig-only"
"$cli" info "$bvh/01_01.bvh" --clips "$bvh/01_03.bvh" --clips "$bvh/Boxing_Toes.bvh" > "$tmp/o" 2> "$tmp/e" && ok || bad "bvh --clips exit"
has "$tmp/e" "joints: 38 of 38 (01_03.bvh) match 38 of 38 (01_01.bvh) by name" "same BVH skeleton"
has "$tmp/e" "rest pose: 0 matched joints differ" "same BVH rest"
has "$tmp/e" "joints: 6 of 26 (Boxing_Toes.bvh) match 6 of 38 (01_01.bvh) by name" "other BVH skeleton"
has "$tmp/e" "only in Boxing_Toes.bvh: 20 (16 keyed: their tracks are dropped)" "other BVH dropped"
has "$tmp/e" "note: clip 'Motion' of Boxing_Toes.bvh is named 'Boxing_Toes.bvh:Motion'" "clash renamed"
has "$tmp/o" "'Boxing_Toes.bvh:Motion': 30.68 s" "renamed clip listed"
has "$tmp/o" "'Motion': 37.58 s" "01_03's clip listed"

# ---- pose with --clips; clamped time ----
"$cli" pose "$skel" --clips "$loco" --clip walk --time 0.5 -o "$tmp/walk.obj" > "$tmp/o" 2> "$tmp/e" && ok || bad "pose --clips exit: $(cat "$tmp/e")"
"$cli" pose "$skel" -o "$tmp/rest.obj" > /dev/null && ok || bad "pose rest"
cmp -s "$tmp/walk.obj" "$tmp/rest.obj" && bad "walk pose equals the rest pose" || ok
"$cli" pose "$fox" --clip Walk --time 99 -o "$tmp/w99.obj" > "$tmp/o" 2> /dev/null && ok || bad "pose --time 99"
has "$tmp/o" "at 99 s (clamped to 0.7083 s: the clip lasts 0.7083 s; --loop wraps)" "clamp message"
"$cli" pose "$fox" --clip Walk --time 0.3 -o "$tmp/f.obj" > "$tmp/o" && ok || bad "pose fox"
grep -q "clamped" "$tmp/o" && bad "an in-range time says clamped: $(cat "$tmp/o")" || ok
"$cli" pose "$fox" --clip Walk --time 1.0 --loop -o "$tmp/f.obj" > "$tmp/o" && ok || bad "pose fox loop"
has "$tmp/o" "(looped to 0.2917 s of 0.7083 s)" "loop message"
"$cli" pose "$loco" --clip walk -o "$tmp/x.obj" > /dev/null 2> "$tmp/e"; [ $? = 1 ] && ok || bad "pose on a skeleton-only file should exit 1"
has "$tmp/e" "no mesh" "pose no-mesh message"
[ -e "$tmp/x.obj" ] && bad "pose wrote an output for a skeleton-only file" || ok

# ---- bad --clips (a BVH as the rig: quick to load) ----
b1="$bvh/01_01.bvh"
"$cli" pose "$skel" --clips "$loco" -o "$tmp/x.obj" > /dev/null 2> "$tmp/e"; [ $? = 2 ] && ok || bad "--clips without --clip: exit 2"
"$cli" info "$b1" --clips > /dev/null 2> "$tmp/e"; [ $? = 2 ] && ok || bad "--clips without a file: exit 2"
"$cli" info "$b1" --clips "$tmp/nope.fbx" > /dev/null 2> "$tmp/e"; [ $? = 1 ] && ok || bad "--clips missing file: exit 1"
has "$tmp/e" "nope.fbx" "missing clip file named"
"$cli" info "$b1" --clips "$fox" > /dev/null 2> "$tmp/e"; [ $? = 1 ] && ok || bad "--clips with no shared joint: exit 1"
has "$tmp/e" "no joint is named like a joint of" "no-match message"
cp "$bvh/01_03.bvh" "$tmp/anim.bvh"
"$cli" pose "$fox" --clips "$tmp/anim.bvh" --clip Motion -o "$tmp/anim.bvh" > /dev/null 2> "$tmp/e"; [ $? = 2 ] && ok || bad "output = clip file: exit 2"
cmp -s "$bvh/01_03.bvh" "$tmp/anim.bvh" && ok || bad "the clip file was overwritten"
"$cli" control "$fox" --clips "$tmp/anim.bvh" --report "$tmp/anim.bvh" > /dev/null 2> "$tmp/e"; [ $? = 2 ] && ok || bad "control --report = clip file: exit 2"
has "$tmp/e" "it is the input file" "output = clip file message"
"$cli" bake --source "$fox" --target "$fox" --clips "$tmp/anim.bvh" -o "$tmp/anim.bvh" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "bake -o = clip file: exit 2"
cmp -s "$bvh/01_03.bvh" "$tmp/anim.bvh" && ok || bad "the clip file was overwritten by control / bake"

# ---- bake / control: header at once, a row per clip, progress, --quiet ----
"$cli" control "$skel" --clips "$loco" --clip jog --clip walk $fps > "$tmp/all" 2>&1 && ok || bad "control --clips exit: $(cat "$tmp/all")"
line() { grep -n -m1 -F -- "$1" "$tmp/all" | cut -d: -f1; }
h=$(line "baking ozz_skeleton.fbx -> ozz_skeleton.fbx: 78 target joints, 8433 vertices in 1 parts")
pj=$(line "baking 'jog': frame 1/"); rj=$(line "jog                      free")
pw=$(line "baking 'walk': frame 1/"); rw=$(line "walk                     free")
if [ -n "$h" ] && [ -n "$pj" ] && [ -n "$rj" ] && [ -n "$pw" ] && [ -n "$rw" ] &&
   [ "$h" -lt "$pj" ] && [ "$pj" -lt "$rj" ] && [ "$rj" -lt "$pw" ] && [ "$pw" -lt "$rw" ]; then ok
else bad "order header < progress jog < row jog < progress walk < row walk: $h $pj $rj $pw $rw: $(cat "$tmp/all")"; fi
grep -E "^(jog|walk) +free +[0-9]+ +100\.0000 " "$tmp/all" | wc -l | grep -q '^2$' && ok || bad "control rows at 100 %: $(cat "$tmp/all")"
s=$(line "bake ozz_skeleton.fbx -> ozz_skeleton.fbx: 8433 target vertices")
[ -n "$s" ] && [ -n "$rw" ] && [ "$rw" -lt "$s" ] && ok || bad "D / alignment summary after the rows: $s $rw"
"$cli" control "$fox" --clip Walk $fps --quiet -o "$tmp/q.glb" > "$tmp/o" 2> "$tmp/e" && ok || bad "--quiet exit"
[ -s "$tmp/e" ] && bad "--quiet printed on stderr: $(cat "$tmp/e")" || ok
has "$tmp/o" "Walk " "--quiet keeps the table"
# (20,010 target vertices: release build only, the sanitized one is ~20x slower)
if [ "${SKS_SANITIZED:-0}" != "1" ]; then
  "$cli" bake --source "$skel" --target "$arnaud" --clips "$loco" --clip walk $fps -o "$tmp/arn.glb" > "$tmp/o" 2> "$tmp/e" && ok || bad "bake --clips onto arnaud: $(cat "$tmp/e")"
  has "$tmp/o" "wrote $tmp/arn.glb" "bake -o"
  "$cli" info "$tmp/arn.glb" > "$tmp/o" && ok || bad "info baked"
  has "$tmp/o" "'walk': " "baked clip keeps its name"
fi

"$cli" control "$bvh/01_01.bvh" > "$tmp/o" 2> "$tmp/e"; [ $? = 1 ] && ok || bad "control on a BVH (no mesh) should exit 1"
has "$tmp/e" "no mesh (a skeleton-only file): nothing to record; give its clips to a rig instead" "control BVH message"
[ -s "$tmp/o" ] && bad "control on a BVH printed a table: $(cat "$tmp/o")" || ok
"$cli" bake --source "$skel" --target "$loco" > /dev/null 2> "$tmp/e"; [ $? = 1 ] && ok || bad "skeleton-only target: exit 1"
has "$tmp/e" "a bake target needs a mesh that follows its joints" "skeleton-only target message"

# a rig without clips (arnaud's are in locomotions.fbx): the hint, no table, nothing written
"$cli" bake --source "$arnaud" --target "$fox" -o "$tmp/noclips.glb" > "$tmp/o" 2> "$tmp/e"; [ $? = 1 ] && ok || bad "rig without clips: exit 1"
has "$tmp/e" "ozz_arnaud.fbx: has no animation clips to bake; take them from an animation file of the same skeleton: skinsolve bake --source RIG --target TGT --clips ANIM_FILE" "no-clips hint"
[ -s "$tmp/o" ] && bad "a rig without clips printed a table: $(cat "$tmp/o")" || ok
[ -e "$tmp/noclips.glb" ] && bad "a rig without clips wrote -o" || ok
"$cli" control "$arnaud" > "$tmp/o" 2> "$tmp/e"; [ $? = 1 ] && ok || bad "control without clips: exit 1"
has "$tmp/e" "skinsolve control RIG --clips ANIM_FILE" "control no-clips hint"

# ---- -o and the target's own clips ----
"$cli" control "$fox" --clip Walk $fps -o "$tmp/keep.glb" > /dev/null 2> "$tmp/e" && ok || bad "control -o keep"
has "$tmp/e" "note: the target's own clip 'Walk' is replaced by the baked clip of that name" "keep: same name replaced"
has "$tmp/e" "-o keeps the target's own 2 clips beside the baked ones" "keep note"
"$cli" info "$tmp/keep.glb" | grep -c "^  '" | grep -q '^3$' && ok || bad "--keep-clips: 3 clips"
"$cli" control "$fox" --clip Walk $fps --replace-clips -o "$tmp/repl.glb" > /dev/null 2> "$tmp/e" && ok || bad "control -o replace"
has "$tmp/e" "-o drops the target's own 3 clips (--replace-clips)" "replace note"
"$cli" info "$tmp/repl.glb" > "$tmp/o"
grep -c "^  '" "$tmp/o" | grep -q '^1$' && ok || bad "--replace-clips: 1 clip: $(cat "$tmp/o")"
has "$tmp/o" "'Walk': " "replace keeps the baked name"
"$cli" bake --help | grep -q -- "--keep-clips         -o keeps TGT's own clips beside the baked ones (the" && ok || bad "bake --help names the default"

# ---- reweight --coarsen keeps a joint for every part ----
"$cli" reweight "$ozz/ozz_astro_max.dae" --coarsen -o "$tmp/astro.glb" > "$tmp/o" 2> "$tmp/e" && ok || bad "coarsen astro_max: $(cat "$tmp/e")"
has "$tmp/o" "47 joints (was 68)" "astro_max coarse summary"

echo "$pass passed, $fail failed"
[ $fail = 0 ]

#!/usr/bin/env bash
# skinsolve batch, locally, as the engines would run it (issue 13):
#  - a manifest of >= 40 jobs over ../shared/data rigs and assimp-testmodels,
#    6 of which must fail (garbage, truncated, missing file, unknown clip, no
#    skin, an animation file without the source's joints);
#  - a reference run (one batch process), then the same manifest as 4 shards in
#    parallel processes where shard 1 is SIGKILLed mid-job and one worker of
#    shard 2 is SIGKILLed (recorded as "died by signal 9"); no partial output,
#    a re-run finishes exactly the missing jobs, --retry-failed redoes the
#    killed one; the merged summary equals the reference job for job
#    (ignoring timings) and so do the baked files' SHA-256;
#  - a second full run does no work and rewrites nothing;
#  - two workers given the same shard bake each job once, outputs intact;
#  - a changed input / a deleted output is redone, nothing else;
#  - manifest errors (unknown key, duplicate name, bad name, bad JSON, missing
#    key) exit 2 naming file:line and create nothing; an output that would
#    replace an input is refused (also one a load read: a .gltf's image);
#    the record lists exactly the files the loads read (.bin, .png); shard
#    from JOB_COMPLETION_INDEX + SKS_SHARD_COUNT and from SLURM_ARRAY_TASK_*;
#    inputs are never written.
# Arg 1 = the skinsolve binary. Needs python3 (JSON comparison).
set -u
cli="$1"
data="${SKS_SHARED_DATA:-}"
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
fox="$data/Fox/Fox.glb"
foxt="$data/fox_targets/fox_rig_autoweights.glb"
mq="$data/godot/godot_mannequiny.glb"
need=("$fox" "$foxt" "$mq" "$data/godot/godot_player.glb" "$data/godot/godot_enemy.glb"
      "$data/RiggedSimple/RiggedSimple.gltf" "$data/RobotExpressive/RobotExpressive.glb"
      "$data/CesiumMan/CesiumMan_weights_unnormalised.gltf"
      "$models/X/Testwuson.X" "$models/X/anim_test.x" "$models/X/BCN_Epileptic.X"
      "$models/glTF2/simple_skin/simple_skin.gltf" "$models/FBX/animation_with_skeleton.fbx"
      "$models/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb")
for f in "${need[@]}"; do
  if [ ! -f "$f" ]; then echo "SKIP: $f missing (shared data / assimp-testmodels)"; exit 77; fi
done
if ! command -v python3 > /dev/null; then echo "SKIP: python3 missing"; exit 77; fi
tmp="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
asan="${SKS_SANITIZED:-0}"
cd "$tmp" || exit 1

# ---- inputs: real rigs in place, procedural bad files and a reweighted target beside the manifest
printf 'this is not a model\n' > garbage.glb
head -c 3000 "$fox" > truncated.glb
"$cli" reweight "$models/X/Testwuson.X" --coarsen --rename -o wuson_target.glb > /dev/null || bad "reweight"
"$cli" reweight "$fox" -o fox_reweighted.glb > /dev/null || bad "reweight fox"
# The heavy jobs sit at manifest index 1 (shard 1, killed mid-job) and 2
# (shard 2, its worker killed): long enough to be caught while running.
# Sanitized builds run ~10x slower: there the heavy jobs are Testwuson's walk
# and the larger rigs give way to small ones (the batch code paths are the same).
heavy_src="$mq"; heavy_fps=', "clips": ["run_root.001"]'; wfps=2
[ "$asan" = 1 ] && { heavy_src="$models/X/Testwuson.X"; heavy_fps=', "clips": ["Wuson_Walk"], "fps": 2'; wfps=1; }
big() { # name source target extra: a larger rig, replaced by RiggedSimple in sanitized builds
  if [ "$asan" = 1 ]; then
    echo '{"name": "'"$1"'", "source": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "target": "'"$data"'/RiggedSimple/RiggedSimple.gltf"}'
  else
    echo '{"name": "'"$1"'", "source": "'"$2"'", "target": "'"$3"'"'"$4"'}'
  fi
}
{
  echo '{"name": "fox_walk", "source": "'"$fox"'", "target": "'"$foxt"'", "clips": ["Walk"], "fps": 4}'
  echo '{"name": "mq_all_report", "source": "'"$heavy_src"'", "target": "'"$heavy_src"'", "mode": "both", "report": true'"$heavy_fps"'}'
  echo '{"name": "mq_all_rot", "source": "'"$heavy_src"'", "target": "'"$heavy_src"'", "mode": "rotation-only"'"$heavy_fps"'}'
  echo '{"name": "bad_garbage", "source": "garbage.glb", "target": "'"$foxt"'"}'
  for c in Walk Run Survey; do
    for m in free rotation-only; do
      echo '{"name": "fox_'"$c"'_'"$m"'", "source": "'"$fox"'", "target": "'"$foxt"'", "clips": ["'"$c"'"], "mode": "'"$m"'", "fps": 3}'
    done
    echo '{"name": "fox_self_'"$c"'", "source": "'"$fox"'", "target": "'"$fox"'", "clips": ["'"$c"'"], "fps": 2}'
    big "fox_rew_$c" "$fox" fox_reweighted.glb ', "clips": ["'"$c"'"], "fps": 2, "max_constraints": 500'
  done
  echo '{"name": "fox_walk_report", "source": "'"$fox"'", "target": "'"$foxt"'", "clips": ["Walk"], "fps": 2, "report": true}'
  echo '{"name": "fox_clipfile", "source": "'"$foxt"'", "clip_files": ["'"$fox"'"], "target": "'"$foxt"'", "clips": ["Walk"], "fps": 3}'
  for c in Wuson_Walk Wuson_Run; do
    echo '{"name": "wuson_'"$c"'", "source": "'"$models"'/X/Testwuson.X", "target": "wuson_target.glb", "clips": ["'"$c"'"], "fps": '$wfps'}'
    big "wuson_self_$c" "$models/X/Testwuson.X" "$models/X/Testwuson.X" ', "clips": ["'"$c"'"], "fps": '$wfps', "mode": "both"'
  done
  echo '{"name": "riggedsimple", "source": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "target": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "mode": "both"}'
  echo '{"name": "simple_skin", "source": "'"$models"'/glTF2/simple_skin/simple_skin.gltf", "target": "'"$models"'/glTF2/simple_skin/simple_skin.gltf"}'
  big cesiumman "$data"/CesiumMan/CesiumMan_weights_unnormalised.gltf "$data"/CesiumMan/CesiumMan_weights_unnormalised.gltf ', "fps": 3'
  big "anim_test" "$models/X/anim_test.x" "$models/X/anim_test.x" ', "fps": 4'
  big bcn "$models"/X/BCN_Epileptic.X "$models"/X/BCN_Epileptic.X ', "fps": '$wfps''
  big fbx_skeleton "$models"/FBX/animation_with_skeleton.fbx "$models"/FBX/animation_with_skeleton.fbx ', "fps": 4'
  for c in Wave Running Yes Punch; do
    big "robot_$c" "$data/RobotExpressive/RobotExpressive.glb" "$data/RobotExpressive/RobotExpressive.glb" ', "clips": ["'"$c"'"], "fps": 2'
  done
  for c in idle walk; do
    big "enemy_$c" "$data/godot/godot_enemy.glb" "$data/godot/godot_enemy.glb" ', "clips": ["'"$c"'"], "fps": 3'
  done
  for c in run jump; do
    big "player_$c" "$data/godot/godot_player.glb" "$data/godot/godot_player.glb" ', "clips": ["'"$c"'"], "fps": 4'
  done
  echo ''
  echo '{"name": "bad_truncated", "source": "truncated.glb", "target": "'"$foxt"'"}'
  echo '{"name": "bad_missing", "source": "no_such_file.glb", "target": "'"$foxt"'"}'
  echo '{"name": "bad_clip", "source": "'"$fox"'", "target": "'"$foxt"'", "clips": ["Moonwalk"]}'
  echo '{"name": "bad_noskin", "source": "'"$models"'/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", "target": "'"$foxt"'"}'
  echo '{"name": "bad_clipfile", "source": "'"$foxt"'", "clip_files": ["'"$models"'/X/anim_test.x"], "target": "'"$foxt"'"}'
} > m.jsonl
njobs=$(grep -c '"name"' m.jsonl)
nbad=$(grep -c '"name": "bad_' m.jsonl)
[ "$njobs" -ge 40 ] && ok || bad "manifest has only $njobs jobs"
echo "manifest: $njobs jobs, $nbad must fail"
inputs_sum() { sha256sum garbage.glb truncated.glb wuson_target.glb fox_reweighted.glb m.jsonl "${need[@]}"; }
inputs_sum > inputs.before

# records without the fields that differ run to run (timings, worker)
norm() { python3 - "$@" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    for c in j["clips"]:
        c.pop("solve_ms", None)
print(json.dumps(d, sort_keys=True, indent=1))
EOF
}
glb_hashes() { python3 - "$1" << 'EOF'
import json, sys, glob, os
for p in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(p))
    if "skinsolve_batch_record" in r:
        print(r["name"], r["status"], (r.get("outputs") or {}).get("glb_sha256"))
EOF
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# ---- reference: one batch process
"$cli" batch m.jsonl --out ref --jobs 2 > ref.txt 2>&1
rc=$?
[ "$rc" = 1 ] && ok || bad "reference run exit $rc (want 1: some jobs fail)"
tail -1 ref.txt
python3 -c '
import json,glob
t=sorted(((json.load(open(p)).get("timings_ms") or {}).get("total",0),p) for p in glob.glob("ref/*.json"))
print("slowest jobs (ms):", ", ".join("%s %.0f" % (p[4:-5], x) for x,p in t[-6:]))'
grep -q "$((njobs - nbad)) baked, $nbad failed" ref.txt && ok || bad "reference: want $((njobs - nbad)) baked, $nbad failed: $(tail -1 ref.txt)"
"$cli" batch --summary ref --manifest m.jsonl --json > ref.json; rc=$?
[ "$rc" = 1 ] && ok || bad "summary of the reference exit $rc (want 1: failed jobs)"
python3 - ref.json "$nbad" << 'EOF' && ok || bad "reference summary content"
import json, sys
d = json.load(open(sys.argv[1])); nbad = int(sys.argv[2])
jobs = d["jobs"]
assert d["failed"] == nbad and d["missing"] == 0, (d["failed"], d["missing"])
for j in jobs:
    assert set(j) >= {"name", "status", "message", "clips"}, j.keys()
    if j["name"].startswith("bad_"):
        assert j["status"] == "failed" and j["message"] and not j["clips"], j
    else:
        assert j["status"] == "ok" and j["clips"], j
        for c in j["clips"]:
            for k in ("name", "frames", "quality", "mean_error_pct", "worst_error_pct", "solve_ms",
                      "mode", "sweeps_per_frame", "frame_mean_error_pct", "frame_worst_error_pct"):
                assert k in c, (j["name"], k)
            assert len(c["frame_mean_error_pct"]) == c["frames"]
by = {j["name"]: j for j in jobs}
# messages name the file and the problem
assert "garbage.glb" in by["bad_garbage"]["message"], by["bad_garbage"]["message"]
assert "no_such_file.glb" in by["bad_missing"]["message"], by["bad_missing"]["message"]
assert "Moonwalk" in by["bad_clip"]["message"] and "Walk" in by["bad_clip"]["message"]
assert "anim_test.x" in by["bad_clipfile"]["message"], by["bad_clipfile"]["message"]
# a self bake is the control: (near) perfect; onto another rig it is not
assert by["fox_self_Walk"]["clips"][0]["quality"] > 99.9
assert 80 < by["fox_Walk_free"]["clips"][0]["quality"] < 99.9
assert [c["mode"] for c in by["riggedsimple"]["clips"]] == ["free", "rotation-only"]
assert by["mq_all_report"].get("report") == "mq_all_report.html"
EOF
[ -s ref/mq_all_report.html ] && [ -s ref/fox_walk_report.html ] && ok || bad "reports missing"
[ ! -e ref/fox_walk.html ] && ok || bad "report written without \"report\": true"
"$cli" info ref/fox_walk.glb 2>&1 | grep -q "Walk" && ok || bad "ref/fox_walk.glb lacks the baked Walk clip"
rec=ref/bad_garbage.json
python3 -c '
import json,sys; r=json.load(open(sys.argv[1]))
assert r["status"]=="failed" and r["skinsolve_version"] and r["inputs"][0]["sha256"] and r["inputs"][0]["path"]=="garbage.glb"
' "$rec" && ok || bad "failed record lacks status / version / input hash"
python3 -c '
import json,sys,hashlib; r=json.load(open(sys.argv[1]))
assert r["status"]=="ok" and set(r["timings_ms"])>={"load","bake","write","total"}
for i in r["inputs"]: assert i["sha256"]==hashlib.sha256(open(i["path"],"rb").read()).hexdigest(), i
assert r["outputs"]["glb_sha256"]==hashlib.sha256(open("ref/fox_walk.glb","rb").read()).hexdigest()
' ref/fox_walk.json && ok || bad "ok record: timings / input SHA-256 (checked against python hashlib) / output hash"

# ---- 4 shards in parallel; shard 1 is SIGKILLed mid-job, one worker of shard 2 is killed
mkdir -p out/.claims
for s in 0 3; do "$cli" batch m.jsonl --out out --shard $s/4 --jobs 1 > shard$s.txt 2>&1 & pids+=($!); done
"$cli" batch m.jsonl --out out --shard 1/4 --jobs 1 > shard1.txt 2>&1 & s1=$!; pids+=($s1)
"$cli" batch m.jsonl --out out --shard 2/4 --jobs 1 > shard2.txt 2>&1 & s2=$!; pids+=($s2)
wait_claim() { # name -> the pid in its claim, once it exists (max ~30 s)
  for _ in $(seq 3000); do
    if [ -s "out/.claims/$1" ]; then awk '{print $2; exit}' "out/.claims/$1"; return 0; fi
    [ -e "out/$1.json" ] && return 1
    sleep 0.01
  done
  return 1
}
w1=$(wait_claim mq_all_report) && ok || bad "never saw shard 1's heavy job running"
kill -9 "$s1" 2> /dev/null
w2=$(wait_claim mq_all_rot) && ok || bad "never saw shard 2's heavy job running"
[ -n "$w2" ] && kill -9 "$w2" 2> /dev/null
wait "$s1" 2> /dev/null
for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
pids=()
sleep 0.2
dead() { ! kill -0 "$1" 2> /dev/null || grep -q '^State:[[:space:]]*[ZX]' "/proc/$1/status" 2> /dev/null; }
# SIGKILL is taken when the worker leaves the kernel: a worker inside fsync on a
# loaded machine can need a moment, so wait for it (up to 30 s), never forever
gone() { for _ in $(seq 300); do dead "$1" && return 0; sleep 0.1; done; return 1; }
[ -n "$w1" ] && gone "$w1" && ok || bad "shard 1's worker $w1 outlived its batch process by 30 s ($(grep -E '^(State|PPid)' /proc/$w1/status 2> /dev/null | tr '\n' ' '))"
[ ! -e out/mq_all_report.json ] && ok || bad "the job killed mid-run has a record"
[ -e out/.claims/mq_all_report ] && ok || bad "the killed worker's claim should be left (stale)"
python3 - out << 'EOF' && ok || bad "a record in out/ is partial or invalid after the kill"
import json, sys, glob, os
for p in glob.glob(os.path.join(sys.argv[1], "*.json")):
    r = json.load(open(p))           # raises on a partial file
    assert r["skinsolve_batch_record"] == 1 and r["status"] in ("ok", "failed"), p
EOF
grep -q "mq_all_rot: failed: the worker died by signal 9" shard2.txt && ok || bad "killed worker not recorded: $(cat shard2.txt)"
grep -q '"message":"the worker died by signal 9' out/mq_all_rot.json && ok || bad "mq_all_rot record lacks the signal message"
"$cli" batch --summary out --manifest m.jsonl > mid.txt; rc=$?
[ "$rc" = 1 ] && grep -q "^mq_all_report *missing" mid.txt && ok || bad "summary after the kill should list mq_all_report as missing (exit $rc)"
have=$(ls out/*.json | wc -l)
# the re-run (all 4 shards, as a retried Job would) finishes exactly the missing jobs
for s in 0 1 2 3; do "$cli" batch m.jsonl --out out --shard $s/4 --jobs 2 >> rerun.txt 2>&1; done
baked=$(grep -c ': baked ' rerun.txt); failed=$(grep -c ': failed: ' rerun.txt)
[ $((baked + failed)) = $((njobs - have)) ] && ok || bad "re-run did $baked + $failed jobs, $((njobs - have)) were missing"
grep -q "mq_all_report: baked" rerun.txt && ok || bad "the killed job was not redone: $(grep mq_all_report rerun.txt)"
grep -q "mq_all_rot: up to date (failed before)" rerun.txt && ok || bad "the recorded failure should stand without --retry-failed"
"$cli" batch m.jsonl --out out --shard 2/4 --retry-failed > retry.txt 2>&1
grep -q "mq_all_rot: baked" retry.txt && ok || bad "--retry-failed did not redo the killed worker's job"
grep -c ': baked ' retry.txt | grep -qx 1 && ok || bad "--retry-failed redid more than the killed job: $(cat retry.txt)"
[ -z "$(ls -A out/.claims)" ] && ok || bad "claims left behind: $(ls -A out/.claims)"
[ -z "$(find out -name '.*.tmp*')" ] && ok || bad "temporary files left: $(find out -name '.*.tmp*')"
"$cli" batch --summary out --manifest m.jsonl --json > out.json
norm ref.json > ref.norm; norm out.json > out.norm
cmp -s ref.norm out.norm && ok || { bad "sharded summary differs from the reference"; diff ref.norm out.norm | head -20; grep -h "failed" rerun.txt retry.txt | head -5; }
glb_hashes ref > ref.h; glb_hashes out > out.h
cmp -s ref.h out.h && ok || { bad "baked files differ from the reference"; diff ref.h out.h | head; }

# ---- a second full run does no work and rewrites nothing
stat -c '%n %Y %i' out/* | sort > st.before
"$cli" batch m.jsonl --out out --json > second.json; rc=$?
[ "$rc" = 1 ] && ok || bad "second run exit $rc (want 1: recorded failures)"
python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
assert d["baked"]==0 and d["failed"]==0 and d["up_to_date"]+d["up_to_date_failed"]==int(sys.argv[2]), d
' second.json "$njobs" && ok || bad "second run did work: $(head -c 300 second.json)"
stat -c '%n %Y %i' out/* | sort > st.after
cmp -s st.before st.after && ok || bad "second run rewrote files"
"$cli" batch --summary out --html > /dev/null
grep -q 'href="mq_all_report.html"' out/index.html && grep -q 'bad_garbage' out/index.html && ok || bad "index.html lacks report links / failed jobs"

# ---- a changed input and a deleted output are redone, nothing else
printf 'different garbage\n' > garbage.glb
rm out/fox_walk.glb
"$cli" batch m.jsonl --out out > change.txt 2>&1
grep -q "bad_garbage: failed" change.txt && grep -q "fox_walk: baked" change.txt && ok || bad "changed input / deleted output not redone"
[ "$(grep -c -e ': baked' -e ': failed' change.txt)" = 2 ] && ok || bad "more than 2 jobs redone: $(cat change.txt)"
printf 'this is not a model\n' > garbage.glb

# ---- two workers given the same shard: each job once, outputs intact
"$cli" batch m.jsonl --out dup --shard 0/4 --jobs 1 > dup1.txt 2>&1 & d1=$!; pids+=($d1)
"$cli" batch m.jsonl --out dup --shard 0/4 --jobs 1 > dup2.txt 2>&1 & d2=$!; pids+=($d2)
wait $d1; wait $d2; pids=()
n0=$(( (njobs + 3) / 4 ))
did=$(cat dup1.txt dup2.txt | grep -c -e ': baked' -e ': failed')
[ "$did" = "$n0" ] && ok || bad "two workers on one shard did $did jobs, the shard has $n0"
python3 - dup ref << 'EOF' && ok || bad "outputs of the duplicated shard differ from the reference"
import json, sys, glob, os
n = 0
for p in glob.glob(os.path.join(sys.argv[1], "*.json")):
    a = json.load(open(p)); b = json.load(open(os.path.join(sys.argv[2], os.path.basename(p))))
    assert a["status"] == b["status"] and (a.get("outputs") or {}).get("glb_sha256") == (b.get("outputs") or {}).get("glb_sha256"), p
    n += 1
assert n > 0
EOF

# ---- shard from the engines' variables
JOB_COMPLETION_INDEX=1 SKS_SHARD_COUNT=4 "$cli" batch m.jsonl --out out --json > k8s.json
python3 - k8s.json m.jsonl << 'EOF' && ok || bad "JOB_COMPLETION_INDEX + SKS_SHARD_COUNT shard"
import json, sys
d = json.load(open(sys.argv[1]))
names = [json.loads(l)["name"] for l in open(sys.argv[2]) if l.strip()]
assert d["shard"] == "1/4" and d["shard_from"] == "JOB_COMPLETION_INDEX", d
assert [j["name"] for j in d["jobs"]] == names[1::4]
EOF
SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=4 "$cli" batch m.jsonl --out out --json > slurm.json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["shard"]=="3/4" and d["shard_from"]=="SLURM_ARRAY_TASK_ID", d' slurm.json && ok || bad "Slurm shard"
JOB_COMPLETION_INDEX=1 "$cli" batch m.jsonl --out out > /dev/null 2> err.txt; rc=$?
[ "$rc" = 2 ] && grep -q SKS_SHARD_COUNT err.txt && ok || bad "JOB_COMPLETION_INDEX without a count: exit $rc"
"$cli" batch m.jsonl --out out --shard 4/4 > /dev/null 2>&1; [ $? = 2 ] && ok || bad "--shard 4/4 accepted"
"$cli" batch m.jsonl --out out --jobs 0 > /dev/null 2>&1; [ $? = 2 ] && ok || bad "--jobs 0 accepted"

# ---- manifest errors: exit 2, file:line named, nothing created
mkerr() { printf '%s\n' '{"name": "a", "source": "x.glb", "target": "y.glb"}' "$1" > e.jsonl; }
chk() { # want-substring
  rm -rf e.out
  "$cli" batch e.jsonl > /dev/null 2> err.txt; local rc=$?
  [ "$rc" = 2 ] && grep -q "e.jsonl:2: .*$1" err.txt && [ ! -e e.out ] && ok || bad "manifest error '$1': exit $rc, $(cat err.txt)"
}
mkerr '{"name": "b", "source": "x.glb", "target": "y.glb", "clip": ["Walk"]}'; chk 'unknown key "clip"'
mkerr '{"name": "a", "source": "x.glb", "target": "y.glb"}'; chk 'already used on line 1'
mkerr '{"name": "../evil", "source": "x.glb", "target": "y.glb"}'; chk 'name "../evil" must be'
mkerr '{"name": "b", "source": "x.glb"'; chk 'not valid JSON'
mkerr '{"name": "b", "source": "x.glb"}'; chk '"target"'
mkerr '{"name": "b", "source": "x.glb", "target": "y.glb", "mode": "fast"}'; chk '"mode" must be'
mkerr '{"name": "b", "source": "x.glb", "target": "y.glb", "name": "c"}'; chk 'appears twice'
mkerr '{"name": "b", "source": "x.glb", "target": "y.glb", "max_residual_pct": 0}'; chk '"max_residual_pct" must be'
mkerr '{"name": "b", "source": "x.glb", "target": "y.glb", "max_residual_pct": "6"}'; chk '"max_residual_pct" must be'

# ---- an output that would replace an input is refused, the input untouched
cp "$data/RiggedSimple/RiggedSimple.gltf" victim.json
echo '{"name": "victim", "source": "victim.json", "target": "'"$data"'/RiggedSimple/RiggedSimple.gltf"}' > v.jsonl
before=$(sha256sum < victim.json)
"$cli" batch v.jsonl --out . > /dev/null 2> err.txt; rc=$?
[ "$rc" = 3 ] && [ "$(sha256sum < victim.json)" = "$before" ] && ok || bad "output over an input: exit $rc, $(cat err.txt)"

# ---- claims of workers on other hosts: fresh = busy, no heartbeat for --stale-after = taken over
echo '{"name": "claimed", "source": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "target": "'"$data"'/RiggedSimple/RiggedSimple.gltf"}' > c.jsonl
mkdir -p c.out/.claims
echo "pid 1 host some-other-node time 0" > c.out/.claims/claimed
"$cli" batch c.jsonl --stale-after 30 > c1.txt 2>&1
grep -q "claimed: busy: claimed by pid 1 host some-other-node" c1.txt && [ ! -e c.out/claimed.json ] && ok || bad "a fresh claim of another host was not respected: $(cat c1.txt)"
touch -d '-40 seconds' c.out/.claims/claimed
"$cli" batch c.jsonl --stale-after 30 > c2.txt 2>&1
grep -q "claimed: baked" c2.txt && [ ! -e c.out/.claims/claimed ] && ok || bad "a stale claim was not taken over: $(cat c2.txt)"

# A .gltf's external buffer is an input too: changing only the .bin redoes the job.
if command -v python3 >/dev/null 2>&1; then
  mkdir -p ext
  python3 - "$data/RiggedSimple/RiggedSimple.gltf" ext <<'PY'
import base64, json, sys
doc = json.load(open(sys.argv[1]))
for i, b in enumerate(doc["buffers"]):
    uri = b.get("uri", "")
    if uri.startswith("data:"):
        open(f"{sys.argv[2]}/rs{i}.bin", "wb").write(base64.b64decode(uri.split(",", 1)[1]))
        b["uri"] = f"rs{i}.bin"
json.dump(doc, open(f"{sys.argv[2]}/rs.gltf", "w"))
PY
  echo '{"name": "ext_bin", "source": "ext/rs.gltf", "target": "ext/rs.gltf"}' > ext.jsonl
  "$cli" batch ext.jsonl --out ext.out > e1.txt 2>&1
  grep -q "ext_bin: baked" e1.txt && ok || bad "external-buffer job did not bake: $(cat e1.txt)"
  grep -q '"target_resource"' ext.out/ext_bin.json && ok || bad "the record does not list the .gltf's buffer file"
  "$cli" batch ext.jsonl --out ext.out > e2.txt 2>&1
  grep -q "ext_bin: up to date" e2.txt && ok || bad "unchanged external buffer: not up to date: $(cat e2.txt)"
  printf '\0' >> ext/rs0.bin   # still valid (byteLength <= size), but another file
  "$cli" batch ext.jsonl --out ext.out > e3.txt 2>&1
  grep -q "ext_bin: baked" e3.txt && ok || bad "a changed .bin was not seen: $(cat e3.txt)"
else
  echo "SKIP part: python3 not found (external-buffer hashing case)"
fi

# ---- the record lists exactly the files the loads read, as the readers report
# them (sks_load_options.on_file_read; no re-parse of the JSON): a .gltf with an
# external .bin and an external .png. A re-run re-hashes what the record lists:
# a changed .png redoes the job. An output that is one of those files is
# refused: the job is not run and gets no record, the file is untouched.
mkdir -p res
PNG='iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
printf '%s' "$PNG" | base64 -d > res/skin.png
printf '%s' "$PNG" | base64 -d > res/clash.html
python3 - "$data/RiggedSimple/RiggedSimple.gltf" res <<'PY'
import base64, json, sys
doc = json.load(open(sys.argv[1]))
for i, b in enumerate(doc["buffers"]):
    uri = b.get("uri", "")
    if uri.startswith("data:"):
        open(f"{sys.argv[2]}/rs{i}.bin", "wb").write(base64.b64decode(uri.split(",", 1)[1]))
        b["uri"] = f"rs{i}.bin"
doc["images"] = [{"uri": "skin.png"}]
json.dump(doc, open(f"{sys.argv[2]}/rs.gltf", "w"))
doc["images"] = [{"uri": "clash.html"}]
json.dump(doc, open(f"{sys.argv[2]}/clash.gltf", "w"))
PY
echo '{"name": "res_job", "source": "res/rs.gltf", "target": "res/rs.gltf", "fps": 2}' > res.jsonl
"$cli" batch res.jsonl --out res.out > r1.txt 2>&1
grep -q "res_job: baked" r1.txt && ok || bad "resource job did not bake: $(cat r1.txt)"
python3 - res.out/res_job.json "$(realpath res/rs0.bin)" "$(realpath res/skin.png)" <<'PY' && ok || bad "the record does not list exactly the .bin and the .png the loads read"
import hashlib, json, sys
r = json.load(open(sys.argv[1]))
rows = [(i["role"], i["path"]) for i in r["inputs"]]
want = [("source", "res/rs.gltf"), ("target", "res/rs.gltf")]
for role in ("source_resource", "target_resource"):
    want += [(role, sys.argv[2]), (role, sys.argv[3])]
assert rows == want, rows
for i in r["inputs"]:
    assert i["sha256"] == hashlib.sha256(open(i["path"], "rb").read()).hexdigest(), i
PY
"$cli" batch res.jsonl --out res.out > r2.txt 2>&1
grep -q "res_job: up to date" r2.txt && ok || bad "unchanged resources: not up to date: $(cat r2.txt)"
printf '\0' >> res/skin.png # another file, still read
"$cli" batch res.jsonl --out res.out > r3.txt 2>&1
grep -q "res_job: baked" r3.txt && ok || bad "a changed .png was not seen: $(cat r3.txt)"
clash_sum=$(sha256sum < res/clash.html)
echo '{"name": "clash", "source": "clash.gltf", "target": "rs.gltf", "report": true, "fps": 2}' > res/clash.jsonl
"$cli" batch res/clash.jsonl --out res > r4.txt 2>&1; rc=$?
[ "$rc" != 0 ] && grep -q "clash: not run: refusing to write res/clash.html: an input's import reads or names it (as $(realpath res/clash.html);" r4.txt && ok ||
  bad "an output that is the image a load read: exit $rc, $(cat r4.txt)"
[ ! -e res/clash.json ] && [ ! -e res/clash.glb ] && [ "$(sha256sum < res/clash.html)" = "$clash_sum" ] && ok ||
  bad "the refused job wrote something or changed the image"

# ---- a failing input never destroys earlier results (issue 11): job k bakes,
# then its target turns into garbage, or its outputs cannot be written (a file
# size limit): it fails, and its .glb / report of the earlier run stay byte
# for byte, named in the failed record ("earlier_outputs"); job o is untouched.
mkdir -p keep
cp "$data/RiggedSimple/RiggedSimple.gltf" keep/t.gltf
{ echo '{"name": "k", "source": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "target": "keep/t.gltf", "report": true}'
  echo '{"name": "o", "source": "'"$data"'/RiggedSimple/RiggedSimple.gltf", "target": "'"$data"'/RiggedSimple/RiggedSimple.gltf"}'
} > keep.jsonl
"$cli" batch keep.jsonl --out keep.out > k1.txt 2>&1
grep -q "k: baked" k1.txt && grep -q "o: baked" k1.txt && [ -s keep.out/k.glb ] && [ -s keep.out/k.html ] && ok ||
  bad "keep: first run did not bake both jobs: $(cat k1.txt)"
sha256sum keep.out/k.glb keep.out/k.html keep.out/o.glb > keep.sum
glb_sha=$(sha256sum < keep.out/k.glb | cut -d' ' -f1)
kept_ok() { # label: k failed, its earlier outputs unchanged and named by the record, o untouched
  sha256sum -c --quiet keep.sum > /dev/null 2>&1 && ok || bad "$1: an earlier output was destroyed or changed"
  python3 - keep.out/k.json "$glb_sha" <<'PY' && ok || bad "$1: the failed record does not name the earlier outputs"
import json, sys
r = json.load(open(sys.argv[1]))
e = r.get("earlier_outputs") or {}
assert r["status"] == "failed" and e.get("glb") == "k.glb" and e.get("glb_sha256") == sys.argv[2], r
assert e.get("report") == "k.html" and isinstance(e.get("finished_unix"), (int, float)), e
PY
  ls -a keep.out | grep -q '\.tmp' && bad "$1: a temp file was left" || ok
}
printf 'now garbage\n' > keep/t.gltf
"$cli" batch keep.jsonl --out keep.out > k2.txt 2>&1
grep -q "k: failed" k2.txt && grep -q "o: up to date" k2.txt && ok || bad "keep: a broken input did not fail k alone: $(cat k2.txt)"
kept_ok "a broken input"
# the summary and its index.html say which earlier files are still there
"$cli" batch --summary keep.out --json --html > ks.json 2> /dev/null
python3 - ks.json "$glb_sha" <<'PY' && ok || bad "keep: the summary does not list k's earlier outputs"
import json, sys
j = {x["name"]: x for x in json.load(open(sys.argv[1]))["jobs"]}
assert j["k"]["status"] == "failed" and j["k"]["earlier_outputs"]["glb_sha256"] == sys.argv[2], j["k"]
assert "earlier_outputs" not in j["o"], j["o"]
PY
grep -q 'kept from an earlier run: <a href="k.glb">glb</a> <a href="k.html">report</a>' keep.out/index.html && ok ||
  bad "keep: index.html does not link k's earlier outputs"
# a second failure keeps them too (the record carries them on)
printf 'other garbage\n' > keep/t.gltf
"$cli" batch keep.jsonl --out keep.out > k3.txt 2>&1
grep -q "k: failed" k3.txt && ok || bad "keep: second failure: $(cat k3.txt)"
kept_ok "a second failure"
# a write error: the target is good again (the job is redone) but no file of
# more than 32 kB can be written: the new .glb (~13 kB) could be, the report
# (~55 kB) cannot; both are staged before either replaces its destination,
# so the earlier .glb is the same file (same inode), not a rewritten copy
if command -v prlimit > /dev/null 2>&1; then
  cp "$data/RiggedSimple/RiggedSimple.gltf" keep/t.gltf
  printf ' ' >> keep/t.gltf # another file: redone
  ino=$(stat -c %i keep.out/k.glb)
  (trap '' XFSZ; exec prlimit --fsize=32768 "$cli" batch keep.jsonl --out keep.out) > k4.txt 2>&1
  grep -q "k: failed: .*k\.html: cannot write: File too large" k4.txt && ok ||
    bad "keep: a write error did not fail k naming its report: $(cat k4.txt)"
  [ "$(stat -c %i keep.out/k.glb)" = "$ino" ] && ok || bad "keep: the earlier .glb was replaced although the report failed"
  kept_ok "a write error"
else
  echo "SKIP part: prlimit not found (write-error case)"
fi

inputs_sum > inputs.after
cmp -s inputs.before inputs.after && ok || bad "an input file was written"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

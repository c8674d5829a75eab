#!/usr/bin/env bash
# deploy/: no cluster is reachable here, so the files are parsed and then run
# the way the engines would run them:
#  - deploy/k8s/indexed-job.yaml (a small YAML subset parser in python3):
#    an Indexed Job whose SKS_SHARD_COUNT equals `completions`, a container
#    command `skinsolve batch MANIFEST --out DIR` without --shard, manifest and
#    DIR on the mounted shared volume; then that command is run once per index
#    with JOB_COMPLETION_INDEX set (as Kubernetes sets it), /data mapped to a
#    temp folder: together the pods must finish every job of a manifest;
#  - deploy/slurm/array.sbatch: a contiguous #SBATCH --array without a step;
#    the script itself is run once per task with SLURM_ARRAY_TASK_ID / _MIN /
#    _COUNT as Slurm sets them: every job done, each exactly once;
#  - deploy/Dockerfile: FROM debian, runs the README's two set-up commands.
# Arg 1 = the skinsolve binary.
set -u
cli="$1"
src="${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
data="${SKS_SHARED_DATA:-}"
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
rs="$data/RiggedSimple/RiggedSimple.gltf"
ss="$models/glTF2/simple_skin/simple_skin.gltf"
for f in "$rs" "$ss"; do [ -f "$f" ] || { echo "SKIP: $f missing"; exit 77; }; done
command -v python3 > /dev/null || { echo "SKIP: python3 missing"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

mkmanifest() { # dir -> 12 cheap jobs, relative paths to copies beside the manifest
  mkdir -p "$1"
  cp "$rs" "$1/rs.gltf"; cp "$ss" "$1/ss.gltf"
  : > "$1/manifest.jsonl"
  for i in $(seq 0 5); do
    echo '{"name": "rs_'$i'", "source": "rs.gltf", "target": "rs.gltf", "fps": '$((i + 2))'}' >> "$1/manifest.jsonl"
    echo '{"name": "ss_'$i'", "source": "ss.gltf", "target": "ss.gltf", "fps": '$((i + 2))'}' >> "$1/manifest.jsonl"
  done
}

# ---- Kubernetes
python3 - "$src/deploy/k8s/indexed-job.yaml" > "$tmp/k8s.json" << 'EOF'
# A YAML subset: block mappings and sequences by indentation, scalars,
# quoted strings, flow sequences of JSON strings; '#' comments. Enough for
# our Job file, and it refuses anything else instead of guessing.
import json, sys, re
lines = []
for raw in open(sys.argv[1]):
    s = raw.rstrip("\n")
    if not s.strip() or s.lstrip().startswith("#"): continue
    if "\t" in s[: len(s) - len(s.lstrip())]: sys.exit("tab indentation")
    lines.append((len(s) - len(s.lstrip()), s.strip()))
def scalar(v):
    v = v.strip()
    if v.startswith("[") or v.startswith('"'): return json.loads(v)
    if re.fullmatch(r"-?\d+", v): return int(v)
    if v in ("true", "false"): return v == "true"
    return v
def block(i, ind):
    if lines[i][1].startswith("- "): return seq(i, ind)
    return mapping(i, ind)
def mapping(i, ind, first=None):
    out = {}
    while i < len(lines):
        d, s = lines[i]
        if first is not None: d, s, first = ind, first, None
        elif d != ind: break
        m = re.fullmatch(r"([A-Za-z_][\w.-]*):(?:\s+(.*))?", s)
        if not m: sys.exit("unsupported line: " + s)
        k, v = m.group(1), m.group(2)
        if k in out: sys.exit("duplicate key " + k)
        i += 1
        if v is None or v == "":
            if i < len(lines) and lines[i][0] > ind: out[k], i = block(i, lines[i][0])
            elif i < len(lines) and lines[i][0] == ind and lines[i][1].startswith("- "): out[k], i = seq(i, ind)
            else: out[k] = None
        else: out[k] = scalar(v)
    return out, i
def seq(i, ind):
    out = []
    while i < len(lines) and lines[i][0] == ind and lines[i][1].startswith("- "):
        item = lines[i][1][2:]
        if re.match(r"[A-Za-z_][\w.-]*:", item):
            lines[i] = (ind + 2, item)
            v, i = mapping(i, ind + 2)
        else:
            v, i = scalar(item), i + 1
        out.append(v)
    return out, i
doc, end = block(0, 0)
if end != len(lines): sys.exit("trailing lines not parsed")
print(json.dumps(doc))
EOF
[ $? = 0 ] && ok || bad "indexed-job.yaml does not parse"
mkmanifest "$tmp/k8s_data"
python3 - "$tmp/k8s.json" > "$tmp/k8s.cmd" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["apiVersion"] == "batch/v1" and d["kind"] == "Job", d.get("kind")
s = d["spec"]
assert s["completionMode"] == "Indexed", "not an Indexed Job: JOB_COMPLETION_INDEX would be unset"
n = s["completions"]
assert isinstance(n, int) and n >= 1 and 1 <= s["parallelism"] <= n
pod = s["template"]["spec"]
assert pod["restartPolicy"] in ("Never", "OnFailure")
c, = pod["containers"]
env = {e["name"]: e["value"] for e in c.get("env", [])}
assert env.get("SKS_SHARD_COUNT") == str(n), ("SKS_SHARD_COUNT must equal completions", env, n)
cmd = c["command"] + c.get("args", [])
assert cmd[:2] == ["skinsolve", "batch"], cmd
assert "--shard" not in cmd, "the shard must come from JOB_COMPLETION_INDEX"
out = cmd[cmd.index("--out") + 1]
manifest = cmd[2]
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
(vname, mpath), = mounts.items()
assert vname in vols and "persistentVolumeClaim" in vols[vname], "shared volume"
assert manifest.startswith(mpath + "/") and out.startswith(mpath + "/"), (manifest, out, mpath)
print(n, mpath, json.dumps(cmd[1:]))
EOF
[ $? = 0 ] && ok || bad "indexed-job.yaml content"
read -r n mpath cmdjson < "$tmp/k8s.cmd"
[ -n "${n:-}" ] || n=0
for i in $(seq 0 $((n - 1))); do
  # the container's command, /data -> the temp folder, skinsolve -> this build
  mapfile -t args < <(python3 -c 'import json,sys; [print(a.replace(sys.argv[2], sys.argv[3], 1)) for a in json.loads(sys.argv[1])]' "$cmdjson" "$mpath" "$tmp/k8s_data")
  env -u SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=$i SKS_SHARD_COUNT=$n "$cli" "${args[@]}" >> "$tmp/k8s.log" 2>&1 || bad "k8s pod $i exit $?"
done
grep -c ': baked ' "$tmp/k8s.log" | grep -qx 12 && ok || bad "k8s pods baked $(grep -c ': baked ' "$tmp/k8s.log") of 12 jobs"
[ "$(grep -c "(JOB_COMPLETION_INDEX)" "$tmp/k8s.log")" = "$n" ] && ok || bad "pods did not take the shard from JOB_COMPLETION_INDEX"
"$cli" batch --summary "$tmp/k8s_data/out" --manifest "$tmp/k8s_data/manifest.jsonl" > /dev/null && ok || bad "k8s summary: jobs missing"

# ---- Slurm
arr=$(sed -n 's/^#SBATCH --array=\([0-9]*-[0-9]*\)\(%[0-9]*\)\{0,1\}$/\1/p' "$src/deploy/slurm/array.sbatch")
[ -n "$arr" ] && ok || bad "array.sbatch lacks a contiguous '#SBATCH --array=A-B' (no step)"
lo=${arr%-*}; hi=${arr#*-}; [ -n "$arr" ] || { lo=0; hi=-1; }
grep -q '^#!/usr/bin/env bash' "$src/deploy/slurm/array.sbatch" && ok || bad "array.sbatch: no bash shebang"
grep -q -- '--shard' "$src/deploy/slurm/array.sbatch" && bad "array.sbatch passes --shard (the shard must come from SLURM_ARRAY_TASK_ID)" || ok
mkmanifest "$tmp/slurm_data"
count=$((hi - lo + 1))
for t in $(seq "$lo" "$hi"); do
  (cd "$tmp/slurm_data" && env -u JOB_COMPLETION_INDEX SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_MIN=$lo \
     SLURM_ARRAY_TASK_MAX=$hi SLURM_ARRAY_TASK_COUNT=$count SLURM_CPUS_PER_TASK=1 SKINSOLVE="$cli" \
     SKS_MANIFEST=manifest.jsonl SKS_OUT=out bash "$src/deploy/slurm/array.sbatch") >> "$tmp/slurm.log" 2>&1 \
     || bad "slurm task $t exit $?"
done
grep -c ': baked ' "$tmp/slurm.log" | grep -qx 12 && ok || bad "slurm tasks baked $(grep -c ': baked ' "$tmp/slurm.log") of 12 jobs"
[ "$(grep -c "(SLURM_ARRAY_TASK_ID)" "$tmp/slurm.log")" = "$count" ] && ok || bad "tasks did not take the shard from SLURM_ARRAY_TASK_ID"
"$cli" batch --summary "$tmp/slurm_data/out" --manifest "$tmp/slurm_data/manifest.jsonl" > /dev/null && ok || bad "slurm summary: jobs missing"

# ---- Dockerfile: Debian + the README's two set-up commands
df="$src/deploy/Dockerfile"
grep -q '^FROM debian:' "$df" && ok || bad "Dockerfile is not FROM debian"
for c in $(sed -n '/^```$/,/^```$/p' "$src/README.md" | grep -o 'scripts/run-[a-z]*\.sh' | head -2); do
  grep -q "^RUN .*bash $c" "$df" && ok || bad "Dockerfile does not run '$c' (README set-up)"
done
grep -q '^ENTRYPOINT \["skinsolve"\]' "$df" && ok || bad "Dockerfile entrypoint"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

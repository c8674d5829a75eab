#!/usr/bin/env bash
# skinsolve batch throughput (not run in CI; speed is never asserted in tests).
# Usage: bash bench/bench_batch.sh build/skinsolve [REPEAT]
# Manifest: REPEAT (default 4) x {Fox's 3 clips onto Blender's automatic
# weights (1,728 vertices, 24 joints), godot mannequiny's 10 clips onto itself
# (12,597 vertices)}, every clip at its own key times (no --fps), no report.
# Runs it at --jobs 1 and --jobs 2 into fresh folders and prints jobs/s,
# clips/s, the --jobs 2 / --jobs 1 ratio, and the projected wall time for
# 10,000 rigs x 200 clips on N nodes (each node like this machine, running
# --jobs = its cores) from the measured seconds per clip.
set -eu
cli="$1"
rep="${2:-4}"
data="${SKS_SHARED_DATA:-$(cd "$(dirname "$0")/.." && pwd)/../shared/data}"
fox="$data/Fox/Fox.glb"; foxt="$data/fox_targets/fox_rig_autoweights.glb"
mq="$data/godot/godot_mannequiny.glb"
for f in "$fox" "$foxt" "$mq"; do [ -f "$f" ] || { echo "missing $f"; exit 1; }; done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$rep"); do
  echo '{"name": "fox_'$i'", "source": "'"$fox"'", "target": "'"$foxt"'"}'
  echo '{"name": "mq_'$i'", "source": "'"$mq"'", "target": "'"$mq"'"}'
done > "$tmp/m.jsonl"
declare -A wall
for j in 1 2; do
  "$cli" batch "$tmp/m.jsonl" --out "$tmp/out$j" --jobs $j --json > "$tmp/r$j.json" || true
  wall[$j]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wall_s"])' "$tmp/r$j.json")
done
python3 - "$tmp" "${wall[1]}" "${wall[2]}" "$(nproc)" << 'EOF'
import json, glob, os, sys
tmp, w1, w2, cores = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
recs = [json.load(open(p)) for p in glob.glob(os.path.join(tmp, "out1", "*.json"))]
jobs = len(recs); clips = sum(len(r.get("clips", [])) for r in recs)
assert all(r["status"] == "ok" for r in recs), [r["message"] for r in recs if r["status"] != "ok"]
print("jobs %d, clips %d, cores %d" % (jobs, clips, cores))
print("%-10s %8s %8s %9s" % ("workers", "wall s", "jobs/s", "clips/s"))
for j, w in ((1, w1), (2, w2)):
    print("%-10s %8.2f %8.2f %9.2f" % ("--jobs %d" % j, w, jobs / w, clips / w))
print("ratio --jobs 2 / --jobs 1: %.2f" % (w1 / w2))
for kind in ("fox", "mq"):
    rs = [r for r in recs if r["name"].startswith(kind)]
    t = sum(r["timings_ms"]["total"] for r in rs) / max(1, sum(len(r["clips"]) for r in rs))
    print("%s: %.0f ms per clip (one worker; load + bake + write)" % (kind, t))
per_clip = w2 / clips * 2  # seconds of one core per clip at --jobs 2
total = 10000 * 200
print("projection, 10,000 rigs x 200 clips = %d clip bakes at %.3f core-s per clip:" % (total, per_clip))
for n in (1, 10, 100, 1000):
    h = total * per_clip / (n * cores) / 3600
    print("  %5d node(s) x %d cores: %8.1f h" % (n, cores, h))
EOF

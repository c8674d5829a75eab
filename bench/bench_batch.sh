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
for j in 1 2; do
  "$cli" batch "$tmp/m.jsonl" --out "$tmp/out$j" --jobs $j --json > "$tmp/r$j.json" || true
done
python3 - "$tmp" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" << 'EOF'
import json, glob, os, sys
tmp, cores, load = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r1, r2 = (json.load(open(os.path.join(tmp, "r%d.json" % j))) for j in (1, 2))
w1, w2 = r1["wall_s"], r2["wall_s"]
recs = [json.load(open(p)) for p in glob.glob(os.path.join(tmp, "out1", "*.json"))]
jobs = len(recs); clips = sum(len(r.get("clips", [])) for r in recs)
assert all(r["status"] == "ok" for r in recs), [r["message"] for r in recs if r["status"] != "ok"]
print("jobs %d, clips %d, cores %d, load average %s (other processes share the cores)" % (jobs, clips, cores, load))
print("%-10s %8s %8s %9s %13s %16s" % ("workers", "wall s", "jobs/s", "clips/s", "worker CPU s", "CPU s per clip"))
for j, r in ((1, r1), (2, r2)):
    w = r["wall_s"]
    print("%-10s %8.2f %8.2f %9.2f %13.2f %16.3f" % ("--jobs %d" % j, w, jobs / w, clips / w, r["worker_cpu_s"], r["worker_cpu_s"] / clips))
print("ratio --jobs 2 / --jobs 1: %.2f" % (w1 / w2))
for kind in ("fox", "mq"):
    rs = [r for r in recs if r["name"].startswith(kind)]
    t = sum(r["timings_ms"]["total"] for r in rs) / max(1, sum(len(r["clips"]) for r in rs))
    print("%s: %.0f ms per clip (one worker; load + bake + write)" % (kind, t))
total = 10000 * 200
wall_clip = w2 / clips * min(2, cores)   # measured: core-seconds per clip at --jobs 2, this load
cpu_clip = r2["worker_cpu_s"] / clips    # CPU only: what an otherwise idle core needs
print("projection, 10,000 rigs x 200 clips = %d clip bakes, nodes of %d cores each:" % (total, cores))
print("  %10s %22s %22s" % ("nodes", "at measured wall/clip", "at CPU/clip (idle)"))
for n in (1, 10, 100, 1000):
    print("  %10d %20.1f h %20.1f h" % (n, total * wall_clip / (n * cores) / 3600, total * cpu_clip / (n * cores) / 3600))
EOF

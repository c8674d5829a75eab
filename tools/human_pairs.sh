#!/usr/bin/env bash
# The README's human-pair table: every ordered pair of seven real human rigs
# (CesiumMan, Godot's mannequiny and player robot, RobotExpressive, ozz's two
# astronauts from ../shared/data, and assimp-testmodels' X/BCN_Epileptic.X),
# each source's first clip, `skinsolve bake --threads 1 --json`. One line per
# pair: source, target, quality %, mean / worst error %D, the alignment's mean
# distance (% D), alignment seconds, finalists, the rotation found, what the
# joints' names say (label / head agreement, the head's direction off the
# target's in degrees: README "Joint names"), the feet's direction off the
# target's (degrees, README "The feet's direction"); or REFUSED with the distance.
# Then the count that bake, their median and mean quality.
# Usage: tools/human_pairs.sh SKINSOLVE [SHARED_DATA] [-- extra bake options]
#   SHARED_DATA: default ../shared/data beside the repository, or $SKS_SHARED_DATA
#   e.g. tools/human_pairs.sh build/skinsolve -- --max-residual 5
# Not run in CI (42 bakes: ~4 minutes on one core).
set -u
cli="${1:?usage: tools/human_pairs.sh SKINSOLVE [SHARED_DATA] [-- bake options]}"
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
data="${SKS_SHARED_DATA:-$here/../shared/data}"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then data="$1"; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
models="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
rigs=("$data/CesiumMan/CesiumMan_weights_unnormalised.gltf" "$data/godot/godot_mannequiny.glb"
      "$data/godot/godot_player.glb" "$data/RobotExpressive/RobotExpressive.glb"
      "$data/ozz/ozz_astro_max.dae" "$data/ozz/ozz_astro_maya.dae" "$models/X/BCN_Epileptic.X")
for f in "${rigs[@]}"; do
  [ -f "$f" ] || { echo "missing $f (set SKS_SHARED_DATA / SKS_ASSIMP_MODELS)" >&2; exit 2; }
done
command -v python3 > /dev/null || { echo "needs python3 (JSON)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for a in "${rigs[@]}"; do
  clip="$("$cli" info "$a" --json 2> /dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["clips"][0]["name"])')"
  for b in "${rigs[@]}"; do
    [ "$a" = "$b" ] && continue
    if "$cli" bake --source "$a" --target "$b" --clip "$clip" --threads 1 --json "$@" > "$tmp/out.json" 2> "$tmp/err.txt"; then
      python3 - "$a" "$b" "$tmp/out.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[3])); c = d["clips"][0]; a = d["alignment"]
q = c["quality"] if c["quality"] is not None else float("nan")
def n(v, f): return "  n/a" if v is None else f % v
print("%-36s %-36s %8.3f %7.4f %7.3f dist %5.2f %6.2f s %d fin %6.1f deg names %s head %s up %s feet %s" % (
      os.path.basename(sys.argv[1]), os.path.basename(sys.argv[2]), q, c["mean_error_pct"], c["worst_error_pct"],
      a["mean_distance_pct"], a["seconds"], len(a["finalists"]), a["angle_deg"], n(a.get("label_agreement"), "%.2f"),
      n(a.get("head_agreement"), "%.2f"), n(a.get("up_deg"), "%5.1f"), n(a.get("facing_deg"), "%5.1f")))
EOF
    else
      printf '%-36s %-36s REFUSED %s\n' "$(basename "$a")" "$(basename "$b")" "$(grep -o 'on average [0-9.]*%' "$tmp/err.txt")"
    fi
  done
done | tee "$tmp/table.txt"
awk '$3 != "REFUSED" { print $3 }' "$tmp/table.txt" | sort -g |
  awk -v r="$(grep -c ' REFUSED' "$tmp/table.txt")" '{ q[++n] = $1; s += $1 }
       END { if (!n) { print "0 bake, " r " refused"; exit }
             m = n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2;
             printf "%d bake, %d refused; quality median %.3f %%, mean %.3f %%\n", n, r, m, s / n }'

#!/usr/bin/env bash
# The control run over every file under a folder (default: Debian's
# assimp-testmodels): `skinsolve control FILE --json` on each, one line per
# file that bakes (clips, lowest quality, largest mean / worst error, % D),
# then how many bake, how many miss the control's bars (mean <= 0.001 %D,
# worst <= 0.01 %D on every clip), and those files. Files that do not load,
# or have no clips or no mesh that follows a joint, are counted, not listed.
# Exit 1 when any file misses the bars. Not run in CI (15 s for the 595
# files of assimp-testmodels on 2 cores, 2026-12-05); test_control runs a fixed subset.
#   usage: tools/control_sweep.sh [SKINSOLVE] [DIR]
set -u
cli=${1:-build/skinsolve}
dir=${2:-/usr/share/assimp/models}
if [ ! -x "$cli" ]; then echo "usage: $0 [path/to/skinsolve] [DIR]: $cli is not an executable" >&2; exit 2; fi
if [ ! -d "$dir" ]; then echo "$0: $dir: no such folder (apt-get install assimp-testmodels)" >&2; exit 2; fi
command -v node > /dev/null || { echo "$0: needs node (apt-get install nodejs)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=0; baked=0; missed=0; : > "$tmp/missed"
while IFS= read -r -d '' f; do
  files=$((files + 1))
  timeout 300 "$cli" control "$f" --json --quiet > "$tmp/out.json" 2> /dev/null || continue
  baked=$((baked + 1))
  line=$(node -e '
    const d = JSON.parse(require("fs").readFileSync(0, "utf8")), c = d.clips || [];
    const q = c.map((x) => x.quality).filter((x) => x !== null && x !== undefined);
    const m = Math.max(...c.map((x) => x.mean_error_pct)), w = Math.max(...c.map((x) => x.worst_error_pct));
    const bad = !(m <= 0.001 && w <= 0.01);
    console.log(`${bad ? "MISS" : "ok  "} ${c.length} clips, quality ${q.length ? Math.min(...q).toFixed(5) : "-"} %, ` +
      `mean ${m.toExponential(2)} / worst ${w.toExponential(2)} %D`);' < "$tmp/out.json")
  echo "${f#"$dir"/}: $line"
  case "$line" in MISS*) missed=$((missed + 1)); echo "${f#"$dir"/}" >> "$tmp/missed" ;; esac
done < <(find "$dir" -type f -print0 | sort -z)
echo "$files files, $baked bake as controls, $missed miss the bars (mean <= 0.001 %D, worst <= 0.01 %D)"
[ "$missed" -eq 0 ] || { sed 's/^/  missed: /' "$tmp/missed"; exit 1; }

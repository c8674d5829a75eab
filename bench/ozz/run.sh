#!/usr/bin/env bash
# Issue 9 on the machine at hand: ozz-animation's SkinningJob and our
# bench_skinning (auto kernels) on the same workload, run alternately, with the
# ratio computed from figures measured in the same run (not run in CI).
# Usage: bash bench/ozz/run.sh OZZ_SRC_DIR [ROUNDS]
#   OZZ_SRC_DIR: a checkout of ozz-animation 0.16 (guillaumeblanc/
#     ozz-animation, tag 0.16.x) that you provide; only
#     src/geometry/runtime/skinning_job.cc and include/ are read. Nothing is
#     downloaded and no ozz file belongs in this repository.
#   ROUNDS (default 5): each round runs the ozz harness, then bench_skinning,
#     each as its own process with SKS_BENCH_ROUNDS=${SKS_OZZ_INNER:-3} (every
#     case's best call of 3 x 10). The table gives, per case, the median over
#     rounds of each process's best call with the slowest and fastest
#     process, and the ratio of the medians and of the fastest. Whole
#     processes differ: on a 2-vCPU AMD EPYC VM our 4- and 8-influence
#     figures fell in two groups ~15 % apart, process by process (the same
#     binary, data and addresses; 286 or 329 Mverts/s for LBS 4 positions),
#     so a median can land in either group.
#   SKS_BENCH_SKINNING: bench_skinning binary (default build/bench_skinning).
# ozz is built as its CMake Release build does with g++: -O3 -DNDEBUG at the
# C++ standard its compiler_settings.cmake sets, and no -m flags, so SSE2 only
# on x86-64 (ozz turns on SSE4/AVX/FMA paths only when the compiler already
# targets them; its build adds no such flag) and no fast-math.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ozz="${1:-}"
rounds="${2:-5}"
inner="${SKS_OZZ_INNER:-3}"
sks="${SKS_BENCH_SKINNING:-$repo/build/bench_skinning}"
if [ -z "$ozz" ] || [ ! -f "$ozz/src/geometry/runtime/skinning_job.cc" ] || [ ! -d "$ozz/include/ozz" ]; then
  echo "usage: bash bench/ozz/run.sh OZZ_SRC_DIR [ROUNDS]" >&2
  echo "OZZ_SRC_DIR must be an ozz-animation 0.16 checkout (with src/geometry/runtime/skinning_job.cc" >&2
  echo "and include/ozz/), e.g. a clone of guillaumeblanc/ozz-animation at tag 0.16.0;" >&2
  echo "this script downloads nothing." >&2
  exit 2
fi
[ -x "$sks" ] || { echo "missing $sks: build it (cmake --build build --target bench_skinning) or set SKS_BENCH_SKINNING" >&2; exit 2; }
std=11
cs="$ozz/build-utils/cmake/compiler_settings.cmake"
if [ -f "$cs" ]; then
  s="$(sed -n 's/.*set(CMAKE_CXX_STANDARD \([0-9][0-9]*\)).*/\1/p' "$cs" | head -1)"
  [ -n "$s" ] && std="$s"
fi
flags="-std=c++$std -O3 -DNDEBUG"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
${CXX:-g++} $flags -I"$ozz/include" -c "$ozz/src/geometry/runtime/skinning_job.cc" -o "$tmp/skinning_job.o"
${CXX:-g++} $flags -I"$ozz/include" "$here/bench_ozz_skinning.cc" "$tmp/skinning_job.o" -o "$tmp/bench_ozz"
echo "ozz: $ozz, $(${CXX:-g++} --version | head -1), $flags"
for r in $(seq "$rounds"); do
  SKS_BENCH_ROUNDS="$inner" "$tmp/bench_ozz" > "$tmp/ozz$r.txt"
  SKS_BENCH_ROUNDS="$inner" "$sks" > "$tmp/sks$r.txt"
  # ozz lines: ozz,LBS,k,pos|pos+nrm,Mverts/s; bench_skinning rows:
  # "LBS k infl pos|pos+nrm|pos+nrm/skip floor ref C SSE2 auto ...", auto is field 9.
  awk -F, -v r="$r" '$1 == "ozz" { print r, $3, $4, "ozz", $5 }' "$tmp/ozz$r.txt"
  awk -v r="$r" '$1 == "LBS" && $3 == "infl" { print r, $2, $4, "sks", $9 }' "$tmp/sks$r.txt"
  echo "round $r/$rounds done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done > "$tmp/all.txt"
[ -n "${SKS_OZZ_RAW:-}" ] && cp "$tmp/all.txt" "$SKS_OZZ_RAW"
echo "$rounds alternating rounds, each process the best call of $inner x 10 per case (thread CPU time); median over rounds"
echo "[slowest - fastest process]; ratio = median / median, and in brackets fastest / fastest;"
echo "paired = median over rounds of (ours / ozz) within a round (the two processes run back to back)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf "%-24s %24s %24s %7s %9s %7s\n" "case" "skinsolve auto" "ozz" "ratio" "(fastest)" "paired"
for k in 1 4 8; do
  extra=""; [ "$k" = 1 ] && extra=pos/weights
  for o in pos pos+nrm pos+nrm/skip $extra; do
    # pos+nrm/skip: ours with skip_normalize (normals not renormalised, as
    # ozz's are not), against ozz's pos+nrm; one influence: no weights array
    # (ozz reads none for one influence), pos/weights: with one (all 1.0)
    oo="$o"; [ "$o" = pos+nrm/skip ] && oo=pos+nrm; [ "$o" = pos/weights ] && oo=pos
    # median, slowest, fastest process of one side
    stats() { awk -v k="$k" -v o="$o" -v oo="$oo" -v w="$1" '$2 == k && (w == "ozz" ? $3 == oo : $3 == o) && $4 == w { print $5 }' "$tmp/all.txt" | sort -g |
      awk '{ v[NR] = $1 } END { if (NR == 0) print "nan nan nan"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'; }
    read -r s s0 s1 <<< "$(stats sks)"
    read -r z z0 z1 <<< "$(stats ozz)"
    # within each round: ours over ozz's, then the median of those ratios
    pr="$(awk -v k="$k" -v o="$o" -v oo="$oo" '$2 == k && $4 == "sks" && $3 == o { s[$1] = $5 } $2 == k && $4 == "ozz" && $3 == oo { z[$1] = $5 }
      END { for (r in s) if ((r in z) && z[r] > 0) print s[r] / z[r] }' "$tmp/all.txt" | sort -g |
      awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')"
    printf "%-24s %8.1f [%6.1f - %6.1f] %8.1f [%6.1f - %6.1f] %6.2fx (%6.2fx) %6.2fx\n" "LBS $k infl $o" "$s" "$s0" "$s1" "$z" "$z0" "$z1" \
      "$(awk -v s="$s" -v z="$z" 'BEGIN { print s / z }')" "$(awk -v s="$s1" -v z="$z1" 'BEGIN { print s / z }')" "$pr"
  done
done

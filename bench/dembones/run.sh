#!/usr/bin/env bash
# Same-machine comparison with Dem Bones (issue 9), single thread.
#
#   bash bench/dembones/run.sh DEMBONES_INCLUDE_DIR
#
# DEMBONES_INCLUDE_DIR: a user-provided Dem Bones checkout
# (electronicarts/dem-bones on GitHub, header-only; measured with 1.2.x) or
# its include/ folder: the one holding DemBones/DemBones.h. Nothing of Dem
# Bones is in this repository and nothing is downloaded here. Eigen 3 comes
# from /usr/include/eigen3 (Debian: apt-get install libeigen3-dev).
#
# Builds bench_dump_bake (this repository's CMake, BUILD_DIR, default build/)
# and bench_dembones (g++ with Dem Bones' own Release flags: -O3 -DNDEBUG
# -fopenmp; add more with DEMBONES_CXXFLAGS), then per case: bakes the clip
# single-thread (best of REPS solve_ms, default 5), dumps the problem, and
# runs Dem Bones' transforms-only solve with OMP_NUM_THREADS=1 until it
# reaches skinsolve's error, timed best of REPS too
# (bench/dembones/bench_dembones.cpp says how). Prints the load with
# each case: speed is never asserted.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
if [ $# -lt 1 ]; then
  echo "usage: $0 DEMBONES_INCLUDE_DIR  (a Dem Bones checkout or its include/ folder)" >&2
  exit 2
fi
inc="$1"
[ -f "$inc/include/DemBones/DemBones.h" ] && inc="$inc/include"
if [ ! -f "$inc/DemBones/DemBones.h" ]; then
  echo "error: no DemBones/DemBones.h under '$1'. Give the path of a Dem Bones checkout" >&2
  echo "(electronicarts/dem-bones on GitHub, header-only) or of its include/ folder;" >&2
  echo "this script never downloads it." >&2
  exit 2
fi
eigen=/usr/include/eigen3
if [ ! -f "$eigen/Eigen/Dense" ]; then
  echo "error: Eigen 3 not found in $eigen (Debian / Ubuntu: apt-get install libeigen3-dev)" >&2
  exit 2
fi
build="${BUILD_DIR:-$repo/build}"
data="${SKS_SHARED_DATA:-$repo/../shared/data}"
assimp="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
reps="${REPS:-5}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

[ -f "$build/CMakeCache.txt" ] || cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 --target bench_dump_bake >/dev/null
flags="-std=c++17 -O3 -DNDEBUG -fopenmp ${DEMBONES_CXXFLAGS:-}"
# shellcheck disable=SC2086
${CXX:-g++} $flags -isystem "$inc" -isystem "$eigen" "$here/bench_dembones.cpp" -o "$out/bench_dembones"
echo "Dem Bones headers: $inc; flags: $flags; OMP_NUM_THREADS=1; skinsolve threads 1; best of $reps"

fox="$data/Fox/Fox.glb"
auto="$data/fox_targets/fox_rig_autoweights.glb"
wuson="$assimp/X/Testwuson.X"
rows="$out/rows"
: > "$rows"
run_case() { # name src tgt clip
  if [ ! -f "$2" ] || [ ! -f "$3" ]; then echo "skip $1: missing $2 or $3"; return; fi
  echo "== $1  (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$build/bench_dump_bake" "$2" "$3" "$4" "$out/p.bin" --threads 1 --reps "$reps"
  OMP_NUM_THREADS=1 "$out/bench_dembones" "$1" "$out/p.bin" --reps "$reps" | tee "$out/r" | grep -v '^|' || true
  grep '^|' "$out/r" >> "$rows"
}
run_case "Fox control Walk" "$fox" "$fox" Walk
run_case "Fox control Run" "$fox" "$fox" Run
run_case "Fox control Survey" "$fox" "$fox" Survey
run_case "Fox -> auto-weights Walk" "$fox" "$auto" Walk
run_case "Fox -> auto-weights Run" "$fox" "$auto" Run
run_case "Fox -> auto-weights Survey" "$fox" "$auto" Survey
run_case "Testwuson control Wuson_Walk" "$wuson" "$wuson" Wuson_Walk
run_case "Testwuson control Wuson_Run" "$wuson" "$wuson" Wuson_Run

echo
echo "| case | skinsolve solve ms | skinsolve error %D | Dem Bones iterations | Dem Bones ms (wall; CPU) | error reached %D | ratio Dem Bones / skinsolve (wall; CPU) | strict: iterations | ms | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cat "$rows"
echo "(load at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"

#!/usr/bin/env bash
# The README's first command: install dependencies, build skinsolve, then on
# X/Testwuson.X (Debian's assimp-testmodels: 37 bones, 3 clips):
#   info  -> skeleton, parts, clips, D, findings
#   pose  -> out/testwuson_*.obj (rest pose, Wuson_Walk at 1 s with LBS and DQS)
#   bake  -> its clips baked onto a reweighted copy of its own rig, the quality
#            table, out/testwuson_baked.glb and out/report.html
# Env: SKS_ASSIMP_MODELS (default /usr/share/assimp/models), SKS_JOBS (build jobs).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
SKS_WITH_BROWSER=0 bash scripts/deps.sh   # the demo needs no browser / npm
jobs="${SKS_JOBS:-$(nproc 2>/dev/null || echo 2)}"

echo "== build (release) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs" --target skinsolve >/dev/null
cli="$here/build/skinsolve"
model="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}/X/Testwuson.X"
[ -r "$model" ] || { echo "run-demo: $model not found (apt-get install assimp-testmodels)" >&2; exit 1; }
mkdir -p out

echo "== skinsolve info $model =="
"$cli" info "$model"

echo "== skinsolve pose =="
"$cli" pose "$model" -o out/testwuson_rest.obj
"$cli" pose "$model" --clip Wuson_Walk --time 1.0 -o out/testwuson_walk_lbs.obj
"$cli" pose "$model" --clip Wuson_Walk --time 1.0 --dqs -o out/testwuson_walk_dqs.obj

echo "== skinsolve reweight: a simpler target rig (coarsened skeleton, bones renamed bone_N) =="
"$cli" reweight "$model" -o out/testwuson_target.glb --coarsen --rename

echo "== skinsolve bake: Testwuson's clips onto that target, both solve modes =="
"$cli" bake --source "$model" --target out/testwuson_target.glb --mode both \
  -o out/testwuson_baked.glb --report out/report.html

echo "== wrote (open out/report.html in a browser) =="
ls -l out/

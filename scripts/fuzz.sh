#!/usr/bin/env bash
# libFuzzer runs (clang, ASan + UBSan) of the untrusted-input paths:
#   gltf   native glTF reader (fuzz/fuzz_gltf.c)
#   wire   the parent's decoding of the Assimp child's model (fuzz/fuzz_wire.c)
#   stream the parent's handling of the child's whole pipe: the streamed file
#          list, then the model / error / out-of-memory record (fuzz/fuzz_stream.c)
#   write  glTF read -> write -> read equality (fuzz/fuzz_write.c)
#   bake   bake on two small fuzzed rigs (fuzz/fuzz_bake.c)
#   assimp mutated .x/.dae/.fbx through the isolated import (scripts/fuzz_assimp.py)
# The seed corpus is built from ../shared/data and the assimp test models into
# build-fuzz/ (nothing is committed). Crashes land in build-fuzz/crashes/;
# turn each into a line of tests/fuzz_regressions/RECIPES (the model it
# mutates, prefix / changed bytes / suffix, the message): no model file is
# committed.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
#   wire and stream share one target's time when both run (wire the odd
#   second), so the default run (gltf wire stream write bake) takes 4 x SECONDS.
#        scripts/fuzz.sh --available   exit 0 if clang's libFuzzer can be used
# SKS_FUZZ=1 bash scripts/deps.sh installs clang + libclang-rt-14-dev.
# Exit 1 if a target crashed (a defect: the input is kept).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
B="${SKS_FUZZ_BUILD:-$here/build-fuzz}"
CC_FUZZ="${SKS_FUZZ_CC:-clang}"
DATA="${SKS_SHARED_DATA:-$here/../shared/data}"
MODELS="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"

available() {
  command -v "$CC_FUZZ" >/dev/null 2>&1 || return 1
  local t; t="$(mktemp -d)"
  printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$t/f.c"
  "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$t/f.c" -o "$t/f" >/dev/null 2>&1
  local rc=$?
  rm -rf "$t"
  return $rc
}
if [ "${1:-}" = "--available" ]; then available; exit $?; fi
if ! available; then
  echo "fuzz.sh: skipped: $CC_FUZZ with libFuzzer (-fsanitize=fuzzer) is not available (SKS_FUZZ=1 bash scripts/deps.sh installs it)"
  exit 0
fi
secs="${1:-60}"; shift || true
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(gltf wire stream write bake)
jobs="${SKS_JOBS:-2}"

# ---- build: the library (no CLI, no report) with coverage + sanitizers ----
mkdir -p "$B/obj" "$B/crashes" "$B/corpus"
FLAGS=(-g -O1 -std=c11 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$here/include" -I"$here/src" -I/usr/include)
srcs=$(cd "$here" && ls src/*.c src/math/*.c src/rig/*.c src/clip/*.c src/pose/*.c src/skin/*.c src/solve/*.c src/io/*.c 2>/dev/null)
echo "== fuzz build ($CC_FUZZ) =="
printf '%s\n' $srcs | xargs -P "$jobs" -I{} sh -c '
  o="$0/obj/$(echo "{}" | tr / _).o"
  if [ ! -f "$o" ] || [ "$1/{}" -nt "$o" ]; then "$2" $3 -c "$1/{}" -o "$o" || exit 255; fi' \
  "$B" "$here" "$CC_FUZZ" "${FLAGS[*]}" || { echo "fuzz.sh: build failed"; exit 1; }
LIBS=(-lassimp -lcjson -lmeshoptimizer -lstb -lpthread -lm)
for t in gltf wire stream write bake; do
  "$CC_FUZZ" "${FLAGS[@]}" -fsanitize=fuzzer "$here/fuzz/fuzz_$t.c" "$B"/obj/*.o "${LIBS[@]}" -o "$B/fuzz_$t" ||
    { echo "fuzz.sh: linking fuzz_$t failed"; exit 1; }
done
"$CC_FUZZ" "${FLAGS[@]}" "$here/fuzz/wire_seeds.c" "$B"/obj/*.o "${LIBS[@]}" -o "$B/wire_seeds" || exit 1

# ---- seed corpus (generated here, never committed) ----
mkdir -p "$B/corpus/gltf" "$B/corpus/write" "$B/corpus/wire" "$B/corpus/stream" "$B/corpus/bake"
small_gltf=$(find "$DATA" -type f \( -name '*.glb' -o -name '*.gltf' \) -size -400k 2>/dev/null | sort)
for f in $small_gltf; do
  n="$(echo "$f" | md5sum | cut -c1-12)"
  cp "$f" "$B/corpus/gltf/$n"; cp "$f" "$B/corpus/write/$n"
done
# EXT_meshopt_compression seeds (the native reader's decoder path), when the
# npm tools are installed: the Fox compressed without and with filters
if command -v node >/dev/null && [ -f "$here/tools/node_modules/meshoptimizer/package.json" ] && [ -f "$DATA/Fox/Fox.glb" ]; then
  for m in meshopt meshopt-filter; do
    node "$here/tools/compress_gltf.mjs" "$m" "$DATA/Fox/Fox.glb" "$B/corpus/gltf/fox_$m.glb" >/dev/null 2>&1 || true
  done
fi
# bake seeds: 4-byte little-endian split offset + source + target
glbs=$(find "$DATA" -type f -name '*.glb' -size -200k 2>/dev/null | sort | head -4)
for a in $glbs; do for b in $glbs; do
  n="$(echo "$a$b" | md5sum | cut -c1-12)"
  sz=$(stat -c %s "$a")
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((sz & 255)) $(((sz >> 8) & 255)) $(((sz >> 16) & 255)) $(((sz >> 24) & 255)))" >"$B/corpus/bake/$n"
  cat "$a" "$b" >>"$B/corpus/bake/$n"
done; done
assimp_seeds=$(find "$MODELS/X" "$MODELS/Collada" "$MODELS/FBX" -type f -size -100k 2>/dev/null | sort | head -60)
# a model with morph targets, tangents and (Collada) a second UV set, so the wire's new arrays are seeded;
# ClearCoatTest for the clearcoat texture slots (SKSWIRE7)
morph_seeds=$(ls "$MODELS/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf" \
              "$MODELS/Collada/cube_with_2UVs.DAE" "$MODELS/glTF2/ClearCoat-glTF/ClearCoatTest.gltf" 2>/dev/null)
# an .obj with its .mtl and texture: a stream seed with 'F' records besides the model's own
obj_seeds=$(find "$MODELS/OBJ" -type f -name '*.obj' -size -20k 2>/dev/null | sort | head -8)
"$B/wire_seeds" "$B/corpus/wire" "$B/corpus/stream" $assimp_seeds $morph_seeds $obj_seeds $small_gltf 2>/dev/null
echo "corpus: $(ls "$B/corpus/gltf" | wc -l) glTF, $(ls "$B/corpus/wire" | wc -l) wire, $(ls "$B/corpus/stream" | wc -l) stream, $(ls "$B/corpus/bake" | wc -l) bake pairs"

# ---- runs ----
status=0
for t in "${targets[@]}"; do
  if [ "$t" = assimp ]; then
    cli="${SKS_CLI:-$here/build/skinsolve}"
    [ -x "$cli" ] || { echo "assimp: build $cli first"; continue; }
    command -v python3 >/dev/null || { echo "assimp: skipped (no python3)"; continue; }
    echo "== assimp: ${secs} s =="
    python3 "$here/scripts/fuzz_assimp.py" "$secs" "$RANDOM" "$cli" "$B/crashes/assimp"
    continue
  fi
  case "$t" in gltf|write|stream) max=65536 ;; bake) max=131072 ;; wire) max=262144 ;; *) echo "unknown target $t"; continue ;; esac
  tsecs=$secs
  if [[ " ${targets[*]} " == *" wire "* && " ${targets[*]} " == *" stream "* ]] &&
     [[ "$t" = wire || "$t" = stream ]]; then
    if [ "$t" = wire ]; then tsecs=$(( (secs + 1) / 2 )); else tsecs=$(( secs / 2 )); fi
    [ "$tsecs" -ge 1 ] || tsecs=1 # 0 would be libFuzzer's "no limit"
  fi
  echo "== $t: ${tsecs} s =="
  (cd "$B" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "./fuzz_$t" -max_total_time="$tsecs" -max_len="$max" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
       -artifact_prefix="$B/crashes/$t-" "$B/corpus/$t" >"$B/$t.log" 2>&1)
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$B/$t.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$B/$t.log" | tail -1)
  if [ $rc = 0 ]; then
    echo "$t: ${execs:-?} execs, $cov, no crash"
  else
    echo "$t: CRASH (exit $rc) after ${execs:-?} execs; input kept in $B/crashes/:"
    grep -E 'ERROR|SUMMARY|Test unit written' "$B/$t.log" | head -5
    status=1
  fi
done
exit $status

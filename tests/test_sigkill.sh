#!/usr/bin/env bash
# Nothing lost under SIGKILL (issue 11, item 4): `bake -o --report` and
# `repair -o` killed at spread-out points of their run leave each output
# either absent (or the previous version, byte for byte) or complete, and no
# hidden temp file (.NAME.tmpXXXXXX): outputs are written to an unnamed
# O_TMPFILE file and linked + renamed only when complete (src/io/atomic.c).
# A kill exactly between bake's two renames leaves a torn pair its report's
# seal (the .glb's sha256) shows, and no temp file.
set -u
CLI="${1:?usage: test_sigkill.sh PATH/TO/skinsolve}"
DATA="${SKS_SHARED_DATA:-$(dirname "$0")/../../shared/data}"
SRC="$DATA/Fox/Fox.glb"
TGT="$DATA/fox_targets/fox_rig_autoweights.glb"
[ -f "$SRC" ] && [ -f "$TGT" ] || { echo "skip: $SRC or $TGT not found"; exit 77; }
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_sigkill_XXXXXX")"
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
now_ms() { date +%s%3N; }

complete_glb() { "$CLI" info "$1" >/dev/null 2>&1; }
complete_html() { tail -c 64 "$1" | grep -q '</html>'; }

# reference runs: full outputs and how long each command takes
t0=$(now_ms)
"$CLI" bake --source "$SRC" --target "$TGT" --clip Walk -o "$T/ref.glb" --report "$T/ref.html" >/dev/null 2>&1 ||
  { bad "reference bake failed"; echo "$pass passed, $fail failed"; exit 1; }
bake_ms=$(( $(now_ms) - t0 ))
t0=$(now_ms)
"$CLI" repair "$SRC" -o "$T/ref_repair.glb" >/dev/null 2>&1 || bad "reference repair failed"
repair_ms=$(( $(now_ms) - t0 ))
echo "reference: bake ${bake_ms} ms, repair ${repair_ms} ms"

# kill_at CMD_MS KIND I: kill the I-th of N runs at I/N of the command's time (+ jitter)
N=8
killed=0
check_dir() { # no hidden temp left, every output absent / previous / complete
  if ls -A "$T/run" | grep -q '^\..*\.tmp'; then bad "$1: a temp file was left: $(ls -A "$T/run")"; else ok; fi
}
for kind in bake repair; do
  for i in $(seq 0 $((N - 1))); do
    rm -rf "$T/run"; mkdir "$T/run"
    if [ $((i % 2)) = 1 ]; then # an existing previous output must survive whole or be replaced whole
      echo "previous version" >"$T/run/out.glb"; cp "$T/run/out.glb" "$T/prev"
    fi
    if [ "$kind" = bake ]; then
      total=$bake_ms
      "$CLI" bake --source "$SRC" --target "$TGT" --clip Walk -o "$T/run/out.glb" --report "$T/run/out.html" \
        >/dev/null 2>&1 &
    else
      total=$repair_ms
      "$CLI" repair "$SRC" -o "$T/run/out.glb" >/dev/null 2>&1 &
    fi
    pid=$!
    delay_ms=$(( (total * (i + 1)) / (N + 1) + RANDOM % 20 ))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
    wait "$pid" 2>/dev/null
    if [ -e "$T/run/out.glb" ]; then
      if [ -e "$T/prev" ] && cmp -s "$T/run/out.glb" "$T/prev"; then ok
      elif complete_glb "$T/run/out.glb"; then ok
      else bad "$kind run $i: out.glb is neither the previous version nor complete"; fi
    else
      ok
    fi
    if [ -e "$T/run/out.html" ]; then
      complete_html "$T/run/out.html" && ok || bad "$kind run $i: out.html is partial"
    fi
    check_dir "$kind run $i (killed at ${delay_ms} ms)"
    rm -f "$T/prev"
  done
done
echo "killed $killed of $((2 * N)) runs before they finished"

# A kill exactly between the two renames of `bake -o --report`: the .glb is
# renamed first, the report last, sealed to its .glb (<meta
# name="skinsolve-glb-sha256">): the torn pair is the new .glb beside the
# previous report, whose seal names the previous .glb. The debug hook
# SKS_TEST_PAUSE_BETWEEN_RENAMES=1 stops the process there (src/io/atomic.c).
seal() { grep -o 'name="skinsolve-glb-sha256" content="[0-9a-f]*"' "$1" | cut -d'"' -f4; }
sealed_pair() { [ -n "$(seal "$2")" ] && [ "$(seal "$2")" = "$(sha256sum "$1" | cut -c1-64)" ]; }
rm -rf "$T/run"; mkdir "$T/run"
if sealed_pair "$T/ref.glb" "$T/ref.html"; then ok; else bad "a complete bake's report is not sealed to its .glb"; fi
if grep -q 'name="skinsolve-glb" content="ref.glb"' "$T/ref.html"; then ok; else bad "the report does not name its .glb"; fi
cp "$T/ref.glb" "$T/run/out.glb"; cp "$T/ref.html" "$T/run/out.html"
SKS_TEST_PAUSE_BETWEEN_RENAMES=1 "$CLI" bake --source "$SRC" --target "$TGT" --clip Survey \
  -o "$T/run/out.glb" --report "$T/run/out.html" >/dev/null 2>&1 &
pid=$!
state=
for _ in $(seq 600); do # the process stops itself (SIGSTOP) between the renames
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
  [ "$state" = T ] || [ -z "$state" ] && break
  sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$state" = T ]; then ok; else bad "the bake did not stop between its renames (state '$state')"; fi
if complete_glb "$T/run/out.glb" && ! cmp -s "$T/run/out.glb" "$T/ref.glb"; then ok
else bad "kill between the renames: out.glb is not the new complete .glb"; fi
if cmp -s "$T/run/out.html" "$T/ref.html"; then ok; else bad "kill between the renames: out.html is not the previous report"; fi
if sealed_pair "$T/run/out.glb" "$T/run/out.html"; then bad "the torn pair is not detectable: the old report's seal matches the new .glb"
else ok; fi
check_dir "kill between the renames"
# the same bake left to finish: a sealed pair
"$CLI" bake --source "$SRC" --target "$TGT" --clip Survey -o "$T/run/out.glb" --report "$T/run/out.html" >/dev/null 2>&1 ||
  bad "the bake after the kill failed"
if sealed_pair "$T/run/out.glb" "$T/run/out.html"; then ok; else bad "a finished bake's pair is not sealed"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

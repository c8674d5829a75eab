#!/usr/bin/env bash
# Every input of tests/fuzz_regressions/RECIPES (crashes, aborts, memory
# exhaustion that fuzzing found in Assimp) must give a clean error naming the
# file. The inputs are mutations of Debian's assimp-testmodels, rebuilt here
# from the models read in place (prefix + changed bytes + suffix), never
# committed; a missing model skips its case. Each must give: exit 1, one line on stderr, no
# core file, no child process left, well within the limits (or, for a
# committed "roundtrip" input, a clean read and an equal re-read). The release
# build must print the exact message in EXPECTED; under ASan/UBSan
# (SKS_SANITIZED=1) the child's sanitizer may turn a crash into a different
# failure ("Assimp failed (AddressSanitizer: double-free)" for the FBX
# ones), so there any "Assimp failed (...)" passes for a crash, but the
# memory-hungry inputs must give the exact "out of memory" message too (the
# address-space limit holds above ASan's shadow; ASan's out-of-memory death
# is reported by the child, src/io/assimp_isolate.c), and the endless ones
# (check "timeout": an import that never ends, run with --timeout 2) the
# exact "no result in 2 s" within 10 s in both builds.
set -u
CLI="${1:?usage: test_fuzz_regressions.sh PATH/TO/skinsolve}"
DIR="$(cd "${SKS_SOURCE_DIR:-$(dirname "$0")/..}" && pwd)/tests/fuzz_regressions"
MODELS="${SKS_ASSIMP_MODELS:-/usr/share/assimp/models}"
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_fuzzreg_XXXXXX")"
trap 'rm -rf "$T"' EXIT
KEEP="${SKS_KEEP_REGRESSIONS:-}"   # a folder: copies of the rebuilt inputs go there
pass=0 fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
[ -f "$DIR/RECIPES" ] || { echo "skip: $DIR/RECIPES not found"; exit 77; }
[ -d "$MODELS" ] || echo "SKIP part: assimp-testmodels not found at $MODELS (set SKS_ASSIMP_MODELS): only the committed inputs run"
cd "$T" || exit 1
built=0
ulimit -c unlimited 2>/dev/null || true   # a core would show up in $T
# `info` of a file, without its first line (the file name)
shape() { "$CLI" info "$1" 2>/dev/null | grep -E '^(skeleton|skins|parts|clips) '; }
while IFS='|' read -r file model prefix suffix middle want check; do
  case "$file" in ''|'#'*) continue ;; esac
  f="$T/$file"
  if [ "$model" = "-" ]; then # the whole input is MIDDLE (hex): nothing committed but the recipe
    printf '%b' "$(printf '%s' "$middle" | sed 's/../\\x&/g')" >"$f"
    [ "$(stat -c %s "$f")" -eq $((${#middle} / 2)) ] || { bad "$file: could not be rebuilt from its bytes"; continue; }
  elif [ "$model" = "=" ]; then
    [ -f "$DIR/$file" ] || { bad "$file: listed in RECIPES but not committed"; continue; }
    cp "$DIR/$file" "$f"
  elif [ "$prefix" = patch ]; then # MIDDLE lists OFFSET:HEX byte replacements of the model
    if [ ! -f "$MODELS/$model" ]; then echo "SKIP part: $MODELS/$model not found ($file)"; continue; fi
    cp "$MODELS/$model" "$f"
    size=$(stat -c %s "$f")
    okp=1
    for edit in ${middle//,/ }; do
      off="${edit%%:*}" hex="${edit#*:}"
      [ $((off + ${#hex} / 2)) -le "$size" ] || { okp=0; break; }
      printf '%b' "$(printf '%s' "$hex" | sed 's/../\\x&/g')" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
    done
    if [ "$okp" = 0 ] || [ "$(stat -c %s "$f")" -ne "$size" ]; then bad "$file: could not be rebuilt from $model"; continue; fi
  else
    if [ ! -f "$MODELS/$model" ]; then echo "SKIP part: $MODELS/$model not found ($file)"; continue; fi
    size=$(stat -c %s "$MODELS/$model")
    { head -c "$prefix" "$MODELS/$model"
      printf '%b' "$(printf '%s' "$middle" | sed 's/../\\x&/g')"
      [ "$suffix" -gt 0 ] && tail -c "$suffix" "$MODELS/$model"; } >"$f"
    if [ "$(stat -c %s "$f")" -ne $((prefix + ${#middle} / 2 + suffix)) ] || [ $((prefix + suffix)) -gt "$size" ]; then
      bad "$file: could not be rebuilt from $model"; continue
    fi
  fi
  built=$((built + 1))
  if [ "${check:-info}" = roundtrip ]; then
    timeout 60 "$CLI" info "$f" >"$T/out" 2>"$T/err"
    rc=$?
    msg="$(head -c 600 "$T/err")"
    if [ "$rc" != 0 ]; then bad "$file: info exit $rc, expected 0 ($msg)"; continue; fi
    if [ "$(wc -l <"$T/err")" != 1 ] || [[ "$msg" != "warning: "*"$file: $want"* ]]; then
      bad "$file: expected the one warning '$file: $want', got: $msg"; continue
    fi
    timeout 60 "$CLI" repair "$f" -o "$T/rt.glb" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" != 0 ] || [ ! -s "$T/rt.glb" ]; then bad "$file: repair -o exit $rc: $(head -c 400 "$T/err")"; continue; fi
    a="$(shape "$f")"; b="$(shape "$T/rt.glb")"
    if [ -z "$a" ] || [ "$a" != "$b" ]; then bad "$file: read -> write -> read changed the model: [$a] -> [$b]"; continue; fi
    if ls "$T" | grep -q core; then bad "$file: left a core file"; rm -f "$T"/core*; continue; fi
    pass=$((pass + 1))
    echo "ok roundtrip: $msg"
    continue
  fi
  [ -n "$KEEP" ] && cp "$f" "$KEEP/"
  limit=20 most=30 # the import's --timeout, the seconds a case may take
  [ "${check:-info}" = timeout ] && limit=2 most=10 # a hang: the deadline ends it
  start=$(date +%s)
  timeout 60 "$CLI" info "$f" --max-memory 256M --timeout "$limit" >"$T/out" 2>"$T/err"
  rc=$?
  took=$(( $(date +%s) - start ))
  msg="$(head -c 400 "$T/err")"
  if [ "$rc" != 1 ]; then bad "$file: exit $rc, expected 1 ($msg)"; continue; fi
  if [ "$(wc -l <"$T/err")" != 1 ]; then bad "$file: stderr is not one line: $msg"; continue; fi
  if [[ "$msg" != *"$file: "* ]]; then bad "$file: message does not name the file: $msg"; continue; fi
  if [ -n "${SKS_SANITIZED:-}" ] && [[ "$want" != *"out of memory"* && "$want" != *"no result in"* ]]; then
    [[ "$msg" == *"Assimp failed ("* || "$msg" == *"Assimp cannot import it"* ]] || { bad "$file: $msg"; continue; }
  else
    [[ "$msg" == *"$want"* ]] || { bad "$file: expected '$want', got: $msg"; continue; }
  fi
  if ls "$T" | grep -q core; then bad "$file: left a core file"; rm -f "$T"/core*; continue; fi
  if [ "$took" -gt "$most" ]; then bad "$file: took $took s (at most $most)"; continue; fi
  pass=$((pass + 1))
  echo "ok ${took}s: $msg"
done <"$DIR/RECIPES"
# no skinsolve child may outlive its parent
sleep 0.2
if pgrep -f "$CLI info $T" >/dev/null 2>&1; then bad "an import process was left running"; fi
[ "$built" -gt 0 ] || { echo "skip: none of the models behind the recipes was found"; exit 77; }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

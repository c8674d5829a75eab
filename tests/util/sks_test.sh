# The shell tests' shared prelude (sourced): a temporary directory $T removed
# on exit, pass / fail counters and their helpers.
#   . "$(dirname "$0")/util/sks_test.sh" NAME [TIMEOUT]
# ok / bad DESC: count a check; check DESC CMD...: CMD must succeed;
# run CODE DESC CMD...: CMD (stdout, stderr in $T/out, $T/err, killed after
# TIMEOUT s, default 60) must exit CODE; has FILE TEXT: FILE contains TEXT.
T="$(mktemp -d "${TMPDIR:-/tmp}/sks_${1:-test}_XXXXXX")"
trap 'rm -rf "$T"' EXIT
SKS_RUN_TIMEOUT="${2:-60}"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local desc="$1"; shift; if "$@"; then ok; else bad "$desc"; fi; }
run() {
  local want="$1" desc="$2"; shift 2
  timeout "$SKS_RUN_TIMEOUT" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" = "$want" ]; then ok; else
    bad "$desc: exit $rc, expected $want"; sed 's/^/  stderr: /' "$T/err" | head -5 >&2
  fi
}
has() { grep -qF -- "$2" "$1"; }

#!/usr/bin/env bash
# The README's second command (and CI's, via .ci/run): install dependencies,
# build twice — release with -Werror, and ASan + UBSan with -Werror — and run
# every test (ctest: tests/test_*.c and tests/test_*.sh) in both builds.
# Env: SKS_JOBS (parallel build/test jobs, default nproc).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
SKS_FUZZ="${SKS_FUZZ:-1}" bash "$here/scripts/deps.sh"
jobs="${SKS_JOBS:-$(nproc 2>/dev/null || echo 2)}"

echo "== release build (-Werror) =="
cmake -S "$here" -B "$here/build" -DSKS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$here/build" -j"$jobs"
(cd "$here/build" && ctest --output-on-failure -j"$jobs")

echo "== ASan + UBSan build (-Werror) =="
cmake -S "$here" -B "$here/build-asan" -DSKS_WERROR=ON -DSKS_SANITIZE=ON -DSKS_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$here/build-asan" -j"$jobs"
(cd "$here/build-asan" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 SKS_SANITIZED=1 \
   ctest --output-on-failure -j"$jobs")
echo "== fuzzing: a short libFuzzer run per target (scripts/fuzz.sh; SKS_FUZZ=0 skips) =="
if [ "${SKS_FUZZ:-1}" = 1 ]; then
  SKS_JOBS="$jobs" bash "$here/scripts/fuzz.sh" "${SKS_FUZZ_SECONDS:-25}"
else
  echo "fuzzing skipped (SKS_FUZZ=0)"
fi
echo "== all tests passed in both builds =="

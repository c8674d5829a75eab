#!/bin/bash
# The report viewer's JavaScript (src/report/assets/*.js) and the Node test
# driver (tools/report_check.mjs) must be lint-free (ESLint, tools/eslint.config.mjs).
# Skips (77) when tools/node_modules is missing: cd tools && npm install.
set -u
SRC=${SKS_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
ESLINT="$SRC/tools/node_modules/.bin/eslint"
if ! command -v node >/dev/null 2>&1; then echo "SKIP: node not installed"; exit 77; fi
if [ ! -x "$ESLINT" ]; then echo "SKIP: $ESLINT missing (cd tools && npm install)"; exit 77; fi
cd "$SRC" || exit 1
shopt -s nullglob
files=(src/report/assets/*.js tools/report_check.mjs tools/eslint.config.mjs)
echo "eslint: ${files[*]}"
"$ESLINT" --config tools/eslint.config.mjs --max-warnings 0 "${files[@]}" || { echo "FAIL: eslint found problems"; exit 1; }
echo "1 passed, 0 failed"

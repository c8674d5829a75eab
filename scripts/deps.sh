#!/usr/bin/env bash
# Installs what skinsolve needs on a fresh Debian machine (as root, or with sudo).
# SKS_WITH_BROWSER=0 skips chromium / node / npm (the demo needs none of them).
# Debian packages via apt-get; npm packages (glTF validator, browser driver) via npm.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkgs=(build-essential cmake pkg-config libassimp-dev libcjson-dev libstb-dev libmeshoptimizer-dev assimp-testmodels)
# python3: test_batch / test_deploy (JSON, YAML subset) and the Python module tests (with numpy)
pkgs+=(python3 python3-numpy)
# npm fetches over HTTPS: a fresh Debian image has no CA certificates.
if [ "${SKS_WITH_BROWSER:-1}" = 1 ]; then pkgs+=(chromium nodejs npm ca-certificates); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node from another source (e.g. nodesource) provides npm itself.
if command -v npm >/dev/null 2>&1; then
  tmp=(); for p in "${missing[@]}"; do [ "$p" = npm ] || [ "$p" = nodejs ] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# SKS_FUZZ=1: clang + its libFuzzer runtime for scripts/fuzz.sh (optional:
# a failed install only means fuzz.sh skips, with a message).
if [ "${SKS_FUZZ:-0}" = 1 ] && ! command -v clang >/dev/null 2>&1 || { [ "${SKS_FUZZ:-0}" = 1 ] && ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; }; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "deps: installing clang libclang-rt-14-dev (fuzzing)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null; } ||
    echo "deps: warning: clang / libclang-rt-14-dev could not be installed: fuzzing will be skipped" >&2
fi
if [ "${SKS_WITH_BROWSER:-1}" = 1 ] && [ -f "$here/tools/package.json" ]; then
  # Debian 12's nodejs is 18.x: eslint 9 needs >= 18.18, and playwright-core
  # is kept at ~1.61 in tools/package.json because 1.62+ refuses Node < 20
  # (measured: 1.65 exits "Playwright requires Node.js 20 or higher" on 18.20;
  # 1.61 drives Debian's chromium 156 on Node 18 and 20).
  node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$node_major" -lt 18 ]; then
    echo "deps: warning: Node.js $(node --version 2>/dev/null || echo missing) is older than 18: the npm tools (glTF validator, report browser check, lint) need 18.18+" >&2
  fi
  if [ ! -d "$here/tools/node_modules" ] || [ "$here/tools/package.json" -nt "$here/tools/node_modules" ]; then
    echo "deps: npm install in tools/"
    (cd "$here/tools" && npm install --no-audit --no-fund --loglevel=error && touch node_modules)
  fi
fi
# Blender add-on test (tests/test_blender.sh skips without it): optional, a
# failed install does not stop the build. SKS_WITH_BLENDER=0 skips it.
if [ "${SKS_WITH_BLENDER:-1}" = 1 ] && ! command -v blender >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "deps: installing blender (optional)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends blender >/dev/null \
    || echo "deps: warning: blender could not be installed; the Blender add-on test will skip" >&2
fi

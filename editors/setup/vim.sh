#!/usr/bin/env bash
# Vim 9 and ALE from Debian (vim-nox, vim-ale: ALE is an optional package that `packadd!
# ale` loads) for tests/editors/test_vim.py. Run as root after `apt-get update`
# (editors/setup.sh does both); quick when both are already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(vim-nox vim-ale)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  apt-get -o DPkg::Lock::Timeout=600 -y -qq install --no-install-recommends "${missing[@]}"
fi
ale=/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale/plugin/ale.vim
if ! vim --version | grep -q "Vi IMproved 9\." || [ ! -e "$ale" ]; then
  echo "vim.sh: after the install, Vim 9 or ALE ($ale) is missing" >&2
  exit 1
fi
echo "installed $(vim --version | head -1 | cut -d'(' -f1)with ALE"

#!/usr/bin/env bash
# Installs the real editors that the end-to-end tests drive (tests/editors/): each
# editors/setup/*.sh installs one editor and what it needs to run headless here, and is
# quick when that editor is already installed. Neovim comes from PyPI with the test extra.
# Needs root (apt-get); run it before `pytest`, as .ci/run does.
set -euo pipefail
shopt -s nullglob
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
for script in "$here"/setup/*.sh; do
  echo "== ${script#"$here"/}"
  bash "$script"
done

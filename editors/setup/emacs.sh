#!/usr/bin/env bash
# Emacs 30 (built-in eglot) and markdown-mode (rendered hovers) from bookworm-backports:
# Debian 12's own Emacs is 28, which has no eglot. Then Debian's lsp-mode (Emacs' other
# LSP client, tests/editors/test_emacs_lsp_mode.py) and package-lint (the package's lint,
# tests/editors/test_emacs_package.py). Run as root after `apt-get update` (editors/setup.sh
# does both); quick when all are already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt_get=(apt-get -o DPkg::Lock::Timeout=600 -y -qq)

# Prints "30 t t t" for Emacs 30 with markdown-mode, lsp-mode and package-lint available
# the way a user's Emacs finds them.
emacs_state() {
  emacs --batch --eval '(progn (package-activate-all)
    (princ (format "%d %s %s %s" emacs-major-version
                   (and (locate-library "markdown-mode") t)
                   (and (locate-library "lsp-mode") t)
                   (and (locate-library "package-lint") t))))' \
    2>/dev/null || echo "0 nil nil nil"
}

read -r major markdown lsp lint <<<"$(emacs_state)"
if [ "$major" -ge 29 ] && [ "$markdown" = t ] && [ "$lsp" = t ] && [ "$lint" = t ]; then
  echo "Emacs $major, markdown-mode, lsp-mode and package-lint already installed"
  exit 0
fi

codename="$(. /etc/os-release && echo "${VERSION_CODENAME}")"
backports_list=/etc/apt/sources.list.d/${codename}-backports.list
if ! grep -rqs "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  # The same mirror the system already uses: the first /debian URI of debian.sources.
  mirror="$(awk '$1 == "URIs:" && $2 ~ /\/debian\/?$/ { print $2; exit }' \
              /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "deb ${mirror} ${codename}-backports main" > "$backports_list"
  "${apt_get[@]}" update
fi

"${apt_get[@]}" install --no-install-recommends -t "${codename}-backports" \
  emacs-nox dh-elpa-helper elpa-markdown-mode
# From bookworm itself, after Emacs 30: Debian byte-compiles them for every installed Emacs.
"${apt_get[@]}" install --no-install-recommends elpa-lsp-mode elpa-package-lint
read -r major markdown lsp lint <<<"$(emacs_state)"
if [ "$major" -lt 29 ] || [ "$markdown" != t ] || [ "$lsp" != t ] || [ "$lint" != t ]; then
  echo "emacs.sh: after the install, Emacs is $major, markdown-mode $markdown, lsp-mode $lsp, package-lint $lint" >&2
  exit 1
fi
echo "installed Emacs $major with markdown-mode, lsp-mode and package-lint"

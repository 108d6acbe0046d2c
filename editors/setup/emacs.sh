#!/usr/bin/env bash
# Emacs 30 (built-in eglot) and markdown-mode (rendered hovers) from bookworm-backports:
# Debian 12's own Emacs is 28, which has no eglot. Run as root after `apt-get update`
# (editors/setup.sh does both); quick when both are already installed.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt_get=(apt-get -o DPkg::Lock::Timeout=600 -y -qq)

# Prints "30 t" for Emacs 30 with markdown-mode available the way a user's Emacs finds it.
emacs_state() {
  emacs --batch --eval '(progn (package-activate-all)
    (princ (format "%d %s" emacs-major-version (and (locate-library "markdown-mode") t))))' \
    2>/dev/null || echo "0 nil"
}

read -r major markdown <<<"$(emacs_state)"
if [ "$major" -ge 29 ] && [ "$markdown" = t ]; then
  echo "Emacs $major and markdown-mode already installed"
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
read -r major markdown <<<"$(emacs_state)"
if [ "$major" -lt 29 ] || [ "$markdown" != t ]; then
  echo "emacs.sh: after the install, Emacs is $major and markdown-mode is $markdown" >&2
  exit 1
fi
echo "installed Emacs $major with markdown-mode"

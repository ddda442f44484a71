#!/usr/bin/env bash
# Makes sure Chromium is installed: the operator console's test drives a real headless browser (Debian's chromium,
# through the DevTools protocol with playwright-core, which downloads no browser of its own). `npm test` runs this
# before vitest. On PATH already: nothing to do. As root: installs Debian's chromium. Otherwise: says how and fails.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  cat >&2 <<'MESSAGE'
chromium is not installed. The operator console's test drives a headless Chromium at /usr/bin/chromium:
  Debian/Ubuntu:  sudo apt-get install chromium   (or run this script as root: sudo bash scripts/ensure-chromium.sh)
MESSAGE
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is not installed and apt-get is not available: install Chromium at /usr/bin/chromium." >&2
  exit 1
fi

echo "ensure-chromium: installing Debian's chromium for the operator console's test"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null
echo "ensure-chromium: $(chromium --version)"

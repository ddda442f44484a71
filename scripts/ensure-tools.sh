#!/usr/bin/env bash
# Makes sure the real components the tests start are installed: redis-server (tests and benchmarks start their own
# Redis processes on free ports), chromium (the operator console's test drives a headless browser through the DevTools
# protocol; playwright-core downloads none of its own) and prometheus (a test starts one to scrape a running gateway).
# Each needs only its binary, never a running service. `npm test` runs this first. On PATH already: nothing to do.
# As root with apt-get: installs Debian's packages (scripts/apt.sh). Otherwise: says how to install them and fails.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=apt.sh
. ./apt.sh

missing=()
for tool in redis-server chromium prometheus; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "ensure-tools: installing Debian's ${missing[*]} for the tests"
if ! apt_install "${missing[@]}"; then
  cat >&2 <<MESSAGE
ensure-tools: ${missing[*]} not installed. The tests start their own processes of each and need the binaries:
  Debian/Ubuntu:  sudo apt-get install --no-install-recommends ${missing[*]}   (or run: sudo bash scripts/ensure-tools.sh)
  macOS:          brew install redis prometheus && brew install --cask chromium
MESSAGE
  exit 1
fi
for tool in "${missing[@]}"; do
  command -v "$tool" >/dev/null || { echo "ensure-tools: $tool still missing after install" >&2; exit 1; }
  echo "ensure-tools: $("$tool" --version 2>&1 | head -1)"
done

#!/usr/bin/env bash
# Makes sure Prometheus is installed: a test starts its own Prometheus (Debian's package) on a free port to scrape
# `GET /v1/operator/metrics` of a running gateway, so it needs the binary, never a running service. `npm test` runs
# this first. On PATH already: nothing to do. As root: installs Debian's prometheus without starting the system
# service (and keeps it from starting at boot). Otherwise: says how to install it and fails.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  cat >&2 <<'MESSAGE'
prometheus is not installed. A test starts its own Prometheus on a free port and needs the binary:
  Debian/Ubuntu:  sudo apt-get install --no-install-recommends prometheus   (or run this script as root: sudo bash scripts/ensure-prometheus.sh)
  macOS:          brew install prometheus
MESSAGE
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "prometheus is not installed and apt-get is not available: install Prometheus 2 with your package manager." >&2
  exit 1
fi

echo "ensure-prometheus: installing Debian's prometheus for the tests"
# policy-rc.d (Debian's invoke-rc.d policy) keeps the package from starting a system Prometheus on 9090.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
# The package lists are read only when apt does not know the package yet, or its files have moved since.
install_prometheus() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}
if ! apt-cache policy prometheus 2>/dev/null | grep -q 'Candidate: [0-9]' || ! install_prometheus; then
  apt-get update -qq
  install_prometheus
fi
if command -v systemctl >/dev/null 2>&1; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
command -v prometheus >/dev/null
echo "ensure-prometheus: $(prometheus --version 2>&1 | head -1)"

#!/usr/bin/env bash
# Makes sure redis-server is installed: the tests and benchmarks start their own Redis processes on free
# ports, so they need the binary, never a running service. `npm test` runs this first.
# On PATH already: nothing to do. As root: installs Debian's redis-server without starting the system
# service (and keeps it from starting at boot). Otherwise: says how to install it and fails.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  cat >&2 <<'MESSAGE'
redis-server is not installed. The tests start their own Redis on a free port and need the binary:
  Debian/Ubuntu:  sudo apt-get install redis-server   (or run this script as root: sudo bash scripts/ensure-redis.sh)
  macOS:          brew install redis
MESSAGE
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "redis-server is not installed and apt-get is not available: install Redis 7 with your package manager." >&2
  exit 1
fi

echo "ensure-redis: installing Debian's redis-server for the tests"
# policy-rc.d (Debian's invoke-rc.d policy) keeps the package from starting a system Redis on 6379.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
if command -v systemctl >/dev/null 2>&1; then
  systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
command -v redis-server >/dev/null
echo "ensure-redis: $(redis-server --version)"

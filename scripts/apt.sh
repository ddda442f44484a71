#!/usr/bin/env bash
# The one way the test setup installs Debian packages, sourced by scripts/ensure-*.sh.
# apt_install PACKAGE...: as root on a machine with apt-get, installs the packages without starting their system
# services (policy-rc.d, Debian's invoke-rc.d policy, refuses every start while it runs) and keeps those services from
# starting at boot. The package lists are read only when apt does not know a package yet, or its files have moved.
# Returns 1 (installing nothing) when not root or apt-get is missing: the caller says what to install.

apt_install() {
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  local policy=/usr/sbin/policy-rc.d created=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    created=1
  fi
  local known=1 package
  for package in "$@"; do
    apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [0-9]' || known=""
  done
  local status=0
  if [ -z "$known" ] || ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
      status=$?
  fi
  [ -n "$created" ] && rm -f "$policy"
  if command -v systemctl >/dev/null 2>&1; then
    for package in "$@"; do systemctl disable --now "$package" >/dev/null 2>&1 || true; done
  fi
  return "$status"
}

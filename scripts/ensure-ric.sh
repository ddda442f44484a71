#!/usr/bin/env bash
# Makes sure AWS's Lambda runtime interface client (the npm package `aws-lambda-ric`, an optional dependency of
# examples/lambda, which its test and benchmark run under) is installed. `npm test` runs this first.
# 1. The tools its install script needs (it compiles curl and aws-lambda-cpp, then a Node addon): on PATH already,
#    nothing to do; as root, installs Debian's packages; otherwise says what to install.
# 2. The package itself: `npm ci` under a system Node older than 22 leaves it out (it is optional), so it is
#    installed once with the repository's own Node 22 (node_modules/.bin). A failed build is not an error: the
#    Lambda example's test and benchmark then fall back to import() and say so. Tried once per lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=apt.sh
. scripts/apt.sh

install_package() {
  [ -e node_modules/aws-lambda-ric/package.json ] && return 0
  [ -x node_modules/.bin/node ] || return 0
  marker="node_modules/.cache/walletgate/aws-lambda-ric-tried-$(cksum package-lock.json | cut -d' ' -f1)"
  [ -e "$marker" ] && return 0
  mkdir -p "$(dirname "$marker")"
  echo "ensure-ric: building aws-lambda-ric with Node $(node_modules/.bin/node --version) (once; minutes)"
  if ! PATH="$PWD/node_modules/.bin:$PATH" npm install --no-audit --no-fund --prefer-offline >/dev/null 2>&1; then
    echo "ensure-ric: npm install failed; the Lambda example's test and benchmark use import() instead" >&2
  fi
  [ -e node_modules/aws-lambda-ric/package.json ] || echo "ensure-ric: aws-lambda-ric not built; import() instead" >&2
  touch "$marker"
}

missing=()
for tool in autoconf automake libtoolize cmake g++ make python3; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -eq 0 ]; then
  install_package
  exit 0
fi

packages=(autoconf automake libtool cmake g++ make python3)
echo "ensure-ric: installing ${packages[*]} (missing: ${missing[*]})"
if ! apt_install "${packages[@]}"; then
  cat >&2 <<MESSAGE
ensure-ric: ${missing[*]} not found. aws-lambda-ric (AWS's Lambda runtime interface client, used by the
Lambda example's test and benchmark) builds from source with them:
  Debian/Ubuntu:  sudo apt-get install -y ${packages[*]}
Without them the Lambda example's test and benchmark fall back to import() and say so.
MESSAGE
  exit 0
fi
echo "ensure-ric: $(cmake --version | head -1), $(g++ --version | head -1)"
install_package

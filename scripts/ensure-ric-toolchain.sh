#!/usr/bin/env bash
# Makes sure the tools that build AWS's Lambda runtime interface client (the npm package `aws-lambda-ric`, an
# optional dependency of examples/lambda) are installed: its install script compiles curl and aws-lambda-cpp,
# then a Node addon. `.ci/run` runs this before `npm ci`; without these tools `npm ci` still passes (the package
# is optional), and the Lambda example's test and benchmark fall back to import() and say so.
# All on PATH already: nothing to do. As root: installs Debian's packages. Otherwise: says what to install.
set -euo pipefail

missing=()
for tool in autoconf automake libtoolize cmake g++ make python3; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

packages="autoconf automake libtool cmake g++ make python3"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  cat >&2 <<MESSAGE
ensure-ric-toolchain: ${missing[*]} not found. aws-lambda-ric (AWS's Lambda runtime interface client, used by the
Lambda example's test and benchmark) builds from source with them:
  Debian/Ubuntu:  sudo apt-get install -y ${packages}
Without them the Lambda example's test and benchmark fall back to import() and say so.
MESSAGE
  exit 0
fi

echo "ensure-ric-toolchain: installing ${packages} (missing: ${missing[*]})"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages} >/dev/null
echo "ensure-ric-toolchain: $(cmake --version | head -1), $(g++ --version | head -1)"

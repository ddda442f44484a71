#!/usr/bin/env bash
# Every published package passes publint (strict) and Are the Types Wrong (on the packed tarball, ES modules
# only: node16 ESM and bundler resolution). Run after `npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."
for package in packages/*/; do
  npx --no-install publint --strict "$package"
  npx --no-install attw --pack "$package" --profile esm-only --format table-flipped
done

#!/usr/bin/env bash
# npm run check:gen — gen/ is what buf generate writes from proto/: runs buf
# generate (local plugins, offline), then fails when gen/ differs from the
# commit (a changed, new or deleted file). Run it on a clean gen/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/usage.sh "$@"
npx buf generate
git diff --exit-code -- gen
if [ -n "$(git status --porcelain -- gen)" ]; then
  git status --porcelain -- gen >&2
  echo "gen/ has files buf generate did not write, or is missing some: run npm run generate and commit gen/" >&2
  exit 1
fi

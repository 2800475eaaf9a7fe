#!/usr/bin/env bash
# npm run lint — the static checks that need no build:
#   biome check . (format and lint of src, bench, scripts, test),
#   buf lint and buf format --diff --exit-code (proto/),
#   the file options of every file of proto/docflow (scripts/check-proto-options.ts),
#   every regular expression of src/ against super-linear backtracking (scripts/check-regex.ts, recheck).
# Exits non-zero on the first finding. Changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/usage.sh "$@"
npx biome check .
npx buf lint
npx buf format --diff --exit-code
npx tsx scripts/check-proto-options.ts
npx tsx scripts/check-regex.ts src

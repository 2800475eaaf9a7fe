#!/usr/bin/env bash
# npm run check — everything static, in order: npm run typecheck (tsc),
# npm run lint (biome, buf, proto options), npm run check:gen (gen/ fresh).
# Exits non-zero on the first failure. Changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/usage.sh "$@"
npm run -s typecheck
bash scripts/lint.sh
bash scripts/check-gen.sh

#!/usr/bin/env bash
# npm run test:dashboard: the Grafana dashboard of deploy/grafana against a real
# Prometheus (Debian's package, installed with apt when missing) scraping the
# service under load (test/deploy/dashboard-check.ts).
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."
if ! command -v prometheus > /dev/null && [ -z "${PROMETHEUS:-}" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus > /dev/null
fi
npm run -s build
node_modules/.bin/tsx test/deploy/dashboard-check.ts

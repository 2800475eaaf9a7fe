#!/usr/bin/env bash
# npm run test:rules: the alerting and recording rules of deploy/prometheus,
# checked and unit-tested by promtool (built from the Go module proxy by
# test/support/promtool.sh, or $PROMTOOL when set).
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."
promtool=${PROMTOOL:-$(bash test/support/promtool.sh)}
"$promtool" check rules deploy/prometheus/docflow-api.rules.yml
"$promtool" test rules deploy/prometheus/tests.yml

#!/usr/bin/env bash
# npm run test:fuzz: a schema-driven fuzz run of the service from its own /openapi.json.
#
# Starts the service on a free port with the embedded database and the demo data,
# runs Schemathesis (test/fuzz/schemathesis.toml: fixed seed, one worker, bounded
# examples, every check, negative data included), stops the service, and exits
# non-zero on any finding, on a server error, or when the service logged an error.
# The virtualenv and the reports go to test-results/fuzz/ (ignored by git).
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."

out=test-results/fuzz
venv="$out/.venv"
mkdir -p "$out"
if [ ! -x "$venv/bin/schemathesis" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r test/fuzz/requirements.txt

# shellcheck source=../support/service.sh
. test/support/service.sh
log="$out/service.log"
# The fuzzer sends thousands of requests without credentials or with broken ones by
# design: with the failure budget on, the address would be refused 429 after 30 and
# every later check would judge that refusal (the budget's own tests: test/server/security.test.ts).
start_service "$log" LOG_LEVEL=warn AUTH_FAILURES_PER_ADDRESS=0 AUTH_FAILURES_PER_KEY=0 node_modules/.bin/tsx src/main.ts
curl -sf "$base/healthz" > /dev/null

status=0
# Every operation: the legacy paths and the resource API (/v1/, docs/api.md §3.1).
"$venv/bin/schemathesis" --config-file test/fuzz/schemathesis.toml run "$base/openapi.json" \
  --report junit --report-junit-path "$out/junit.xml" || status=$?

stop_service
service_errors "$log" "the fuzz run" || status=1
exit "$status"

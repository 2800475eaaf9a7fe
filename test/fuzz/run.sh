#!/usr/bin/env bash
# npm run test:fuzz: a schema-driven fuzz run of the service from its own /openapi.json.
#
# Starts the service on a free port with the embedded database and the demo data,
# runs Schemathesis (test/fuzz/schemathesis.toml: fixed seed, one worker, bounded
# examples, every check, negative data included), stops the service, and exits
# non-zero on any finding, on a server error, or when the service logged an error.
# The virtualenv and the reports go to test-results/fuzz/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/../.."

out=test-results/fuzz
venv="$out/.venv"
mkdir -p "$out"
if [ ! -x "$venv/bin/schemathesis" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r test/fuzz/requirements.txt

log="$out/service.log"
# The embedded database and the demo data (src/fixtures/demo.ts), whatever the caller's environment says.
env -u MONGODB_URI -u MONGODB_DB -u SEED_FILE HOST=127.0.0.1 PORT=0 LOG_LEVEL=warn \
  node_modules/.bin/tsx src/main.ts > "$log" 2>&1 &
pid=$!

stop() {
  if kill -0 "$pid" 2> /dev/null; then
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2> /dev/null || true
  fi
  wait "$pid" 2> /dev/null || true
  # The embedded engine outlives a killed parent: stop it by its pid if it is still there.
  local db
  db=$(grep -o '"embeddedPid":[0-9]*' "$log" | head -n 1 | cut -d: -f2 || true)
  if [ -n "$db" ] && kill -0 "$db" 2> /dev/null; then kill -TERM "$db" 2> /dev/null || true; fi
}
trap stop EXIT

port=""
for _ in $(seq 300); do
  port=$(sed -n 's|.*is listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$log" | head -n 1)
  [ -n "$port" ] && break
  kill -0 "$pid" 2> /dev/null || { cat "$log" >&2; echo "the service did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { cat "$log" >&2; echo "the service did not start within 30 s" >&2; exit 1; }
base="http://127.0.0.1:$port"
curl -sf "$base/healthz" > /dev/null

status=0
"$venv/bin/schemathesis" --config-file test/fuzz/schemathesis.toml run "$base/openapi.json" \
  --report junit --report-junit-path "$out/junit.xml" || status=$?

stop
trap - EXIT
if grep -q '"level":"error"' "$log"; then
  echo "the service logged errors during the fuzz run ($log):" >&2
  grep '"level":"error"' "$log" | head -n 20 >&2
  status=1
fi
exit "$status"

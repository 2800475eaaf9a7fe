#!/usr/bin/env bash
# npm run test:hostile — HTTP/2 abuse against a real service (test/hostile/h2_abuse.py;
# its docstring says what each attack is and which limit answers it): rapid reset,
# CONTINUATION flood, SETTINGS and PING floods, stream exhaustion, held request
# bodies, answers never read, 2,000 idle connections, one after another, while a
# victim client (from 127.0.0.2, another client address) measures its latency.
#
# Builds the bundle and starts it as npm start does (the start script's env and
# node flags, its node through npm exec: the project's Node) on a free port, with
# the embedded database and the demo data whatever the caller's environment says.
# Exits 1 if the victim saw an error or its p99 during or after an attack passed
# the bound (by default max(1 s, 20 x the baseline p99)), 2 if the service died or
# stopped answering, 3 if the setup failed; stops the service in every case.
# The virtualenv goes to test-results/hostile-venv; the report (report.txt,
# result.json) and the service's log to test-results/hostile/. About 100 s.
#
# Arguments go to h2_abuse.py, e.g. --only rapid_reset,slow_read, --json FILE,
# --p99-bound-ms 2000, --max-victim-errors 5, --during 4 (h2_abuse.py --help).
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."

out=test-results/hostile
venv=test-results/hostile-venv
log=$out/service.log
mkdir -p "$out"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r test/hostile/requirements.txt

# 2,000 connections need as many descriptors, in the service and in the attacker.
soft=$(ulimit -Sn)
hard=$(ulimit -Hn)
if [ "$soft" != unlimited ] && [ "$soft" -lt 8192 ]; then
  if [ "$hard" = unlimited ] || [ "$hard" -ge 8192 ]; then ulimit -Sn 8192; else ulimit -Sn "$hard"; fi
fi

service=""
attacker=""
stop() {
  if [ -n "$attacker" ] && kill -0 "$attacker" 2> /dev/null; then
    kill -TERM "$attacker" 2> /dev/null || true
    wait "$attacker" 2> /dev/null || true
  fi
  if [ -n "$service" ] && kill -0 -- "-$service" 2> /dev/null; then
    kill -TERM -- "-$service" 2> /dev/null || true
    for _ in $(seq 100); do kill -0 -- "-$service" 2> /dev/null || break; sleep 0.1; done
    kill -KILL -- "-$service" 2> /dev/null || true
  fi
  # The embedded engine, should it have left the service's process group.
  local db
  db=$(grep -o '"embeddedPid":[0-9]*' "$log" 2> /dev/null | head -n 1 | cut -d: -f2 || true)
  if [ -n "$db" ] && kill -0 "$db" 2> /dev/null; then kill -TERM "$db" 2> /dev/null || true; fi
  service=""
  attacker=""
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

npm run -s build
# The start script's command after its "exec " (env, node flags, the bundle), with
# its node run by npm exec (node_modules/.bin/node, the version package.json pins).
read -r -a start < <(python3 -c 'import json; s = json.load(open("package.json"))["scripts"]["start"]; print(s.split("exec ", 1)[1])')
command=()
for word in "${start[@]}"; do
  if [ "$word" = node ]; then command+=(npm exec -- node); else command+=("$word"); fi
done

# Its own session and process group (whose id it writes down), stopped as a whole.
rm -f "$out/service.pgid"
setsid bash -c 'echo $$ > "$0"; exec "$@"' "$out/service.pgid" \
  env -u MONGODB_URI -u MONGODB_DB -u SEED_FILE HOST=127.0.0.1 PORT=0 SHUTDOWN_DRAIN_MS=0 \
  "${command[@]}" > "$log" 2>&1 &
base=""
for _ in $(seq 600); do
  [ -n "$service" ] || service=$(cat "$out/service.pgid" 2> /dev/null || true)
  # The banner (stderr, whatever LOG_LEVEL says).
  base=$(sed -n 's|.*is listening on \(http://127\.0\.0\.1:[0-9][0-9]*\).*|\1|p' "$log" | head -n 1)
  [ -n "$base" ] && break
  if [ -n "$service" ] && ! kill -0 -- "-$service" 2> /dev/null; then break; fi
  sleep 0.1
done
if [ -z "$base" ]; then
  cat "$log" >&2
  echo "the service did not start" >&2
  exit 3
fi
echo "service: $base (${command[*]}), log $log"

status=0
"$venv/bin/python" test/hostile/h2_abuse.py --port "${base##*:}" --server-log "$log" \
  --json "$out/result.json" "$@" > >(tee "$out/report.txt") 2>&1 &
attacker=$!
wait "$attacker" || status=$?
attacker=""
if grep -q '"level":"error"' "$log"; then
  echo "the service logged $(grep -c '"level":"error"' "$log") errors ($log)"
fi
exit "$status"

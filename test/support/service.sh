# Sourced by the scripts that test a running service (test/fuzz/run.sh,
# test/interop/openapi/run.sh): the service on a free port with the embedded
# database and the demo data (src/fixtures/demo.ts), whatever the caller's
# environment says.
#
#   start_service LOG [VAR=value...] COMMAND...
#                                  starts it, sets $base (http://127.0.0.1:PORT)
#                                  and a trap that stops it on exit
#   stop_service                   stops it and the embedded engine (idempotent)
#   service_errors LOG WHAT        non-zero, listing them, if the service logged errors

start_service() {
  service_log=$1
  shift
  env -u MONGODB_URI -u MONGODB_DB -u SEED_FILE HOST=127.0.0.1 PORT=0 \
    "$@" > "$service_log" 2>&1 &
  service_pid=$!
  trap stop_service EXIT
  base=""
  for _ in $(seq 300); do
    # The banner (stderr, whatever LOG_LEVEL says).
    base=$(sed -n 's|.*is listening on \(http://127\.0\.0\.1:[0-9][0-9]*\).*|\1|p' "$service_log" | head -n 1)
    [ -n "$base" ] && return 0
    kill -0 "$service_pid" 2> /dev/null || { cat "$service_log" >&2; echo "the service did not start" >&2; exit 1; }
    sleep 0.1
  done
  cat "$service_log" >&2
  echo "the service did not start within 30 s" >&2
  exit 1
}

stop_service() {
  if kill -0 "$service_pid" 2> /dev/null; then
    kill -TERM "$service_pid" 2> /dev/null || true
    for _ in $(seq 100); do kill -0 "$service_pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$service_pid" 2> /dev/null || true
  fi
  wait "$service_pid" 2> /dev/null || true
  # The embedded engine outlives a killed parent: stop it by its pid if it is still there.
  local db
  db=$(grep -o '"embeddedPid":[0-9]*' "$service_log" | head -n 1 | cut -d: -f2 || true)
  if [ -n "$db" ] && kill -0 "$db" 2> /dev/null; then kill -TERM "$db" 2> /dev/null || true; fi
  trap - EXIT
}

service_errors() {
  if grep -q '"level":"error"' "$1"; then
    echo "the service logged errors during $2 ($1):" >&2
    grep '"level":"error"' "$1" | head -n 20 >&2
    return 1
  fi
}

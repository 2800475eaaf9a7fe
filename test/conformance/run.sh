#!/usr/bin/env bash
# The Connect conformance suite (Go module connectrpc.com/conformance, server
# mode) against test/conformance/server.ts: ConformanceService served through
# the service's own front door. Builds the runner from the Go module proxy and
# the suite's protos from the module cache (nothing of them is committed),
# then runs it with test/conformance/config.yaml and the deliberate
# differences in known-failing.txt. Exits non-zero on any other failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=v1.0.7
OUT=test-results/conformance
mkdir -p "$OUT/bin"
export PATH="$PWD/node_modules/.bin:$PATH"

if ! "$OUT/bin/connectconformance" --version 2>/dev/null | grep -q "${VERSION#v}"; then
  GOBIN="$PWD/$OUT/bin" go install "connectrpc.com/conformance/cmd/connectconformance@$VERSION"
fi
dir=$(go mod download -json "connectrpc.com/conformance@$VERSION" \
  | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>process.stdout.write(JSON.parse(s).Dir))')
if [ ! -s "$OUT/image.binpb" ] || [ "$(cat "$OUT/image.version" 2>/dev/null)" != "$VERSION" ]; then
  buf build "$dir" --as-file-descriptor-set --exclude-source-info -o "$OUT/image.binpb"
  echo "$VERSION" > "$OUT/image.version"
fi

# The servers' JSON logs go to a file; the runner's output (each case the suite knows to
# fail is three lines of it) to another. Printed here: the summary, and on a failure what
# failed and whatever else was said (what Node prints if a server dies), so that it is in
# the last lines of a CI log.
export CONFORMANCE_LOG="$PWD/$OUT/server.log"
runner_log="$PWD/$OUT/runner.log"
: > "$CONFORMANCE_LOG"
# One call that never ends stalls the runner, which has no limit of its own.
status=0
timeout --kill-after=15 "${CONFORMANCE_TIMEOUT_S:-1200}" "$OUT/bin/connectconformance" \
  --mode server --conf test/conformance/config.yaml \
  --known-failing @test/conformance/known-failing.txt \
  "$@" -- tsx test/conformance/server.ts > "$runner_log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  echo "conformance failed (exit $status); the runner's output: $runner_log; the servers' log: $CONFORMANCE_LOG" >&2
  echo "-- what failed (first 40 lines):" >&2
  grep -A3 '^FAILED' "$runner_log" | head -n 40 >&2 || true
  echo "-- anything else the runner or a server said:" >&2
  grep -v -e '^INFO: ' -e '^FAILED: ' -e $'^\t' -e '^$' -e '^Total cases' -e ' passed, ' -e '^(Another ' "$runner_log" | head -n 40 >&2 || true
  echo "-- the servers' last log lines other than the suite's own error cases:" >&2
  grep -v '"msg":"unexpected error"' "$CONFORMANCE_LOG" | tail -n 20 >&2 || true
fi
tail -n 3 "$runner_log"
exit "$status"

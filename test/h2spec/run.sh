#!/usr/bin/env bash
# h2spec (HTTP/2 conformance, github.com/summerwind/h2spec) against the
# service's port over h2c, the service started as `npm start` starts it (the
# built bundle, the start script's node flags) on the embedded database.
# Builds h2spec from the Go module proxy, with the dependency versions pinned
# (v2.2.1 has no go.mod). Fails on any failure not in expected-failures.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=test-results/h2spec
mkdir -p "$OUT"
export PATH="$PWD/node_modules/.bin:$PATH"
BIN="$PWD/$OUT/h2spec"
VERSION=v2.2.1+incompatible
PINS=(golang.org/x/net@v0.62.0 github.com/spf13/cobra@v1.10.2 github.com/spf13/pflag@v1.0.9
      github.com/fatih/color@v1.19.0 github.com/mattn/go-colorable@v0.1.14
      github.com/mattn/go-isatty@v0.0.20 golang.org/x/sys@v0.49.0 golang.org/x/text@v0.43.0)
if [ ! -x "$BIN" ]; then
  work=$(mktemp -d)
  (cd "$work" && go mod init h2spec-build >/dev/null 2>&1 \
    && go get "github.com/summerwind/h2spec@$VERSION" "${PINS[@]}" >/dev/null 2>&1 \
    && go build -trimpath -o "$BIN" github.com/summerwind/h2spec/cmd/h2spec)
  rm -rf "$work"
fi

npm run -s build
start=$(node -e 'const s=require("./package.json").scripts.start; process.stdout.write(s.slice(s.indexOf("exec ")+5))')
# The start script's command (env, node flags, the bundle), on a free port, in its own process group.
setsid bash -c "PORT=0 HOST=127.0.0.1 SHUTDOWN_DRAIN_MS=0 exec $start" > "$OUT/service.out" 2> "$OUT/service.err" &
service=$!
trap 'kill -TERM -- -$service 2>/dev/null || true; wait $service 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 300); do
  url=$(grep -oE 'listening on http://[^ ]+' "$OUT/service.err" | head -1 | cut -d' ' -f3 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { cat "$OUT/service.err" >&2; echo "the service did not start" >&2; exit 2; }
port=${url##*:}

set +e
"$BIN" -h 127.0.0.1 -p "$port" -P /livez -o 2 > "$OUT/h2spec.txt" 2>&1
set -e
tr -d '\000' < "$OUT/h2spec.txt" > "$OUT/h2spec.clean" && mv "$OUT/h2spec.clean" "$OUT/h2spec.txt"
# Failing ids (section/case, e.g. 6.9.1/3) from the report's "Failures:" part.
awk '
  /^Failures:/ { on = 1; next }
  !on { next }
  /^Generic tests/ { group = "generic/"; next }
  /^Hypertext Transfer Protocol/ { group = ""; next }
  /^HPACK/ { group = "hpack/"; next }
  match($0, /^ +[0-9]+(\.[0-9]+)*\. /) { s = $0; sub(/^ +/, "", s); sub(/\. .*/, "", s); sec = s; next }
  match($0, /\xc3\x97 [0-9]+:|× [0-9]+:/) { n = $0; sub(/^[^0-9]*/, "", n); sub(/:.*/, "", n); print group sec "/" n }
' "$OUT/h2spec.txt" | sort -u -V > "$OUT/failed.txt" || true
summary=$(grep -E '^[0-9]+ tests, ' "$OUT/h2spec.txt" | tail -1 || true)
[ -n "$summary" ] || { cat "$OUT/h2spec.txt" >&2; echo "h2spec did not run" >&2; exit 2; }
echo "h2spec: $summary"
sed 's/^/  failed: /' "$OUT/failed.txt"
unexpected=$(grep -vxF -f <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' test/h2spec/expected-failures.txt) "$OUT/failed.txt" || true)
if [ -n "$unexpected" ]; then
  echo "h2spec failures not explained in test/h2spec/expected-failures.txt:" >&2
  echo "$unexpected" | sed 's/^/  /' >&2
  exit 1
fi
echo "every failure is explained in test/h2spec/expected-failures.txt"

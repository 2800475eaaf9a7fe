#!/usr/bin/env bash
# Builds promtool (Prometheus's metrics checker) from the Go module proxy into
# test-results/bin and prints its path, for the promtool test of
# test/server/metrics.test.ts. `go install …@version` refuses the module's replace
# directives, so it is built inside the downloaded module.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v0.306.0
out="$PWD/test-results/bin/promtool"
if [ ! -x "$out" ]; then
  dir=$(go mod download -json "github.com/prometheus/prometheus@${version}" \
    | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>process.stdout.write(JSON.parse(s).Dir))')
  mkdir -p "$(dirname "$out")"
  (cd "$dir" && GOFLAGS=-mod=mod go build -o "$out" ./cmd/promtool) >&2
fi
echo "$out"

#!/usr/bin/env bash
# npm run test:showcase — Google's gapic-showcase Compliance suite (Go module github.com/googleapis/
# gapic-showcase v0.35.0, the one version the module proxy serves here) against
# the transcoder: test/showcase/server.ts serves google.showcase.v1beta1.
# Compliance through the front door; test/showcase/driver calls every case of
# the suite with Google's generated Go REST client. Exits non-zero on any
# failure. Nothing of the module is committed: compliance.proto and the suite
# come from the module cache.
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."
OUT=test-results/showcase
mkdir -p "$OUT/bin" "$OUT/proto/google/showcase/v1beta1" "$OUT/proto/google/api"
export PATH="$PWD/node_modules/.bin:$PATH"

(cd test/showcase/driver && go build -o "../../../$OUT/bin/compliance-driver" .)
module=$(cd test/showcase/driver && go list -m -f '{{.Dir}}' github.com/googleapis/gapic-showcase)

# compliance.proto with what it imports: google/api/{annotations,http}.proto from
# proto/third_party, and the one option of google/api/client.proto it uses (a stub).
cp "$module/schema/google/showcase/v1beta1/compliance.proto" "$OUT/proto/google/showcase/v1beta1/"
cp proto/third_party/google/api/annotations.proto proto/third_party/google/api/http.proto "$OUT/proto/google/api/"
cp test/showcase/stubs/google/api/client.proto "$OUT/proto/google/api/"
chmod -R u+w "$OUT/proto"
buf build "$OUT/proto" --as-file-descriptor-set --exclude-source-info -o "$OUT/image.binpb"

export SHOWCASE_IMAGE="$PWD/$OUT/image.binpb"
export SHOWCASE_SUITE="$module/server/services/compliance_suite.json"
coproc SERVER { exec tsx test/showcase/server.ts 2> "$OUT/server.log"; }
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
read -r -t 60 port <&"${SERVER[0]}" || { echo "the showcase server did not start:" >&2; cat "$OUT/server.log" >&2; exit 1; }
"$OUT/bin/compliance-driver" --endpoint "http://127.0.0.1:$port" --check-binding-uri "$@"

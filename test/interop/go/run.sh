#!/usr/bin/env bash
# npm run test:interop:go — the Go recipe of docs/clients.md as a user runs it,
# then the interop tests against a real service on a free port.
set -euo pipefail
. "$(dirname "$0")/../../../scripts/usage.sh" "$@"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$here"

# 1. protoc-gen-go and protoc-gen-go-grpc at the versions pinned in go.mod
#    (tool directives), into an ignored directory.
export GOBIN="$here/.bin"
go install tool

# 2. Generate from proto/ with the recipe template, into ./docflowpb (ignored).
rm -rf docflowpb
(cd "$root" && PATH="$GOBIN:$PATH" npx buf generate --template proto/buf.gen.go.yaml -o "$here/docflowpb")

# 3. The generated code is the module github.com/docflow/docflow-api/gen/go,
#    which go.mod replaces with ./docflowpb. Its go line is pinned so that the
#    check below does not depend on the patch release of the local toolchain.
(cd docflowpb && go mod init github.com/docflow/docflow-api/gen/go 2> /dev/null && go mod edit -go=1.24)

# 4. A plain `go mod tidy` would change nothing (go.mod and go.sum are tidy).
go mod tidy -diff

# 5. Build, vet, test.
go vet ./...
go test -count=1 ./...

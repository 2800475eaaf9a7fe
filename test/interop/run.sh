#!/usr/bin/env bash
# npm run test:interop — every interop client in turn (each also runs alone):
#   test:interop:python   a Python client generated with protoc 3.21
#   test:interop:go       a grpc-go client from the Go recipe of docs/clients.md
#   test:interop:java     a grpc-java client from protobuf-maven-plugin
#   test:interop:openapi  Python and typescript-fetch clients from /openapi.json
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/usage.sh "$@"
npm run -s test:interop:python
npm run -s test:interop:go
npm run -s test:interop:java
npm run -s test:interop:openapi

#!/usr/bin/env bash
# npm run test:interop:python — a Python gRPC client generated with protoc 3.21
# (test/interop/python/requirements.txt, into .venv/) against a real service:
# pytest -q test/interop/python. Arguments after -- go to pytest.
set -euo pipefail
cd "$(dirname "$0")/../../.."
. scripts/usage.sh "$@"
python3 -m venv .venv
.venv/bin/pip install -q -r test/interop/python/requirements.txt
.venv/bin/python -m pytest -q test/interop/python "$@"

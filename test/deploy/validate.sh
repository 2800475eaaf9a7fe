#!/usr/bin/env bash
# npm run test:deploy: the deployment files, checked by real validators.
# hadolint (Dockerfile), kubernetes-validate --strict (deploy/kubernetes), and
# compose-go's loader (compose.yaml). Exits non-zero on any finding.
set -euo pipefail
. "$(dirname "$0")/../../scripts/usage.sh" "$@"
cd "$(dirname "$0")/../.."

venv=test-results/deploy/.venv
mkdir -p test-results/deploy
[ -x "$venv/bin/hadolint" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r test/deploy/requirements.txt

echo "hadolint Dockerfile"
"$venv/bin/hadolint" Dockerfile
echo "kubernetes-validate --strict deploy/kubernetes"
"$venv/bin/kubernetes-validate" --strict deploy/kubernetes/*.yaml
echo "compose-go loader: compose.yaml"
(cd test/deploy/compose-check && go run . ../../../compose.yaml)

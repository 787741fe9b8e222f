#!/usr/bin/env bash
# Static checks of the deployment files (Dockerfile, compose.yaml,
# nginx.conf, k8s/) against the code: settings the services really read,
# binaries that exist, probes, selectors, and every route through the
# proxy and the Ingress. Builds nothing, needs no Docker or cluster; see
# deploy/check_deploy.py for the list.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -c 'import yaml' 2>/dev/null; then
  python3 -m pip install --quiet pyyaml
fi
exec python3 deploy/check_deploy.py "$@"

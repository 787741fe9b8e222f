#!/usr/bin/env bash
# Prints fresh secrets for a deployment (needs openssl):
#
#   deploy/gen-secrets.sh > deploy/.env              # compose (read from deploy/)
#   deploy/gen-secrets.sh k8s > deploy/k8s/secrets.env   # kustomize secretGenerator
#
# The JWT key is an Ed25519 seed, base64url without padding, as
# mancala_platform::jwt reads it; its public key is printed beside it for
# the services that only verify tokens. For k8s, DATABASE_URL and REDIS_URL
# are taken from the environment when set, else left for you to fill in.
set -euo pipefail

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

der=$(mktemp)
trap 'rm -f "$der"' EXIT
openssl genpkey -algorithm ed25519 -outform DER -out "$der" 2>/dev/null
# PKCS#8 of an Ed25519 key ends with the 32-byte seed; SPKI ends with the
# 32-byte public key.
private=$(tail -c 32 "$der" | b64url)
public=$(openssl pkey -inform DER -in "$der" -pubout -outform DER | tail -c 32 | b64url)
token=$(openssl rand 32 | b64url)

case ${1:-compose} in
  compose)
    cat <<EOF
# deploy/.env: secrets of deploy/compose.yaml. Never commit this file.
POSTGRES_PASSWORD=$(openssl rand -hex 24)
MANCALA_JWT_PRIVATE_KEY=$private
MANCALA_JWT_PUBLIC_KEY=$public
MANCALA_INTERNAL_TOKEN=$token
EOF
    ;;
  k8s)
    cat <<EOF
# deploy/k8s/secrets.env: the mancala-secrets Secret (kustomize
# secretGenerator). Never commit this file.
DATABASE_URL=${DATABASE_URL:-postgres://mancala:CHANGE-ME@postgres.example.internal:5432/mancala}
REDIS_URL=${REDIS_URL:-redis://:CHANGE-ME@redis.example.internal:6379}
APP_JWT_PRIVATE_KEY=$private
APP_JWT_PUBLIC_KEY=$public
APP_INTERNAL_TOKEN=$token
EOF
    ;;
  *)
    echo "usage: $0 [compose|k8s]" >&2
    exit 2
    ;;
esac

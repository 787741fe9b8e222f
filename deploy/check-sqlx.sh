#!/usr/bin/env bash
# Checks that the committed query data in .sqlx/ matches the queries in the
# code and the schema the migrations build: `cargo sqlx prepare --check`
# against a scratch database migrated from migrations/. Installs sqlx-cli
# (the version sqlx itself is at in Cargo.lock) when it is missing.
#
# To refresh .sqlx/ after changing a query or a migration:
#   deploy/check-sqlx.sh --write
set -euo pipefail
cd "$(dirname "$0")/.."

SQLX_VERSION=$(awk '/^name = "sqlx"$/ {getline; gsub(/"/, "", $3); print $3; exit}' Cargo.lock)
if [ "$(cargo sqlx --version 2>/dev/null | awk '{print $2}')" != "$SQLX_VERSION" ]; then
  echo "[sqlx] installing sqlx-cli $SQLX_VERSION" >&2
  cargo install --locked --quiet sqlx-cli --version "$SQLX_VERSION" \
    --no-default-features --features postgres,rustls
fi

server=${DATABASE_SERVER_URL:-postgres://postgres@127.0.0.1:5432}
scratch=mancala_sqlx_check
export DATABASE_URL="$server/$scratch"
unset SQLX_OFFLINE
cargo sqlx database drop -y >/dev/null 2>&1 || true
cargo sqlx database create
cargo sqlx migrate run --source migrations >/dev/null
if [ "${1:-}" = "--write" ]; then
  cargo sqlx prepare --workspace
else
  cargo sqlx prepare --check --workspace
fi
cargo sqlx database drop -y >/dev/null

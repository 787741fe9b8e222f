#!/usr/bin/env bash
# The README's run command. Brings up Postgres and Redis, then:
#   deploy/run.sh            the platform's HTTP API (today the matchmaking
#                            service: accounts and sessions) on APP_BIND,
#                            default 127.0.0.1:8080
#   deploy/run.sh ARGS...    the rules engine's command line, `mancala ARGS`
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
target_dir=${CARGO_TARGET_DIR:-target}
if [ "$#" -eq 0 ]; then
  cargo build --release --quiet -p mancala-matchmaking
  # The local database the defaults point at; created once.
  database_url=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mancala}
  if command -v psql >/dev/null 2>&1; then
    psql "${database_url%/*}/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '${database_url##*/}'" |
      grep -q 1 || psql "${database_url%/*}/postgres" -qc "CREATE DATABASE \"${database_url##*/}\""
  fi
  echo "Mancala Arena API on http://${APP_BIND:-127.0.0.1:8080} (try: curl -X POST http://${APP_BIND:-127.0.0.1:8080}/v1/auth/guest)"
  exec "$target_dir/release/matchmaking"
fi
cargo build --release --quiet -p mancala-cli
exec "$target_dir/release/mancala" "$@"

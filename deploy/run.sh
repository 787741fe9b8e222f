#!/usr/bin/env bash
# The README's run command. Brings up Postgres and Redis, then:
#   deploy/run.sh            Mancala Arena in one process (matchmaking,
#                            game-room and rating) on APP_BIND or --bind,
#                            default 127.0.0.1:8080; it prints the URL
#   deploy/run.sh --bind H:P the same, elsewhere
#   deploy/run.sh cli ARGS   the rules engine's command line, `mancala ARGS`
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
target_dir=${CARGO_TARGET_DIR:-target}
if [ "${1:-}" = "cli" ]; then
  shift
  cargo build --release --quiet -p mancala-cli
  exec "$target_dir/release/mancala" "$@"
fi
cargo build --release --quiet -p mancala-arena
# The local database the defaults point at; created once.
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mancala}
if command -v psql >/dev/null 2>&1; then
  psql "${DATABASE_URL%/*}/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '${DATABASE_URL##*/}'" |
    grep -q 1 || psql "${DATABASE_URL%/*}/postgres" -qc "CREATE DATABASE \"${DATABASE_URL##*/}\""
fi
exec "$target_dir/release/arena" "$@"

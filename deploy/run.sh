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
# The first build compiles every dependency with optimisations: minutes,
# not seconds. Say so, and let cargo show its progress, rather than sit
# silent; later runs rebuild only what changed.
build() {
  local binary=$target_dir/release/$1
  if [ ! -x "$binary" ]; then
    echo "run: building $1 (release) for the first time: about 6 minutes on 2 cores, 2 on 8; later runs take seconds" >&2
  fi
  cargo build --release -p "$2"
}
if [ "${1:-}" = "cli" ]; then
  shift
  build mancala mancala-cli
  exec "$target_dir/release/mancala" "$@"
fi
build arena mancala-arena
# The local database the defaults point at; created once.
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mancala}
if command -v psql >/dev/null 2>&1; then
  psql "${DATABASE_URL%/*}/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '${DATABASE_URL##*/}'" |
    grep -q 1 || psql "${DATABASE_URL%/*}/postgres" -qc "CREATE DATABASE \"${DATABASE_URL##*/}\""
fi
exec "$target_dir/release/arena" "$@"

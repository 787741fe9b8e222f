#!/usr/bin/env bash
# The README's run command. Brings up Postgres and Redis, then:
#   deploy/run.sh            Mancala Arena in one process (matchmaking,
#                            game-room and rating) on APP_BIND or --bind,
#                            default 127.0.0.1:8080; it prints the URL
#   deploy/run.sh --bind H:P the same, elsewhere
#   deploy/run.sh cli ARGS   the rules engine's command line, `mancala ARGS`
#   deploy/run.sh --release  the optimised build, even where the test
#                            command's build is there to start at once
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
target_dir=${CARGO_TARGET_DIR:-target}
# The first optimised build compiles every dependency: minutes, not
# seconds. Where the test command already built a binary (an unoptimised
# build, with the rules and the AI optimised all the same), start that one
# after an incremental build of seconds, and say how to get the optimised
# one; otherwise say how long the first build takes and let cargo show its
# progress rather than sit silent.
profile=release
if [ "${1:-}" = "--release" ]; then
  shift
elif [ ! -x "$target_dir/release/arena" ] && [ -x "$target_dir/debug/arena" ]; then
  profile=debug
fi
build() {
  local binary=$target_dir/$profile/$1
  if [ "$profile" = debug ]; then
    echo "run: starting the build the test command made ($target_dir/debug: rules and AI optimised, the rest not)." >&2
    echo "run: 'deploy/run.sh --release' builds the optimised server: about 6 minutes the first time on 2 cores, 2 on 8." >&2
    cargo build -p "$2"
    return
  fi
  if [ ! -x "$binary" ]; then
    echo "run: building $1 (release) for the first time: about 6 minutes on 2 cores, 2 on 8; later runs take seconds" >&2
  fi
  cargo build --release -p "$2"
}
if [ "${1:-}" = "cli" ]; then
  shift
  build mancala mancala-cli
  exec "$target_dir/$profile/mancala" "$@"
fi
build arena mancala-arena
# The local database the defaults point at; created once.
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mancala}
if command -v psql >/dev/null 2>&1; then
  psql "${DATABASE_URL%/*}/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '${DATABASE_URL##*/}'" |
    grep -q 1 || psql "${DATABASE_URL%/*}/postgres" -qc "CREATE DATABASE \"${DATABASE_URL##*/}\""
fi
exec "$target_dir/$profile/arena" "$@"

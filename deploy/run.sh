#!/usr/bin/env bash
# The README's run command. Brings up Postgres and Redis, then:
#   deploy/run.sh            the platform: matchmaking (accounts, lobby,
#                            queues, invites) on APP_BIND (127.0.0.1:8080)
#                            and game-room on 127.0.0.1:8081, sharing a key
#                            and a service token
#   deploy/run.sh ARGS...    the rules engine's command line, `mancala ARGS`
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
target_dir=${CARGO_TARGET_DIR:-target}
if [ "$#" -gt 0 ]; then
  cargo build --release --quiet -p mancala-cli
  exec "$target_dir/release/mancala" "$@"
fi
cargo build --release --quiet -p mancala-matchmaking -p mancala-game-room
# The local database the defaults point at; created once.
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/mancala}
if command -v psql >/dev/null 2>&1; then
  psql "${DATABASE_URL%/*}/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '${DATABASE_URL##*/}'" |
    grep -q 1 || psql "${DATABASE_URL%/*}/postgres" -qc "CREATE DATABASE \"${DATABASE_URL##*/}\""
fi
# One key and one service token for both processes of this run.
export APP_JWT_PRIVATE_KEY=${APP_JWT_PRIVATE_KEY:-$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')}
export APP_INTERNAL_TOKEN=${APP_INTERNAL_TOKEN:-$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')}
bind=${APP_BIND:-127.0.0.1:8080}
games=${GAME_ROOM_BIND:-127.0.0.1:8081}
APP_BIND=$games "$target_dir/release/game-room" &
game_room=$!
trap 'kill $game_room 2>/dev/null' EXIT
echo "Mancala Arena: accounts and lobby on http://$bind, games on http://$games"
echo "(try: curl -X POST http://$bind/v1/auth/guest)"
APP_BIND=$bind APP_GAME_ROOM_URL=http://$games "$target_dir/release/matchmaking"

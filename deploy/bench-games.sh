#!/usr/bin/env bash
# Concurrent games over loopback: starts release `matchmaking` (guests) and
# `game-room` on a scratch database, then runs `loadgen` for each
# GAMES:THINK_MS pair given (default: 100:0 100:100 1000:0 1000:500),
# writing tests/bench/results/games-<GAMES>-think-<THINK_MS>.json.
# Think time 0 saturates the machine (a closed loop: latency is queueing);
# with think time the round trip shows the service time.
# Usage: deploy/bench-games.sh [GAMES:THINK_MS ...]   (DURATION=seconds)
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
cargo build --release --quiet -p mancala-matchmaking -p mancala-game-room -p mancala-tests
target_dir=${CARGO_TARGET_DIR:-target}
server=postgres://postgres@127.0.0.1:5432
database=mancala_bench_games
psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" -c "CREATE DATABASE $database"
seed=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
export DATABASE_URL=$server/$database APP_REDIS_PREFIX="bench:$$:" RUST_LOG=warn \
  APP_JWT_PRIVATE_KEY=$seed APP_INTERNAL_TOKEN=bench-token \
  APP_LIMIT_SIGNUPS_PER_IP=1000000000/60 APP_WS_RATE=1000/1000
APP_BIND=127.0.0.1:18080 "$target_dir/release/matchmaking" &
accounts=$!
APP_BIND=127.0.0.1:18081 "$target_dir/release/game-room" &
games=$!
trap 'kill $accounts $games 2>/dev/null; psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)"' EXIT
for port in 18080 18081; do
  for _ in $(seq 50); do curl -sf "localhost:$port/readyz" >/dev/null && break; sleep 0.2; done
done
ulimit -n 65536 2>/dev/null || true
mkdir -p tests/bench/results
[ "$#" -gt 0 ] || set -- 100:0 100:100 1000:0 1000:500
for run in "$@"; do
  n=${run%%:*} think=${run##*:}
  echo "== $n concurrent games, think $think ms"
  "$target_dir/release/loadgen" --accounts http://127.0.0.1:18080 --games http://127.0.0.1:18081 \
    --service-token bench-token --concurrency "$n" --think-ms "$think" \
    --duration-secs "${DURATION:-20}" --json "tests/bench/results/games-$n-think-$think.json"
done

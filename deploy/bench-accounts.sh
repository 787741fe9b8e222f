#!/usr/bin/env bash
# Loopback throughput of the accounts API with wrk (installed from Debian's
# packages if missing): guest creation, argon2 logins, and an authenticated
# read. Starts a release `matchmaking` on a scratch database and port 18080,
# with the sign-up limit lifted; prints wrk's requests/s and percentiles.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
export SQLX_OFFLINE=true
cargo build --release --quiet -p mancala-matchmaking
target_dir=${CARGO_TARGET_DIR:-target}
server=postgres://postgres@127.0.0.1:5432
psql "$server/postgres" -qc "DROP DATABASE IF EXISTS mancala_bench WITH (FORCE)" -c "CREATE DATABASE mancala_bench"
DATABASE_URL=$server/mancala_bench APP_BIND=127.0.0.1:18080 APP_REDIS_PREFIX="bench:$$:" \
  APP_LIMIT_SIGNUPS_PER_IP=1000000000/60 APP_LIMIT_REGISTRATIONS_PER_IP=1000000000/60 RUST_LOG=warn "$target_dir/release/matchmaking" &
pid=$!
trap 'kill $pid 2>/dev/null; psql "$server/postgres" -qc "DROP DATABASE IF EXISTS mancala_bench WITH (FORCE)"' EXIT
for _ in $(seq 50); do curl -sf localhost:18080/readyz >/dev/null && break; sleep 0.2; done
curl -sf -o /dev/null -X POST localhost:18080/v1/auth/register -H 'content-type: application/json' \
  -d '{"username":"benchuser","password":"bench password"}'
token=$(curl -sf -X POST localhost:18080/v1/auth/guest | sed 's/.*"access_token":"\([^"]*\)".*/\1/')
run() { echo "== $1"; shift; wrk --latency "$@" | grep -E 'Requests/sec|^ +(50|99)%'; }
run "POST /v1/auth/guest, 32 connections" -t2 -c32 -d15s -s tests/bench/guest.lua http://127.0.0.1:18080/v1/auth/guest
run "POST /v1/auth/login, 8 connections" -t2 -c8 -d15s -s tests/bench/login.lua http://127.0.0.1:18080/v1/auth/login
run "POST /v1/auth/login, 2 connections" -t2 -c2 -d10s -s tests/bench/login.lua http://127.0.0.1:18080/v1/auth/login
run "GET /v1/me, 32 connections" -t2 -c32 -d10s -H "Authorization: Bearer $token" http://127.0.0.1:18080/v1/me

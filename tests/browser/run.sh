#!/usr/bin/env bash
# Browser tests of the web client: starts the already-built `arena` binary
# on a free port against a fresh database and Redis prefix, serves web/,
# and drives Debian's Chromium through playwright-core (`node --test`).
#
#   tests/browser/run.sh                 # uses target/debug/arena
#   ARENA_BIN=/path/to/arena tests/browser/run.sh
#   tests/browser/run.sh tests/browser/tests/room-closed.test.mjs   # one file
#   ARENA_WEB_DIR=/tmp/old/web tests/browser/run.sh ...   # another copy of the client
#
# Screenshots land in tests/artifacts/browser/ (git-ignored).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
started=$(date +%s)

say() { printf 'browser: %s\n' "$*" >&2; }

# --- Chromium ------------------------------------------------------------
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian's chromium"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    say "$CHROMIUM is missing: install it as root (apt-get install chromium) or set CHROMIUM"
    exit 1
  fi
fi
# Korean text in screenshots needs a Korean font; the tests pass without one.
if [ "$(id -u)" = 0 ] && command -v fc-list >/dev/null && [ -z "$(fc-list :lang=ko family 2>/dev/null)" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-nanum >/dev/null 2>&1 || say "no Korean font (fonts-nanum); Korean screenshots show boxes"
fi

# --- node modules ----------------------------------------------------------
cd "$here"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

# --- the server --------------------------------------------------------------
target="${CARGO_TARGET_DIR:-$root/target}"
bin="${ARENA_BIN:-$target/debug/arena}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
if [ ! -x "$bin" ]; then
  say "no arena binary at $bin (build it with cargo build -p mancala-arena, or set ARENA_BIN)"
  exit 1
fi

pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
pg_user="${PGUSER:-postgres}"
redis_url="${REDIS_URL:-redis://127.0.0.1:6379}"
# The client served: web/, or another copy of it (to run a test against
# the client as it was before a change).
web_dir="${ARENA_WEB_DIR:-$root/web}"
case "$web_dir" in /*) ;; *) web_dir="$(pwd)/$web_dir" ;; esac
suffix="$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
db="browser_$suffix"
prefix="browser_$suffix:"
port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
base="http://127.0.0.1:$port"
log="$(mktemp -t arena-browser.XXXXXX.log)"
server_pid=""

cleanup() {
  local status=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    # arena drains its games on SIGTERM and exits; SIGKILL only if it hangs.
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  psql -q -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres \
    -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || say "could not drop $db"
  if command -v redis-cli >/dev/null; then
    redis-cli -u "$redis_url" --scan --pattern "${prefix}*" 2>/dev/null \
      | xargs -r -n 500 redis-cli -u "$redis_url" DEL >/dev/null 2>&1 || true
  fi
  if [ "$status" != 0 ] && [ -s "$log" ]; then
    say "server log (last 40 lines):"
    tail -n 40 "$log" >&2
  fi
  rm -f "$log"
  say "finished in $(( $(date +%s) - started )) s"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

psql -q -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null

# Short waits everywhere a test would otherwise sit idle.
DATABASE_URL="postgres://$pg_user@$pg_host:$pg_port/$db" \
REDIS_URL="$redis_url" \
APP_REDIS_PREFIX="$prefix" \
APP_WEB_DIR="$web_dir" \
APP_PUBLIC_URL="$base" \
APP_AI_FALLBACK_SECS=2 \
APP_RECONNECT_SECS=3 \
APP_PAIRING_WAVE_MS=500 \
APP_LOBBY_TICK_MS=500 \
APP_LOBBY_STATS_SECS=1 \
APP_AI_DEADLINE_MS=500 \
APP_LIMIT_SIGNUPS_PER_IP=1000/3600 \
APP_LIMIT_REGISTRATIONS_PER_IP=1000/3600 \
APP_LOG_FORMAT=pretty \
RUST_LOG="${RUST_LOG:-warn}" \
  "$bin" --bind "127.0.0.1:$port" >"$log" 2>&1 &
server_pid=$!
disown "$server_pid" # its end is ours to report, not the shell's

for _ in $(seq 300); do
  if grep -q "Mancala Arena is ready" "$log"; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "the server exited before it was ready"
    exit 1
  fi
  sleep 0.1
done
grep -q "Mancala Arena is ready" "$log" || { say "the server was not ready within 30 s"; exit 1; }
say "server ready at $base (database $db)"

# --- the tests ----------------------------------------------------------------
mkdir -p "$root/tests/artifacts/browser"
rm -f "$root/tests/artifacts/browser"/*.png
export ARENA_URL="$base"
# For tests that stand in for time passing (a room's day running out).
export ARENA_DATABASE_URL="postgres://$pg_user@$pg_host:$pg_port/$db"
export ARTIFACTS="$root/tests/artifacts/browser"
# For the moderation tests: the site owner's command line against the same stores.
export ARENA_ADMIN_BIN="$(dirname "$bin")/mancala-admin"
export ARENA_REDIS_URL="$redis_url" ARENA_REDIS_PREFIX="$prefix"
# For tests that need a server of their own with the default settings
# (harness.mjs `startArena`): the same binary, client and stores.
export ARENA_BIN="$bin" ARENA_WEB_DIR="$web_dir"
export ARENA_PG_HOST="$pg_host" ARENA_PG_PORT="$pg_port" ARENA_PG_USER="$pg_user"
# Arguments name test files to run (all of them when none are given).
if [ "$#" -gt 0 ]; then tests=("$@"); else tests=("$here"/tests/*.test.mjs); fi
# Bounded twice: a test that hangs fails on its own (3 min; the longest
# takes about 25 s), and a file whose process never exits (a browser left
# open by a failing hook) cannot hold CI past the whole run's limit.
timeout --kill-after=20 "${BROWSER_TESTS_TIMEOUT_SECS:-1200}" \
  node --test --test-concurrency=1 --test-timeout=180000 --test-reporter=spec "${tests[@]}"

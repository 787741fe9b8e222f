#!/usr/bin/env bash
# Runs the Colyseus peer benchmark once:
#
#   tests/bench/peers/colyseus/run.sh MODE GAMES DURATION_SECS OUT.json
#
#   MODE      memory | durable (durable INSERTs every move into Postgres
#             before broadcasting it)
#   GAMES     concurrent games (2 x GAMES player sockets)
#   DURATION  measured seconds, after the warm-up
#
# Environment (all optional):
#   PORT          server port (default 2567)
#   WARMUP_SECS   warm-up left out of the figures (default 3)
#   WORKERS       load-client worker threads (default 1)
#   DATABASE_URL  durable mode's database
#                 (default postgres://postgres@127.0.0.1:5432/mancala_peer)
#   PG_POOL_MAX   durable mode's pool size (default 32)
set -euo pipefail

usage() {
  echo "usage: $0 memory|durable GAMES DURATION_SECS OUT.json" >&2
  exit 2
}
[[ $# -eq 4 ]] || usage
MODE=$1
GAMES=$2
DURATION=$3
OUT=$4
[[ $MODE == memory || $MODE == durable ]] || usage
[[ $GAMES =~ ^[1-9][0-9]*$ ]] || usage
[[ $DURATION =~ ^[0-9]+([.][0-9]+)?$ ]] || usage

PORT=${PORT:-2567}
WARMUP_SECS=${WARMUP_SECS:-3}
WORKERS=${WORKERS:-1}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# OUT relative to where we were called from.
case $OUT in
  /*) ;;
  *) OUT="$PWD/$OUT" ;;
esac
cd "$HERE"

if [[ ! -d node_modules ]]; then
  echo "run.sh: installing npm packages (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
fi

SERVER_LOG=
SERVER_PID=
CLIENT_PID=

stop_server() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "run.sh: server $SERVER_PID did not stop on TERM; killing it" >&2
      kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}

on_exit() {
  local rc=$?
  if [[ -n $CLIENT_PID ]] && kill -0 "$CLIENT_PID" 2>/dev/null; then
    kill -TERM "$CLIENT_PID" 2>/dev/null || true
    wait "$CLIENT_PID" 2>/dev/null || true
  fi
  stop_server
  if [[ -n $SERVER_LOG ]]; then
    if [[ $rc -ne 0 ]]; then
      echo "run.sh: failed (exit $rc); server log kept at $SERVER_LOG" >&2
    else
      rm -f "$SERVER_LOG"
    fi
  fi
  exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "run.sh: something already listens on 127.0.0.1:$PORT; set PORT" >&2
  exit 1
fi

rm -f "$OUT" # never leave an older run's figures behind
SERVER_LOG=$(mktemp -t peer-colyseus-server.XXXXXX.log)
# `node` itself is the background job, so $! is the pid whose /proc the
# load client reads.
NODE_ENV=production PEER_MODE=$MODE PORT=$PORT node server.js >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

ready=0
for _ in $(seq 1 300); do # up to 30 s (durable mode may create the database)
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "run.sh: server exited during start-up:" >&2
    cat "$SERVER_LOG" >&2
    SERVER_PID=
    exit 1
  fi
  if grep -q "peer-colyseus listening" "$SERVER_LOG"; then
    ready=1
    break
  fi
  sleep 0.1
done
if [[ $ready -ne 1 ]]; then
  echo "run.sh: server did not start listening within 30 s:" >&2
  cat "$SERVER_LOG" >&2
  exit 1
fi

# In the background, so that a signal to this script is handled at once
# (bash runs traps only between foreground commands, but `wait` yields).
node loadclient.js \
  --games "$GAMES" \
  --duration-secs "$DURATION" \
  --warmup-secs "$WARMUP_SECS" \
  --workers "$WORKERS" \
  --url "ws://127.0.0.1:$PORT" \
  --label "colyseus-0.16-$MODE" \
  --server-pid "$SERVER_PID" \
  --json "$OUT" &
CLIENT_PID=$!
wait "$CLIENT_PID"
CLIENT_PID=

stop_server
if grep -qiE "error|exception" "$SERVER_LOG"; then
  echo "run.sh: the server logged errors:" >&2
  # -m, not a pipe into head: under pipefail grep's SIGPIPE would fail the run.
  grep -m 20 -iE "error|exception" "$SERVER_LOG" >&2 || true
fi

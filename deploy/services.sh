#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) answer,
# starting them from the installed server programs when they do not, and
# installing those from Debian's packages when they are missing and we are
# root. Both README commands (deploy/run.sh, deploy/test.sh) call this first.
#
# Idempotent: services that already answer are left alone.
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
WAIT_SECONDS=${WAIT_SECONDS:-30}

log() { printf '[services] %s\n' "$*" >&2; }

postgres_ready() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -h "$PG_HOST" -p "$PG_PORT" -q
  else
    (exec 3<>"/dev/tcp/$PG_HOST/$PG_PORT") 2>/dev/null
  fi
}

redis_ready() {
  if command -v redis-cli >/dev/null 2>&1; then
    [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]
  else
    (exec 3<>"/dev/tcp/$REDIS_HOST/$REDIS_PORT") 2>/dev/null
  fi
}

apt_install() {
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "cannot install $*: run as root on Debian/Ubuntu, or install it yourself"
    return 1
  fi
  log "installing $* from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() {
  local name=$1 check=$2
  for _ in $(seq 1 "$WAIT_SECONDS"); do
    if "$check"; then
      log "$name is up"
      return 0
    fi
    sleep 1
  done
  log "$name did not come up within ${WAIT_SECONDS}s"
  return 1
}

start_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    apt_install postgresql postgresql-client
    # A fresh Debian cluster asks for passwords on TCP; local development
    # and tests connect as `postgres` over loopback without one.
    local version
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    local hba="/etc/postgresql/$version/main/pg_hba.conf"
    if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
      sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
    fi
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  log "starting PostgreSQL $version"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
}

start_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    apt_install redis-server
  fi
  log "starting Redis"
  local dir=${TMPDIR:-/tmp}/mancala-redis
  mkdir -p "$dir"
  redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" \
    --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log"
}

if postgres_ready; then
  log "PostgreSQL answers on $PG_HOST:$PG_PORT"
else
  start_postgres
  wait_for PostgreSQL postgres_ready
fi

if redis_ready; then
  log "Redis answers on $REDIS_HOST:$REDIS_PORT"
else
  start_redis
  wait_for Redis redis_ready
fi

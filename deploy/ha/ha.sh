#!/usr/bin/env bash
# The highly available stores on one machine, on loopback addresses, from
# Debian's packages (installed when missing, as root):
#
#   etcd      three members            clients 127.0.0.1:25379, :25381, :25383
#   Patroni   three PostgreSQL nodes   pg1 :25432 (REST :25008), pg2 :25433
#             (:25009), pg3 :25434 (:25010); one primary, one synchronous
#             standby, and pg3 always asynchronous (tag nosync)
#   HAProxy   writes :25000 -> whoever Patroni's REST says is the primary;
#             reads :25001 -> the replicas; stats :25002
#   Redis     a cluster of three primaries with one replica each,
#             :25701..:25706
#
#   deploy/ha/ha.sh up       start everything (idempotent) and wait for it
#   deploy/ha/ha.sh down     stop everything and delete its data
#   deploy/ha/ha.sh status   who is primary where
#   deploy/ha/ha.sh env      where they answer (HA_* variables, for the tests)
#
# State lives in $HA_DIR (default /tmp/mancala-ha). Timings are chosen for
# a failover in seconds, and said in docs/SCALING.md ("Failover").
set -euo pipefail
cd "$(dirname "$0")"
HA_DIR=${HA_DIR:-/tmp/mancala-ha}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
ETCD_PORTS=(25379 25381 25383)
PG_PORTS=(25432 25433 25434)
REST_PORTS=(25008 25009 25010)
REDIS_PORTS=(25701 25702 25703 25704 25705 25706)
WRITE_PORT=25000
READ_PORT=25001

log() { printf '[ha] %s\n' "$*" >&2; }

install_missing() {
  local missing=()
  command -v etcd >/dev/null || missing+=(etcd-server etcd-client)
  command -v patroni >/dev/null || missing+=(patroni)
  command -v haproxy >/dev/null || missing+=(haproxy)
  command -v redis-server >/dev/null || missing+=(redis-server)
  [ -n "$PG_BIN" ] || missing+=(postgresql)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    log "missing ${missing[*]}: install them (Debian packages), or run as root"
    exit 1
  fi
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
  # Debian starts the packaged services on their standard ports; ours are
  # our own processes on our own ports.
  for unit in etcd patroni haproxy; do
    pkill -x "$unit" 2>/dev/null || true
  done
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
}

# Runs a command as the `postgres` user (PostgreSQL refuses root).
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_until() {
  local what=$1 seconds=$2
  shift 2
  for _ in $(seq 1 $((seconds * 5))); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  log "$what: not within ${seconds}s"
  return 1
}

start_etcd() {
  local cluster="" i
  for i in 0 1 2; do
    cluster+="e$i=http://127.0.0.1:$((ETCD_PORTS[i] + 1)),"
  done
  for i in 0 1 2; do
    listening "${ETCD_PORTS[i]}" && continue
    mkdir -p "$HA_DIR/etcd$i"
    # Heartbeat and election timeouts for loopback: a lost member is noticed
    # in a second, not the five of the defaults.
    ETCD_UNSUPPORTED_ARCH= nohup etcd --name "e$i" --data-dir "$HA_DIR/etcd$i" \
      --listen-client-urls "http://127.0.0.1:${ETCD_PORTS[i]}" \
      --advertise-client-urls "http://127.0.0.1:${ETCD_PORTS[i]}" \
      --listen-peer-urls "http://127.0.0.1:$((ETCD_PORTS[i] + 1))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORTS[i] + 1))" \
      --initial-cluster "${cluster%,}" --initial-cluster-state new \
      --initial-cluster-token mancala-ha --heartbeat-interval 100 --election-timeout 1000 \
      --enable-v2=false >"$HA_DIR/etcd$i.log" 2>&1 &
    echo $! >"$HA_DIR/etcd$i.pid"
  done
  for i in 0 1 2; do
    wait_until "etcd e$i" 30 listening "${ETCD_PORTS[i]}"
  done
}

patroni_config() {
  local i=$1 node=$((i + 1)) hosts=""
  for port in "${ETCD_PORTS[@]}"; do hosts+="127.0.0.1:$port,"; done
  cat <<EOF
scope: mancala
name: pg$node
restapi:
  listen: 127.0.0.1:${REST_PORTS[i]}
  connect_address: 127.0.0.1:${REST_PORTS[i]}
etcd3:
  hosts: ${hosts%,}
bootstrap:
  dcs:
    # ttl bounds a failover when the primary cannot speak for itself (its
    # node dead or cut off): its leader key must expire first. 8 s keeps
    # Patroni's rule loop_wait + 2 * retry_timeout <= ttl; the price is
    # that etcd or Postgres stalling over 3 s demotes a healthy primary
    # (later Patroni releases refuse a ttl under 20 s: there, 20 s). loop_wait 1 s
    # notices a crashed Postgres within a second, and
    # primary_start_timeout 0 fails over at once instead of restarting it
    # in place.
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    primary_start_timeout: 0
    # Only the synchronous standby may be promoted, and every commit the
    # primary acknowledged is flushed there first: no acknowledged move is
    # lost by a failover.
    synchronous_mode: true
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 300
        fsync: "on"
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication replicator 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${PG_PORTS[i]}
  connect_address: 127.0.0.1:${PG_PORTS[i]}
  data_dir: $HA_DIR/pg$node/data
  bin_dir: $PG_BIN
  pgpass: $HA_DIR/pg$node/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: replicator
  parameters:
    unix_socket_directories: $HA_DIR/pg$node
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: $([ "$node" = 3 ] && echo true || echo false)
EOF
}

start_patroni() {
  local i node
  for i in 0 1 2; do
    node=$((i + 1))
    listening "${REST_PORTS[i]}" && continue
    mkdir -p "$HA_DIR/pg$node"
    patroni_config "$i" >"$HA_DIR/pg$node/patroni.yml"
    [ "$(id -u)" -eq 0 ] && chown -R postgres: "$HA_DIR/pg$node"
    as_postgres nohup patroni "$HA_DIR/pg$node/patroni.yml" >"$HA_DIR/pg$node/patroni.log" 2>&1 &
    echo $! >"$HA_DIR/pg$node.pid"
  done
}

# The node whose REST API answers 200 to `GET /<role>`.
role_answers() {
  local role=$1 i
  for i in 0 1 2; do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${REST_PORTS[i]}/$role")" = 200 ]; then
      echo "pg$((i + 1))"
    fi
  done
}

cluster_ready() {
  [ -n "$(role_answers primary)" ] && [ -n "$(role_answers sync)" ] &&
    [ "$(role_answers replica | wc -l)" -eq 2 ]
}

start_haproxy() {
  listening "$WRITE_PORT" && return 0
  {
    cat <<EOF
global
  maxconn 4000
defaults
  mode tcp
  timeout connect 1s
  timeout client 30m
  timeout server 30m
  timeout check 1s
  # A node that stops being what this port wants (a demoted primary) has
  # its connections cut at once: nothing more reaches it through here.
  default-server inter 500ms fastinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions
listen stats
  mode http
  bind 127.0.0.1:25002
  stats enable
  stats uri /
listen primary
  bind 127.0.0.1:$WRITE_PORT
  option httpchk GET /primary
  http-check expect status 200
EOF
    for i in 0 1 2; do
      echo "  server pg$((i + 1)) 127.0.0.1:${PG_PORTS[i]} check port ${REST_PORTS[i]}"
    done
    cat <<EOF
listen replicas
  bind 127.0.0.1:$READ_PORT
  balance roundrobin
  option httpchk GET /replica
  http-check expect status 200
EOF
    for i in 0 1 2; do
      echo "  server pg$((i + 1)) 127.0.0.1:${PG_PORTS[i]} check port ${REST_PORTS[i]}"
    done
  } >"$HA_DIR/haproxy.cfg"
  haproxy -c -q -f "$HA_DIR/haproxy.cfg"
  haproxy -D -p "$HA_DIR/haproxy.pid" -f "$HA_DIR/haproxy.cfg"
  wait_until "haproxy" 10 listening "$WRITE_PORT"
}

start_redis() {
  local port fresh=0
  for port in "${REDIS_PORTS[@]}"; do
    listening "$port" && continue
    fresh=1
    mkdir -p "$HA_DIR/redis$port"
    # A node that stops answering for 2 s is failed over to its replica.
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes \
      --dir "$HA_DIR/redis$port" --pidfile "$HA_DIR/redis$port.pid" \
      --logfile "$HA_DIR/redis$port.log" \
      --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout 2000 --cluster-require-full-coverage no \
      --cluster-replica-validity-factor 0 --save "" --appendonly no
  done
  for port in "${REDIS_PORTS[@]}"; do
    wait_until "redis :$port" 10 listening "$port"
  done
  if [ "$fresh" = 1 ] && ! redis-cli -p "${REDIS_PORTS[0]}" cluster info | grep -q 'cluster_state:ok'; then
    local nodes=()
    for port in "${REDIS_PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
  fi
  wait_until "redis cluster" 30 redis_cluster_ok
}

redis_cluster_ok() {
  redis-cli -p "${REDIS_PORTS[0]}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' &&
    [ "$(redis-cli -p "${REDIS_PORTS[0]}" cluster nodes | grep -c slave)" -ge 3 ]
}

print_env() {
  local redis=""
  for port in "${REDIS_PORTS[@]}"; do redis+="redis://127.0.0.1:$port,"; done
  # Servers without a database: a service's URL adds its own.
  cat <<EOF
HA_DATABASE_SERVER=postgres://postgres@127.0.0.1:$WRITE_PORT
HA_DATABASE_READ_SERVER=postgres://postgres@127.0.0.1:$READ_PORT
HA_REDIS_URL=${redis%,}
HA_DIR=$HA_DIR
EOF
}

status() {
  echo "primary: $(role_answers primary | tr '\n' ' ')"
  echo "sync standby: $(role_answers sync | tr '\n' ' ')"
  echo "async standby: $(role_answers async | tr '\n' ' ')"
  redis-cli -p "${REDIS_PORTS[0]}" cluster nodes 2>/dev/null |
    awk '{print "redis " $2 " " $3}' | sed 's/myself,//' | sort
}

up() {
  install_missing
  mkdir -p "$HA_DIR"
  [ "$(id -u)" -eq 0 ] && chmod 755 "$HA_DIR"
  start_etcd
  start_patroni
  wait_until "a Patroni primary with a synchronous standby" 120 cluster_ready
  start_haproxy
  start_redis
  log "up: $(status | head -n 2 | tr '\n' ' ')"
}

down() {
  local file
  for file in "$HA_DIR"/pg?.pid "$HA_DIR"/etcd?.pid "$HA_DIR"/haproxy.pid "$HA_DIR"/redis*.pid; do
    [ -f "$file" ] || continue
    kill "$(cat "$file")" 2>/dev/null || true
  done
  # Patroni stops its PostgreSQL on the way out; give it the time.
  for _ in $(seq 1 50); do
    pgrep -f "$HA_DIR/pg./patroni.yml" >/dev/null || break
    sleep 0.2
  done
  pkill -9 -f "$HA_DIR/" 2>/dev/null || true
  rm -rf "$HA_DIR"
  log "down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  *)
    echo "usage: $0 up|down|status|env" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# The standard load profiles, against the one-process launcher (`arena`) and
# against the split services (matchmaking, two game-room instances, rating),
# everything on this machine with the load generator beside it:
#   games     1,000 concurrent ranked games (2,000 players queueing, playing
#             with a think time, rematching), durable moves
#   light     100 concurrent games with a 100 ms think time: the round trip
#             when the machine is not saturated
#   watchers  one game followed by 5,000 watchers; the server pinned to
#             the first core and the watchers' client to the second, so
#             the delay measured is the server's, not the client's queue
#   idle      19,000 idle sockets, weighed in server memory (this machine's
#             hard limit is 20,000 open files per process)
#   abuse     (arena only) one hostile guest's attacks, each beside a probe
#             player whose move round trip is measured against the run's
#             baseline; ARENA_BIN=path runs another build (the one before)
#   crowd-ai  (arena only) 20 guests with 10 Perfect-level Kalah games
#             each, moving at once, beside the hotseat probe and an honest
#             player against the Advanced AI (its reply p50/p99), then
#             SETTLE_SECS (default 120) of quiet: RSS back near its start?
#             PHASE_SECS (default 60) a phase; HEAP_PROFILE=1 runs an arena
#             with jemalloc's heap profiling and prints the peak's top sites
#   restart   20 live games through a SIGTERM of a game-room instance (the
#             other takes its games), then a SIGTERM and a SIGKILL of the
#             arena restarted at once in its place: how long until each
#             game moves again, beside its pace before; writes restart.md
#   crowd-analysis  (arena only) 16 signed-out clients asking over and
#             over for the analyses of 60 finished games, while a player
#             finishes games and asks for each one's analysis: never a 503?
#   peers     ours (arena) beside a Colyseus 0.16 Kalah room
#             (tests/bench/peers/colyseus: in memory, and durable with one
#             Postgres INSERT a move), closed loop, zero think time, at
#             PEER_GAMES concurrent games (default "100 1000"), one run
#             each, in one go; writes tests/bench/results/peers/ and prints
#             the ratios
#   costs     (arena only) what one move costs each part: the server's
#             CPU, Postgres's CPU, commits and WAL bytes, Redis's CPU and
#             commands, bytes on the loopback; GAMES games (default 100
#             here) at THINK_MS (default 0 here); the inputs of
#             docs/SCALING.md; writes tests/bench/results/costs.{json,md};
#             where Postgres loads pg_stat_statements (shared_preload_
#             libraries), also each statement's calls and time a move.
#             PLAN_CACHE_MODE=force_generic_plan (any profile) sets it
#             for every connection to the bench database, to compare
#   floor     what Postgres's CPU costs, at the least, to commit a move
#             row durably: pgbench inserting ROWS (default 12, our batch)
#             narrow rows a transaction from CLIENTS (default 8)
#             connections; no server involved
#   soak      (arena only) GAMES games with THINK_MS think time for
#             SOAK_SECS (default 1800), reported a minute at a time: errors,
#             server RSS and the move round trip must stay flat; writes
#             tests/bench/results/soak.{json,md}
#   overload  (arena only) two soaks of SOAK_SECS each with the instance's
#             capacity set (APP_OVERLOAD_GAMES, default KNEE + 5%: the
#             limit is a guard set a little above the load the instance
#             serves well, so the knee's own churn is not refused): KNEE
#             games (the knee, required), then 1.5 x KNEE, whose excess
#             must be refused with Retry-After while the games in progress
#             keep their round trip; writes
#             tests/bench/results/soak-{knee,over}.{json,md} and the
#             server's counters (leases lost, writes, refusals, heap)
#             beside them; ONLY=knee or ONLY=over runs one
#   tournament  (arena only) bots playing whole arena tournaments at
#             human pace (tests/src/bin/tourney.rs): PLAYERS guests
#             (default 1000) over ARENAS private arenas (default 1) of
#             MINUTES (default 30), each bot with its lobby and standings
#             sockets open, thinking 1-5 s a move: the move round trip,
#             every standings push's delay from the change, the wait to
#             the next pairing, the server's pairing waves (its /metrics),
#             errors, and the server's RSS a minute at a time; writes
#             tests/bench/results/tournament-<ARENAS>x<PLAYERS>.json
# Writes tests/bench/results/<deployment>-<profile>.json and
# tests/bench/results/summary.md (a Markdown table); abuse writes
# tests/bench/results/abuse/<label>.{json,md}.
# Usage: deploy/bench.sh [PROFILE ...] (default: games light watchers idle)
#        DEPLOYMENTS="arena split" DURATION=30 THINK_MS=300 GAMES=1000
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
export SQLX_OFFLINE=true
cargo build --release --quiet -p mancala-arena -p mancala-matchmaking -p mancala-game-room \
  -p mancala-rating -p mancala-tests --bins
bin=${CARGO_TARGET_DIR:-target}/release
results=tests/bench/results
mkdir -p "$results"
# HEAP_PROFILE=1: an arena whose jemalloc samples every 512 KiB allocated
# and dumps a heap profile at each new high-water mark (jeprof, from
# Debian's libjemalloc-dev, reads them); crowd-ai prints the peak's top.
if [ -n "${HEAP_PROFILE:-}" ]; then
  command -v jeprof >/dev/null || { apt-get update -qq && apt-get install -y -qq libjemalloc-dev >/dev/null; }
  cargo build --release --quiet -p mancala-arena --features heap-profile
  cp "$bin/arena" "$bin/arena-heap-profile"
  # The ordinary arena back in its place (its build is still fresh).
  cargo build --release --quiet -p mancala-arena
  export ARENA_BIN=$bin/arena-heap-profile
  mkdir -p "$results/heap" && rm -f "$results"/heap/arena.*.heap
  export _RJEM_MALLOC_CONF="prof:true,prof_gdump:true,lg_prof_sample:19,prof_prefix:$results/heap/arena"
fi
server=postgres://postgres@127.0.0.1:5432
database=mancala_bench
duration=${DURATION:-40}
think=${THINK_MS:-300}
games=${GAMES:-1000}
[ "$#" -gt 0 ] || set -- games light watchers idle
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

pids=()
stop() {
  [ "${#pids[@]}" -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  pids=()
}
trap 'stop; psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null' EXIT

ready() {
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return 0
    sleep 0.1
  done
  echo "port $1 never became ready" >&2
  return 1
}

# A fresh database and key prefix per run, shared settings for every process.
fresh() {
  psql "$server/postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" \
    -c "CREATE DATABASE $database" >/dev/null
  [ -z "${PLAN_CACHE_MODE:-}" ] || psql "$server/postgres" -qc "ALTER DATABASE $database SET plan_cache_mode = $PLAN_CACHE_MODE" >/dev/null
  export DATABASE_URL=$server/$database APP_REDIS_PREFIX="bench:$$:$RANDOM:" RUST_LOG=${BENCH_LOG:-error} \
    APP_LOG_FORMAT=json APP_INTERNAL_TOKEN=bench-token \
    APP_JWT_PRIVATE_KEY=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=') \
    APP_LIMIT_SIGNUPS_PER_IP=1000000000/60 APP_LIMIT_REGISTRATIONS_PER_IP=1000000000/60 APP_WS_RATE=1000/1000 APP_PAIRING_WAVE_MS=500 \
    APP_WS_TIMEOUT_SECS=120 APP_HTTP_REQUESTS_PER_ADDRESS=0
  # (The load generator is one address standing for thousands of players,
  # as a proxy would be: the per-address limit is for real clients.)
}

# The soak's minutes as a Markdown table beside its JSON ($1, default
# soak.json).
soak_table() {
  python3 - "$results/${1:-soak.json}" <<'EOF'
import json, pathlib, sys
path = pathlib.Path(sys.argv[1])
r = json.loads(path.read_text())
s = r.get("server") or {}
rows = [f'Soak: {r["players"]} players ({r["players"] // 2} games), think {r["think_ms"]} ms, '
        f'{r["seconds"]:.0f} s measured; {r["moves_per_second"]:.0f} moves/s, round trip '
        f'p50 {r["move_round_trip"]["p50_ms"]:.2f} / p99 {r["move_round_trip"]["p99_ms"]:.2f} ms; '
        f'server RSS {s.get("rss_start_mb", 0):.0f} MB at start, {s.get("rss_peak_mb", 0):.0f} peak, '
        f'{s.get("rss_end_mb", 0):.0f} at end; CPU {s.get("cpu_cores", 0):.2f} cores; '
        f'errors {sum(r["errors"].values())} {r["errors"] or ""}', "",
        "| minute ends at | moves/s | round trip p50 / p99 | errors | server RSS |",
        "|---|---|---|---|---|"]
for w in r["windows"]:
    rows.append(f'| {w["ends_at_secs"]} s | {w["moves_per_second"]:.0f} | '
                f'{w["move_round_trip"]["p50_ms"]:.2f} / {w["move_round_trip"]["p99_ms"]:.2f} ms | '
                f'{w["errors"]} | {w["server_rss_mb"]:.0f} MB |')
text = "\n".join(rows) + "\n"
path.with_suffix(".md").write_text(text)
print(text)
EOF
}

# Starts a deployment; sets `base`, `games_bases` and `server_pids`.
start() {
  fresh
  case $1 in
    arena)
      # SERVER_LOG=path keeps the arena's log (its warnings) for the run.
      ${pin_server:+taskset -c "$pin_server"} "${ARENA_BIN:-$bin/arena}" --bind 127.0.0.1:18080 \
        >>"${SERVER_LOG:-/dev/null}" & pids+=($!)
      ready 18080
      base=http://127.0.0.1:18080 games_bases=$base
      ;;
    split)
      APP_INSTANCE_URL=http://127.0.0.1:18081 APP_INSTANCE_ID=room-a \
        "$bin/game-room" --bind 127.0.0.1:18081 >/dev/null & pids+=($!)
      ready 18081
      APP_INSTANCE_URL=http://127.0.0.1:18082 APP_INSTANCE_ID=room-b \
        "$bin/game-room" --bind 127.0.0.1:18082 >/dev/null & pids+=($!)
      APP_GAME_ROOM_URL=http://127.0.0.1:18081 \
        "$bin/matchmaking" --bind 127.0.0.1:18080 >/dev/null & pids+=($!)
      "$bin/rating" --bind 127.0.0.1:18083 >/dev/null & pids+=($!)
      for port in 18080 18082 18083; do ready $port; done
      base=http://127.0.0.1:18080 games_bases=http://127.0.0.1:18081,http://127.0.0.1:18082
      ;;
  esac
  server_pids=$(IFS=,; echo "${pids[*]}")
}

if [ "$1" = costs ]; then
  start arena
  counters() { python3 deploy/bench-costs.py snapshot "$DATABASE_URL" "${REDIS_URL:-redis://127.0.0.1:6379}"; }
  counters >"$results/costs-before.json"
  python3 deploy/bench-costs.py timed "$results/costs-client.json" \
    "$bin/loadgen" --base "$base" --games "$games_bases" --server-pids "$server_pids" \
    --duration-secs "$duration" --label "arena-costs" --ramp-secs 2 \
    --json "$results/costs.json" --players $((${GAMES:-100} * 2)) --think-ms "${THINK_MS:-0}" \
    --games-per-player 100000
  counters >"$results/costs-after.json"
  stop
  python3 deploy/bench-costs.py report "$results/costs-before.json" "$results/costs-after.json" \
    "$results/costs.json" "$results/costs.md" "$results/costs-client.json"
  rm -f "$results/costs-before.json" "$results/costs-after.json" "$results/costs-client.json"
  exit 0
fi

if [ "$1" = tournament ]; then
  start arena
  label=tournament-${ARENAS:-1}x${PLAYERS:-1000}
  "$bin/tourney" --base "$base" --server-pids "$server_pids" --players "${PLAYERS:-1000}" \
    --arenas "${ARENAS:-1}" --minutes "${MINUTES:-30}" --lead-secs "${LEAD_SECS:-60}" \
    --threads "${CLIENT_THREADS:-1}" --label "$label" --json "$results/$label.json"
  stop
  exit 0
fi

# One soak of $2 games into $results/$1.{json,md} and $1-server.txt.
soak_run() {
  "$bin/loadgen" --base "$base" --games "$games_bases" --server-pids "$server_pids" \
    --duration-secs "${SOAK_SECS:-1800}" --window-secs 60 --label "$1" --quiet \
    --json "$results/$1.json" --players $(($2 * 2)) --think-ms "$think" \
    --games-per-player 100000
  # What the server counted: leases lost, writes by outcome, what
  # admission refused.
  curl -fsS "$base/metrics" | grep -E '^(game_leases_lost_total|game_writes_total|admission_refused_total|heap_bytes|games_hosted)' \
    > "$results/$1-server.txt" || true
  soak_table "$1.json"
  echo "server counters:"; cat "$results/$1-server.txt"
}

if [ "$1" = overload ]; then
  knee=${KNEE:?set KNEE to the games at the knee}
  export APP_OVERLOAD_GAMES=${APP_OVERLOAD_GAMES:-$((knee * 105 / 100))}
  for run in "knee $knee" "over $((knee * 3 / 2))"; do
    set -- $run
    # ONLY=knee or ONLY=over: one of the two.
    [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ] || continue
    echo "== overload: $2 games, capacity $APP_OVERLOAD_GAMES"
    start arena
    soak_run "soak-$1" "$2"
    stop
  done
  exit 0
fi

if [ "$1" = restart ]; then
  # The restart tests, on the release binaries: 20 live games through a
  # SIGTERM of a game-room (another takes over), a SIGTERM and a SIGKILL of
  # the arena restarted in its place; each prints the games' pace before
  # the fault beside how long after it each game moved again.
  cargo nextest run --release -p mancala-tests --test restarts --no-capture 2>&1 |
    grep -E "SIG|Sig|moved again|PASS|FAIL" | tee "$results/restart.md"
  exit 0
fi

if [ "$1" = floor ]; then
  fresh
  python3 deploy/bench-costs.py floor "$DATABASE_URL" "${ROWS:-12}" "${CLIENTS:-8}" "$duration"
  exit 0
fi

if [ "$1" = peers ]; then
  mkdir -p "$results/peers"
  peers=$results/peers
  # Postgres's and Redis's counters around each system's run: what each
  # part spends a move (deploy/bench-costs.py parts).
  counters() {
    python3 deploy/bench-costs.py snapshot "$DATABASE_URL" "${REDIS_URL:-redis://127.0.0.1:6379}" "${1:-}"
  }
  for count in ${PEER_GAMES:-100 1000}; do
    echo "== peers: $count games"
    start arena
    # Ours is weighed over the measured window only (the load client's hook
    # snapshots the stores as the warm-up ends and at the deadline): 2,000
    # sign-ins and first queue entries are not what a move costs. The
    # games that end and start within the window are.
    "$bin/loadgen" --base "$base" --games "$games_bases" --server-pids "$server_pids" \
      --duration-secs "$duration" --label "mancala-arena-$count" \
      --json "$peers/arena-$count.json" --players $((count * 2)) --think-ms 0 \
      --games-per-player 100000 \
      --window-hook "python3 deploy/bench-costs.py snapshot '$DATABASE_URL' '${REDIS_URL:-redis://127.0.0.1:6379}' >'$peers/'\"\$WINDOW\".json"
    curl -fsS "$base/metrics" >"$peers/metrics.txt" || true
    stop
    python3 deploy/bench-costs.py parts "$peers/steady.json" "$peers/end.json" \
      "$peers/arena-$count.json" - "$peers/metrics.txt" >"$peers/arena-$count-parts.json"
    # One load-client thread per 500 games: the Node client must not be
    # what limits the peer.
    for mode in memory durable; do
      counters mancala_peer >"$peers/before.json"
      if WORKERS=$(( (count + 499) / 500 )) tests/bench/peers/colyseus/run.sh "$mode" "$count" \
        "$duration" "$peers/colyseus-$mode-$count.json"; then
        counters mancala_peer >"$peers/after.json"
        python3 deploy/bench-costs.py parts "$peers/before.json" "$peers/after.json" \
          "$peers/colyseus-$mode-$count.json" >"$peers/colyseus-$mode-$count-parts.json"
      else
        echo "peers: the $mode peer at $count games failed; its row is missing" >&2
      fi
    done
  done
  rm -f "$peers/before.json" "$peers/after.json" "$peers/steady.json" "$peers/end.json" "$peers/metrics.txt"
  # Postgres's floor at the batch our writer made at the fewest games:
  # pgbench committing that many narrow rows a transaction, no server.
  fewest=$(echo ${PEER_GAMES:-100 1000} | tr ' ' '\n' | sort -n | head -1)
  rows=$(python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['batch_size']; print(max(1, round(b or 12)))" \
    "$peers/arena-$fewest-parts.json")
  fresh
  python3 deploy/bench-costs.py floor "$DATABASE_URL" "$rows" "${CLIENTS:-8}" "${FLOOR_SECS:-15}" "$peers/floor.json"
  python3 deploy/bench-peers.py "$peers"
  exit 0
fi

for deployment in ${DEPLOYMENTS:-arena split}; do
  for profile in "$@"; do
    case $profile in abuse | soak | crowd-*) [ "$deployment" = arena ] || continue ;; esac
    echo "== $deployment: $profile"
    # Watchers: the server and the client on a core each, when there are two.
    pin_server='' pin_client=''
    if [ "$profile" = watchers ] && [ "$(nproc)" -ge 2 ]; then
      pin_server=0 pin_client=1
    fi
    start "$deployment"
    common=(--base "$base" --games "$games_bases" --server-pids "$server_pids"
      --duration-secs "$duration" --label "$deployment-$profile"
      --json "$results/$deployment-$profile.json")
    case $profile in
      games) "$bin/loadgen" "${common[@]}" --players $((games * 2)) --think-ms "$think" \
        --games-per-player 100 ;;
      light) "$bin/loadgen" "${common[@]}" --players 200 --think-ms 100 \
        --games-per-player 100 ;;
      watchers) taskset -c "${pin_client:-0-$(($(nproc) - 1))}" "$bin/loadgen" "${common[@]}" --players 2 --ramp-secs 0 --watchers 5000 --watch-one --watcher-threads 2 \
        --think-ms "$think" --games-per-player 100 ;;
      idle) "$bin/loadgen" "${common[@]}" --players 0 --idle 19000 ;;
      soak) soak_run soak "$games" ;;
      abuse) mkdir -p "$results/abuse"
        "$bin/abuse" --base "$base" --server-pid "$server_pids" --phase-secs "${PHASE_SECS:-10}" \
          --label "${LABEL:-abuse}" --json "$results/abuse/${LABEL:-abuse}.json" ${ONLY:+--only "$ONLY"} ;;
      crowd-ai) mkdir -p "$results/abuse"
        "$bin/abuse" --base "$base" --server-pid "$server_pids" --phase-secs "${PHASE_SECS:-60}" \
          --label crowd-ai --json "$results/abuse/crowd-ai.json" --only perfect-many \
          --ai-probe advanced --settle-secs "${SETTLE_SECS:-120}"
        if [ -n "${HEAP_PROFILE:-}" ]; then
          # The last dump jemalloc wrote at a new high-water mark: the peak.
          peak=$(ls -t "$results"/heap/arena.*.heap 2>/dev/null | head -1)
          # Bytes live at the peak, by the code that allocated them
          # (inclusive), this project's frames only.
          [ -z "$peak" ] || jeprof --text --show_bytes --cum "$ARENA_BIN" "$peak" 2>/dev/null |
            grep -E "^Total|mancala_" | head -20 | tee "$results/heap/crowd-ai-peak.txt"
          find "$results/heap" -name 'arena.*.heap' ! -path "$peak" -delete
        fi
        [ -z "${SERVER_LOG:-}" ] || echo "server warnings: $(grep -c 'WARN' "$SERVER_LOG" || true)," \
          "publish timeouts: $(grep -c 'publishing timed out' "$SERVER_LOG" || true)" ;;
      crowd-analysis) mkdir -p "$results/abuse"
        "$bin/abuse" --base "$base" --server-pid "$server_pids" --phase-secs "${PHASE_SECS:-60}" \
          --label crowd-analysis --json "$results/abuse/crowd-analysis.json" --only analysis ;;
      *) echo "unknown profile $profile" >&2; exit 2 ;;
    esac
    stop
  done
done

python3 - "$results" <<'EOF'
import json, pathlib, sys
results = pathlib.Path(sys.argv[1])
rows = ["| run | moves/s | round trip p50 / p99 | match p50 / p95 | last watcher p50 / p99 "
        "| KB per idle socket | server CPU | server peak RSS | errors |",
        "|---|---|---|---|---|---|---|---|---|"]
def ms(latency, a, b):
    return "–" if not latency["count"] else f'{latency[a]:.2f} / {latency[b]:.2f} ms'
for path in sorted(results.glob("*-*.json")):
    if path.name.startswith(("games-", "rating")):
        continue  # older single-service runs
    r = json.loads(path.read_text())
    if "time_to_match" not in r:
        continue  # not a loadgen run (tournament bots, costs)
    idle = r.get("idle")
    server = r.get("server") or {}
    rows.append("| {} | {:.0f} | {} | {} | {} | {} | {:.2f} cores | {:.0f} MB | {} |".format(
        r["label"] or path.stem, r["moves_per_second"],
        ms(r["move_round_trip"], "p50_ms", "p99_ms"),
        ms(r["time_to_match"], "p50_ms", "p95_ms"),
        ms(r["last_watcher_delay"], "p50_ms", "p99_ms"),
        f'{idle["server_bytes_per_socket"] / 1024:.1f} ({idle["opened"]} sockets)' if idle else "–",
        server.get("cpu_cores", 0), server.get("rss_peak_mb", 0),
        sum(r["errors"].values()) or 0))
table = "\n".join(rows) + "\n"
(results / "summary.md").write_text(table)
print(table)
EOF

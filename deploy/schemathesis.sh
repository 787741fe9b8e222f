#!/usr/bin/env bash
# Fuzzes the REST API against its committed description,
# proto/schema/openapi.json, with schemathesis, on a throwaway arena: a fresh
# database and Redis prefix, a free port, removed again on exit.
#
#   deploy/schemathesis.sh [more `schemathesis run` options, e.g. --seed 1]
#
# Builds nothing: ARENA_BIN names the binary (default
# ${CARGO_TARGET_DIR:-target}/release/arena; a debug one also works and
# turns arithmetic overflow into panics, which this script reports).
# ST_DEFAULT_LIMITS=1 keeps the sign-in rate limits (to see the 429s);
# ST_MAX_EXAMPLES (100) sets the examples per operation; ST_VENV (default
# /var/tmp/st-venv) is where schemathesis is installed.
# Reports and the server log go to ${CARGO_TARGET_DIR:-target}/schemathesis.
# Exit status: schemathesis's, or 3 when the server panicked.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: a new release adds checks and would change the verdict unannounced.
SCHEMATHESIS_VERSION=4.32.5
venv=${ST_VENV:-/var/tmp/st-venv}
target=${CARGO_TARGET_DIR:-target}
bin=${ARENA_BIN:-$target/release/arena}
out=$target/schemathesis
pg=${ST_POSTGRES:-postgres://postgres@127.0.0.1:5432}
redis=${REDIS_URL:-redis://127.0.0.1:6379}

[ -x "$bin" ] || { echo "no arena binary at $bin: build it or set ARENA_BIN" >&2; exit 2; }
deploy/services.sh
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qF "$SCHEMATHESIS_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION"
fi

run=st_$(date +%s)_$$ # names the database and the Redis prefix
work=$(mktemp -d)
mkdir -p "$out"
pid=
cleanup() {
  if [ -n "$pid" ]; then
    # SIGTERM drains and exits within the 10 s shutdown timeout; a server
    # that hangs in its drain must not hang this script too.
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "the server did not exit within 20 s of SIGTERM: killed" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  fi
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS \"$run\"" || true
  redis-cli -u "$redis" --scan --pattern "$run:*" | xargs -r redis-cli -u "$redis" del >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

psql "$pg/postgres" -qc "CREATE DATABASE \"$run\""
# A free port, not a fixed one: other sessions run arenas on this machine.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
export ST_INTERNAL_TOKEN ST_ACCESS_TOKEN
ST_INTERNAL_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')
if [ "${ST_DEFAULT_LIMITS:-0}" != 1 ]; then
  # Otherwise the 30 guests an hour run out in seconds and 429s hide the rest.
  export APP_LIMIT_SIGNUPS_PER_IP=1000000/60 APP_LIMIT_REGISTRATIONS_PER_IP=1000000/60 APP_LIMIT_LOGIN_FAILURES_PER_IP=1000000/60 \
    APP_LIMIT_LOGIN_FAILURES_PER_ACCOUNT=1000000/60
fi
DATABASE_URL=$pg/$run REDIS_URL=$redis APP_REDIS_PREFIX=$run: RUST_LOG=warn \
  APP_INTERNAL_TOKEN=$ST_INTERNAL_TOKEN APP_ACCESS_TOKEN_TTL_SECS=3600 \
  "$bin" --bind "127.0.0.1:$port" >"$out/arena.log" 2>&1 &
pid=$!
for _ in $(seq 60); do
  curl -fs "$base/readyz" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$out/arena.log" >&2; exit 2; }
  sleep 0.5
done

# A guest's token for the `bearer` scheme, the service token for `service`
# (/internal/v1/games): per scheme, so neither is sent where the other belongs.
ST_ACCESS_TOKEN=$(curl -fsS -X POST "$base/v1/auth/guest" \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')
# Its cache, like the examples below, lives under $out, not in .schemathesis/.
cat >"$work/schemathesis.toml" <<EOF
[cache]
directory = "$(cd "$out" && pwd)/cache"
[auth.openapi.bearer]
bearer = "\${ST_ACCESS_TOKEN}"
[auth.openapi.service]
bearer = "\${ST_INTERNAL_TOKEN}"
EOF

status=0
# Failing examples are kept under $out and replayed first next time.
"$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run proto/schema/openapi.json \
  --url "$base" --checks all --max-examples "${ST_MAX_EXAMPLES:-100}" --workers 2 \
  --continue-on-failure --report junit,ndjson --report-dir "$out" \
  --generation-database "$out/examples" "$@" || status=$?

# A panic kills only its connection, which schemathesis may not notice.
if grep -q panicked "$out/arena.log"; then
  echo "the server panicked (see $out/arena.log):" >&2
  grep -A1 panicked "$out/arena.log" >&2
  status=3
fi
exit "$status"

#!/usr/bin/env bash
# The README's test command: formatting, lints, the purity of the pure
# crates, the deployment files, the committed sqlx query data, a build of
# the fuzz targets, every test of the workspace (end-to-end and fault tests
# against real processes included) and the browser tests. `--ha` runs the
# failover tests on Patroni, HAProxy and a Redis Cluster with replicas
# instead (see below).
set -euo pipefail
cd "$(dirname "$0")/.."
# Builds take the queries' types from the committed .sqlx/ data, never from
# a live database; check-sqlx.sh proves that data current.
export SQLX_OFFLINE=true

step() { printf '\n== %s\n' "$*"; }

# `deploy/test.sh --ha`: the failover tests (tests/tests/ha.rs) on the
# highly available stores of deploy/ha/ha.sh (installed and started here,
# taken down after), one test at a time.
if [ "${1:-}" = --ha ]; then
  step "services"
  deploy/services.sh
  step "binaries"
  cargo build --workspace --bins --locked
  cargo test --no-run --locked -p mancala-tests --test ha
  step "HA stores up (deploy/ha/ha.sh up)"
  started=$(date +%s)
  trap 'deploy/ha/ha.sh down' EXIT
  deploy/ha/ha.sh up
  echo "up in $(($(date +%s) - started)) s"
  eval "$(deploy/ha/ha.sh env | sed 's/^/export /')"
  step "failover tests"
  cargo test --locked -p mancala-tests --test ha -- --ignored --test-threads 1 --nocapture
  exit 0
fi

step "services"
deploy/services.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

step "pure crates depend on no IO, clock or randomness"
deploy/check-purity.sh

step "module graphs: no circle, no import against a crate's declared layers"
for crate in services/game-room services/matchmaking services/rating crates/platform; do
    printf '%s: ' "$crate"
    deploy/module-graph.py "$crate/src"
done

step "deployment files agree with the code (static: builds and applies nothing)"
deploy/check-deploy.sh

step "the vendored three.js is the pinned release, and its gzipped copy is the same module"
web/vendor/three/update.sh --check

step "sqlx query data is current (cargo sqlx prepare --check)"
deploy/check-sqlx.sh

step "fuzz target builds"
cargo check --quiet --manifest-path crates/rules/fuzz/Cargo.toml --locked

step "cargo test"
# The end-to-end tests start the service binaries as processes.
cargo build --workspace --bins --locked
cargo test --workspace --all-features --locked

step "browser tests (Playwright driving Chromium against the arena)"
tests/browser/run.sh

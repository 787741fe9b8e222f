#!/usr/bin/env bash
# The README's test command: formatting, lints, the purity of the pure
# crates, the committed sqlx query data, every test of the workspace, and a
# build of the fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
# Builds take the queries' types from the committed .sqlx/ data, never from
# a live database; check-sqlx.sh proves that data current.
export SQLX_OFFLINE=true

step() { printf '\n== %s\n' "$*"; }

step "services"
deploy/services.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

step "pure crates depend on no IO, clock or randomness"
deploy/check-purity.sh

step "sqlx query data is current (cargo sqlx prepare --check)"
deploy/check-sqlx.sh

step "fuzz target builds"
cargo check --quiet --manifest-path crates/rules/fuzz/Cargo.toml --locked

step "cargo test"
# The end-to-end tests start the service binaries as processes.
cargo build --workspace --bins --locked
cargo test --workspace --all-features --locked

#!/usr/bin/env bash
# The README's test command: formatting, lints, the purity of the pure
# crates, every test of the workspace, and a build of the fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "services"
deploy/services.sh

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

step "pure crates depend on no IO, clock or randomness"
deploy/check-purity.sh

step "fuzz target builds"
cargo check --quiet --manifest-path crates/rules/fuzz/Cargo.toml --locked

step "cargo test"
cargo test --workspace --all-features --locked

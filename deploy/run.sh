#!/usr/bin/env bash
# The README's run command. Today the platform is the rules engine's command
# line, `mancala`; arguments are passed to it (default: --help).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/services.sh
cargo build --release --quiet -p mancala-cli
target_dir=${CARGO_TARGET_DIR:-target}
if [ "$#" -eq 0 ]; then
  set -- --help
fi
exec "$target_dir/release/mancala" "$@"

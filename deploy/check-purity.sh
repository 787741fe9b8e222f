#!/usr/bin/env bash
# The pure crates must stay pure (docs/ARCHITECTURE.md): no IO, clock, async
# runtime or database. Their normal dependency trees may hold only the crates
# listed here.
set -euo pipefail
cd "$(dirname "$0")/.."

check() {
  local crate=$1 allowed=$2
  local crates bad
  crates=$(cargo tree -p "$crate" --all-features -e normal --prefix none --format '{p}' \
    | awk '{print $1}' | sort -u)
  bad=$(printf '%s\n' "$crates" | grep -Ev "$allowed" || true)
  if [ -n "$bad" ]; then
    echo "$crate depends on crates outside its allowed set:" >&2
    printf '  %s\n' $bad >&2
    exit 1
  fi
  echo "$crate depends only on: $(printf '%s ' $crates)"
}

rules='^(mancala-rules|thiserror|thiserror-impl|proc-macro2|quote|syn|unicode-ident|serde|serde_core|serde_derive)$'
check mancala-rules "$rules"
# The AI adds a seeded random generator and zerocopy (zeroed tables of
# atomics, handed out lazily, without unsafe code) and nothing else.
check mancala-ai "${rules%)\$}|mancala-ai|rand_xoshiro|rand_core|zerocopy)\$"

#!/usr/bin/env bash
# The rules crate must stay pure (STYLE.md, habit 1): its normal dependency
# tree may hold only the crates listed here.
set -euo pipefail
cd "$(dirname "$0")/.."

allowed='^(mancala-rules|thiserror|thiserror-impl|proc-macro2|quote|syn|unicode-ident|serde|serde_core|serde_derive)$'
crates=$(cargo tree -p mancala-rules --all-features -e normal --prefix none --format '{p}' \
  | awk '{print $1}' | sort -u)
bad=$(printf '%s\n' "$crates" | grep -Ev "$allowed" || true)
if [ -n "$bad" ]; then
  echo "mancala-rules depends on crates outside its allowed set:" >&2
  printf '  %s\n' $bad >&2
  exit 1
fi
echo "mancala-rules depends only on: $(printf '%s ' $crates)"

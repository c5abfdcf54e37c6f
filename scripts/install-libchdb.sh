#!/usr/bin/env bash
# Installs libchdb.so (the ClickHouse engine as a library) from its npm
# package into .cache/chdb/, verified by checksum. Idempotent.
set -euo pipefail

version="26.7.3-stable.1"
sha256="36ad4e999882821ef13cf2d0f52c93f48e6ee1b4498b35a201c23ce4b8d15bf5"
dest="${1:-.cache/chdb}"
lib="$dest/libchdb.so"

if [ -f "$lib.ok" ] && [ "$(cat "$lib.ok")" = "$sha256" ] && [ -f "$lib" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "install-libchdb: npm is required (apt-get install npm)" >&2; exit 1; }
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "install-libchdb: fetching @chdb/lib-linux-x64-gnu@$version (178 MB)" >&2
(cd "$work" && npm pack --silent "@chdb/lib-linux-x64-gnu@$version" >/dev/null)
tar -xzf "$work"/chdb-lib-linux-x64-gnu-*.tgz -C "$work" package/libchdb.so
got=$(sha256sum "$work/package/libchdb.so" | cut -d' ' -f1)
if [ "$got" != "$sha256" ]; then
  echo "install-libchdb: checksum mismatch: got $got, want $sha256" >&2
  exit 1
fi
mv "$work/package/libchdb.so" "$lib"
echo "$sha256" > "$lib.ok"
echo "install-libchdb: installed $lib" >&2

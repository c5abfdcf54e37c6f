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
echo "install-libchdb: fetching @chdb/lib-linux-x64-gnu@$version (178 MB)" >&2
"$(dirname "$0")/npm-file.sh" "@chdb/lib-linux-x64-gnu@$version" libchdb.so "$sha256" "$lib"
echo "$sha256" > "$lib.ok"
echo "install-libchdb: installed $lib" >&2

#!/usr/bin/env bash
# Builds a Go tool from source at a pinned version into bin/:
#   install-go-tool.sh NAME PACKAGE VERSION [NOTE]
# Idempotent: does nothing when bin/NAME is already there.
set -euo pipefail

name="${1:?usage: install-go-tool.sh NAME PACKAGE VERSION [NOTE]}"
pkg="${2:?package path}"
version="${3:?version}"
note="${4:-}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo_root/bin/$name"

if [ -x "$bin" ]; then
  exit 0
fi
go_cmd="${GO:-go}"
command -v "$go_cmd" >/dev/null || { echo "install-$name: go is required" >&2; exit 1; }
mkdir -p "$repo_root/bin"
echo "install-$name: building $name $version${note:+ ($note)}" >&2
GOBIN="$repo_root/bin" "$go_cmd" install "$pkg@$version"
echo "install-$name: installed $bin" >&2

#!/usr/bin/env bash
# Installs versitygw, an S3 server with Object Lock and legal hold, into bin/.
# The content store tests start it on a loopback port as their real S3
# server. Idempotent: does nothing when bin/versitygw is already there.
set -euo pipefail

version="v1.8.0"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo_root/bin/versitygw"

if [ -x "$bin" ]; then
  exit 0
fi
go_cmd="${GO:-go}"
command -v "$go_cmd" >/dev/null || { echo "install-versitygw: go is required" >&2; exit 1; }
mkdir -p "$repo_root/bin"
echo "install-versitygw: building versitygw $version (about a minute cold)" >&2
GOBIN="$repo_root/bin" "$go_cmd" install "github.com/versity/versitygw/cmd/versitygw@$version"
echo "install-versitygw: installed $bin" >&2

#!/usr/bin/env bash
# Builds mdatagen, which `make generate` runs on each component's
# metadata.yaml, into bin/. The version and every dependency's hash are
# pinned in scripts/mdatagen/go.mod and go.sum: `go install …@version`
# cannot build it here (v0.161.0 needs a module that is not served, v0.160.0
# is not served), so it is built from that small module instead.
# Idempotent: does nothing when bin/mdatagen is already the pinned version.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo_root/bin/mdatagen"
version="$(awk '$1 == "require" && $2 == "go.opentelemetry.io/collector/cmd/mdatagen" { print $3 }' "$repo_root/scripts/mdatagen/go.mod")"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "mdatagen version $version" ]; then
  exit 0
fi
go_cmd="${GO:-go}"
command -v "$go_cmd" >/dev/null || { echo "install-mdatagen: go is required" >&2; exit 1; }
mkdir -p "$repo_root/bin"
echo "install-mdatagen: building mdatagen $version" >&2
# -mod=readonly: a go.sum that does not match fails instead of being updated.
(cd "$repo_root/scripts/mdatagen" && "$go_cmd" build -mod=readonly -trimpath -o "$bin" go.opentelemetry.io/collector/cmd/mdatagen)
echo "install-mdatagen: installed $bin" >&2

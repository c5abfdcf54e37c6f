#!/usr/bin/env bash
# Installs cyclonedx-gomod, which writes the release's CycloneDX SBOM from the
# Go module graph, into bin/. Built from source at a pinned version.
# Idempotent: does nothing when bin/cyclonedx-gomod is already there.
set -euo pipefail

version="v1.10.0"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo_root/bin/cyclonedx-gomod"

if [ -x "$bin" ]; then
  exit 0
fi
go_cmd="${GO:-go}"
command -v "$go_cmd" >/dev/null || { echo "install-cyclonedx-gomod: go is required" >&2; exit 1; }
mkdir -p "$repo_root/bin"
echo "install-cyclonedx-gomod: building cyclonedx-gomod $version" >&2
GOBIN="$repo_root/bin" "$go_cmd" install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$version"
echo "install-cyclonedx-gomod: installed $bin" >&2

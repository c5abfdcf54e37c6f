#!/usr/bin/env bash
# Installs cyclonedx-gomod, which writes the release's CycloneDX SBOM from the
# Go module graph, into bin/.
exec "$(dirname "${BASH_SOURCE[0]}")/install-go-tool.sh" cyclonedx-gomod \
  github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod v1.10.0

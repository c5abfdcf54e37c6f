#!/usr/bin/env bash
# Installs golangci-lint (v2), which `make lint` runs with .golangci.yml, into bin/.
exec "$(dirname "${BASH_SOURCE[0]}")/install-go-tool.sh" golangci-lint \
  github.com/golangci/golangci-lint/v2/cmd/golangci-lint v2.15.0

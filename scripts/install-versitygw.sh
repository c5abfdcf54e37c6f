#!/usr/bin/env bash
# Installs versitygw, an S3 server with Object Lock and legal hold, into bin/.
# The content store tests start it on a loopback port as their real S3
# server.
exec "$(dirname "${BASH_SOURCE[0]}")/install-go-tool.sh" versitygw \
  github.com/versity/versitygw/cmd/versitygw v1.8.0 "about a minute cold"

#!/usr/bin/env bash
# Debian's Chromium for the UI's browser tests. Test tools that download
# their own browser are not used: the browser comes from Debian's packages.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version

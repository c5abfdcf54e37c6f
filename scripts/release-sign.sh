#!/usr/bin/env bash
# Writes SHA256SUMS over every file in a release directory and signs it with
# the release owner's Ed25519 key: SHA256SUMS.sig, OpenSSH's SSHSIG format
# in the "docket-release" namespace.
#
#   DOCKET_RELEASE_KEY=~/.ssh/docket-release scripts/release-sign.sh DIR
#
# DOCKET_RELEASE_KEY is the private key file, or its .pub when the private
# key is in ssh-agent. It never belongs in the repository.
# Check with `docket version --verify DIR --key KEY.pub`.
set -euo pipefail

dir="${1:?usage: release-sign.sh DIR}"
key="${DOCKET_RELEASE_KEY:?release-sign: set DOCKET_RELEASE_KEY to the release signing key}"
[ -r "$key" ] || { echo "release-sign: cannot read $key" >&2; exit 1; }
command -v ssh-keygen >/dev/null || { echo "release-sign: ssh-keygen (OpenSSH >= 8.1) is required" >&2; exit 1; }

cd "$dir"
shopt -s dotglob nullglob
rm -f SHA256SUMS SHA256SUMS.sig
files=()
for f in *; do
  [ -f "$f" ] && [ ! -L "$f" ] || { echo "release-sign: $dir/$f is not a regular file" >&2; exit 1; }
  files+=("$f")
done
[ "${#files[@]}" -gt 0 ] || { echo "release-sign: $dir is empty" >&2; exit 1; }
sha256sum -- "${files[@]}" > SHA256SUMS
ssh-keygen -q -Y sign -n docket-release -f "$key" SHA256SUMS
echo "release-sign: signed ${#files[@]} files in $dir" >&2

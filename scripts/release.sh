#!/usr/bin/env bash
# Builds a release into dist/VERSION/: a static docket binary per target
# (CGO_ENABLED=0, -trimpath, the version stamped with -ldflags), a CycloneDX
# SBOM per target, SHA256SUMS over all of them and its signature with the
# release owner's key. Run it through `make release`:
#
#   DOCKET_RELEASE_KEY=~/.ssh/docket-release make release
#
# Targets: RELEASE_TARGETS (default "linux/amd64 linux/arm64"). A work tree
# with uncommitted changes is refused (ALLOW_DIRTY=1 for a trial run).
# Run it in a plain clone: cyclonedx-gomod reads the module's version with
# go-git, which does not follow a `git worktree` checkout to its refs.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
go_cmd="${GO:-go}"
version="${VERSION:-$(git describe --always --dirty)}"
targets="${RELEASE_TARGETS:-linux/amd64 linux/arm64}"
sbom_tool="$repo_root/bin/cyclonedx-gomod"

# Refuse early, before minutes of building.
: "${DOCKET_RELEASE_KEY:?release: set DOCKET_RELEASE_KEY to the release signing key (see README, Releases)}"
case "$version" in
  *-dirty)
    [ "${ALLOW_DIRTY:-}" = 1 ] || { echo "release: the work tree has uncommitted changes ($version)" >&2; exit 1; } ;;
esac
[ -x "$sbom_tool" ] || { echo "release: $sbom_tool missing (scripts/install-cyclonedx-gomod.sh)" >&2; exit 1; }

out="$repo_root/dist/$version"
rm -rf "$out"
mkdir -p "$out"
for target in $targets; do
  os="${target%/*}"
  arch="${target#*/}"
  name="docket_${version}_${os}_${arch}"
  echo "release: building $name" >&2
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" "$go_cmd" build -trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$out/$name" ./cmd/docket
  "$go_cmd" version -m "$out/$name" | grep -q 'CGO_ENABLED=0' ||
    { echo "release: $name was not built with CGO_ENABLED=0" >&2; exit 1; }
  # The SBOM is made under the same build constraints as the binary.
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" "$sbom_tool" app -json -licenses -std \
    -main cmd/docket -output "$out/$name.cdx.json" .
done

scripts/release-sign.sh "$out"

# Check what was just signed when the public key sits next to the private
# one (ssh-keygen's default) and a binary runs on this machine.
pub="$DOCKET_RELEASE_KEY"
[[ "$pub" == *.pub ]] || pub="$pub.pub"
host_bin="$out/docket_${version}_$("$go_cmd" env GOOS)_$("$go_cmd" env GOARCH)"
if [ -f "$pub" ] && [ -x "$host_bin" ]; then
  "$host_bin" version --verify "$out" --key "$pub"
fi
echo "release: $out" >&2

#!/usr/bin/env bash
# packaging/build.sh: build Strata's release artefacts from this source
# tree, reproducibly (docs/install.md, "Packages"):
#
#   dist/strata                         static binary (CGO_ENABLED=0)
#   dist/strata_<version>_amd64.deb     the binary, systemd units, /etc/strata samples (nfpm)
#   dist/strata-<version>.oci.tar       OCI image layout archive (cmd/strata-image, no Docker)
#   dist/SHA256SUMS
#
# The same commit gives the same bytes: every time stamp is the commit's
# (SOURCE_DATE_EPOCH), paths are trimmed, the build id is empty, and the
# tools are pinned (nfpm $NFPM_VERSION through the Go module proxy).
# Environment: DIST (default dist), STRATA_VERSION (default
# 0.1.0~git<commit time>.<commit>), SOURCE_DATE_EPOCH (default the commit's
# time). packaging/check-reproducible.sh builds twice and compares.
set -euo pipefail
cd "$(dirname "$0")/.."

NFPM_VERSION=v2.48.0
dist="${DIST:-dist}"
mkdir -p "$dist"
dist="$(cd "$dist" && pwd)"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "build.sh: the tree has uncommitted changes: the artefacts will not match commit $commit" >&2
fi
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
stamp="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S)"
export STRATA_VERSION="${STRATA_VERSION:-0.1.0~git${stamp}.${commit:0:12}}"
image_tag="$(tr '~+' '--' <<<"$STRATA_VERSION")"
built="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"

echo "== strata $STRATA_VERSION (commit $commit, $built)"
pkg=github.com/strata-dev/strata/internal/version
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -buildvcs=false \
  -ldflags "-s -w -buildid= -X $pkg.Version=$STRATA_VERSION -X $pkg.Commit=$commit -X $pkg.BuildTime=$built" \
  -o "$dist/strata" ./cmd/strata

echo "== .deb (nfpm $NFPM_VERSION)"
rm -f "$dist"/strata_*.deb
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/docs"
cp -r packaging "$stage/"
cp docs/install.md docs/operations.md "$stage/docs/"
cp "$dist/strata" "$stage/strata"
(cd "$stage" && go run "github.com/goreleaser/nfpm/v2/cmd/nfpm@$NFPM_VERSION" package \
  --config "$stage/packaging/nfpm.yaml" --packager deb --target "$dist/strata_${STRATA_VERSION}_amd64.deb")

echo "== OCI image"
rm -f "$dist"/strata-*.oci.tar
go run ./cmd/strata-image --binary "$dist/strata" --version "$image_tag" --commit "$commit" \
  --etc packaging/etc --archive "$dist/strata-${image_tag}.oci.tar"

(cd "$dist" && sha256sum strata strata_*.deb strata-*.oci.tar > SHA256SUMS && cat SHA256SUMS)

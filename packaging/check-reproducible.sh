#!/usr/bin/env bash
# packaging/check-reproducible.sh [--full]: build the release artefacts
# twice and fail unless they are byte-identical.
#
# The second build runs from a copy of the tree at another path, a second
# later, so that a leaked path or clock shows. By default the two builds
# share the Go build cache (the compiler's own reproducibility is Go's to
# keep; what this checks is ours: flags, nfpm, the image builder); --full
# gives the second build an empty cache, which compiles everything again
# (minutes on two cores). CI runs the default (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
commit="$(git rev-parse HEAD)"   # the tree may move on while this runs
work="$(mktemp -d /tmp/strata-repro.XXXXXX)"
trap 'rm -rf "$work"' EXIT

DIST="$work/a" packaging/build.sh >"$work/a.log" 2>&1 || { cat "$work/a.log"; exit 1; }
sleep 1
mkdir -p "$work/tree"
# The tracked files as they are in this checkout (committed or not).
git ls-files -z | (cd "$root" && xargs -0 tar cf -) | tar xf - -C "$work/tree"
git -C "$work/tree" init -q && git -C "$work/tree" fetch -q "$root" "$commit" && git -C "$work/tree" reset -q --soft FETCH_HEAD
cache=()
if [ "${1:-}" = "--full" ]; then
  cache=(env GOCACHE="$work/gocache")
fi
(cd "$work/tree" && "${cache[@]}" env DIST="$work/b" SOURCE_DATE_EPOCH="$(git -C "$root" log -1 --format=%ct "$commit")" \
  packaging/build.sh >"$work/b.log" 2>&1) || { cat "$work/b.log"; exit 1; }

status=0
for f in $(cd "$work/a" && ls); do
  if cmp -s "$work/a/$f" "$work/b/$f"; then
    echo "identical: $f ($(sha256sum <"$work/a/$f" | cut -c1-16))"
  else
    echo "DIFFERENT: $f"
    status=1
  fi
done
[ "$(ls "$work/a" | wc -l)" -ge 4 ] || { echo "missing artefacts"; ls -l "$work/a"; exit 1; }

# The artefacts work: the packaged binary and the image's say which commit
# they are.
mkdir -p "$work/deb" && dpkg-deb -x "$work"/a/strata_*.deb "$work/deb"
"$work/deb/usr/bin/strata" version | grep -q "commit ${commit:0:12}" || { echo "the .deb's strata does not say its commit"; status=1; }
echo "deb: $("$work/deb/usr/bin/strata" version)"
if command -v umoci >/dev/null; then
  mkdir -p "$work/oci" && tar xf "$work"/a/strata-*.oci.tar -C "$work/oci"
  tag="$(basename "$work"/a/strata-*.oci.tar .oci.tar)"; tag="${tag#strata-}"
  umoci unpack --rootless --image "$work/oci:$tag" "$work/bundle" >/dev/null
  "$work/bundle/rootfs/usr/bin/strata" version | grep -q "commit ${commit:0:12}" || { echo "the image's strata does not say its commit"; status=1; }
  echo "image: entrypoint $(jq -c .process.args "$work/bundle/config.json" 2>/dev/null || echo '?'), $("$work/bundle/rootfs/usr/bin/strata" version)"
fi
exit $status

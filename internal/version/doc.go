// Package version says which Strata this binary is: its release version,
// the commit it was built from, whether the tree had uncommitted changes,
// and the API version it speaks. The commit and time come from the Go
// toolchain's build information (debug.ReadBuildInfo: go build in a git
// checkout stamps them); a build outside a checkout (the .deb and the OCI
// image, built from a source tree) sets them with -ldflags:
//
//	go build -ldflags "-X github.com/strata-dev/strata/internal/version.Version=0.3.0 \
//	  -X github.com/strata-dev/strata/internal/version.Commit=$(git rev-parse HEAD)"
//
// It reads nothing else and never fails: what is unknown says "unknown".
package version

package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-07T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	i := from(bi)
	if i.Version != "dev" || i.Commit != "0123456789abcdef0123" || !i.Modified || i.BuildTime != "2026-12-07T10:00:00Z" || i.APIVersion != "v1" {
		t.Fatalf("%+v", i)
	}
	if s := i.String(); !strings.Contains(s, "commit 0123456789ab+modified") || !strings.Contains(s, "API v1") {
		t.Fatalf("String() = %q", s)
	}
	if i := from(nil); i.Commit != "unknown" || i.Version != "dev" {
		t.Fatalf("no build information: %+v", i)
	}
}

func TestLdflagsWin(t *testing.T) {
	Version, Commit = "0.3.0", "feedface"
	defer func() { Version, Commit = "", "" }()
	i := from(&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "other"}, {Key: "vcs.modified", Value: "true"}}})
	if i.Version != "0.3.0" || i.Commit != "feedface" || i.Modified {
		t.Fatalf("%+v", i)
	}
}

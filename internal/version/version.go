package version

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Set by -ldflags -X for builds that carry no VCS information.
var (
	// Version is the release version ("0.3.0"); empty: the module's
	// version from the build information, else "dev".
	Version string
	// Commit is the git commit the binary was built from.
	Commit string
	// BuildTime is the commit's time, RFC 3339.
	BuildTime string
)

// APIVersion is the version of the HTTP API this binary serves and speaks
// (the /v1 prefix of every route).
const APIVersion = "v1"

// Info is what `strata version` prints.
type Info struct {
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	Modified   bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	BuildTime  string `json:"buildTime,omitempty"`
	APIVersion string `json:"apiVersion"`
	GoVersion  string `json:"goVersion"`
	Platform   string `json:"platform"`
}

// Get returns this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi)
}

// from reads Info out of build information (nil: none), with the -ldflags
// values winning.
func from(bi *debug.BuildInfo) Info {
	info := Info{Version: Version, Commit: Commit, BuildTime: BuildTime, APIVersion: APIVersion,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.BuildTime == "" {
					info.BuildTime = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true" && Commit == ""
			}
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if t, err := time.Parse(time.RFC3339, info.BuildTime); err == nil {
		info.BuildTime = t.UTC().Format(time.RFC3339)
	}
	return info
}

// String is the one line `strata version` prints.
func (i Info) String() string {
	commit := i.Commit
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if i.Modified {
		commit += "+modified"
	}
	s := "strata " + i.Version + " (commit " + commit
	if i.BuildTime != "" {
		s += ", " + i.BuildTime
	}
	return s + ", API " + i.APIVersion + ", " + i.GoVersion + " " + i.Platform + ")"
}

// Package mountinfo reads a process's mount table (/proc/<pid>/mountinfo):
// what a task's mount namespace holds, for criu's external mounts, and
// what a failed restore left mounted. The parsing and unescaping are
// moby's (github.com/moby/sys/mountinfo, already in the module graph
// through containerd); this package keeps the few fields the agent uses
// and the queries on them.
package mountinfo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	moby "github.com/moby/sys/mountinfo"
)

// Entry is one line of a mountinfo file.
type Entry struct {
	ID, Parent int
	Root       string // the mounted directory of its file system
	Point      string // where it is mounted
	FSType     string
}

// Read parses /proc/<proc>/mountinfo (proc: a pid or "self").
func Read(proc string) ([]Entry, error) {
	f, err := os.Open(filepath.Join("/proc", proc, "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, proc)
}

// Parse reads mountinfo lines from r; what names the file in errors.
func Parse(r io.Reader, what string) ([]Entry, error) {
	infos, err := moby.GetMountsFromReader(r, nil)
	if err != nil {
		return nil, fmt.Errorf("mountinfo of %s: %w", what, err)
	}
	out := make([]Entry, len(infos))
	for i, m := range infos {
		out[i] = Entry{ID: m.ID, Parent: m.Parent, Root: m.Root, Point: m.Mountpoint, FSType: m.FSType}
	}
	return out, nil
}

// Below returns the mount points of entries strictly under dir, deepest
// first (the order to unmount them in).
func Below(entries []Entry, dir string) []string {
	dir = filepath.Clean(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Point, dir+"/") {
			out = append(out, e.Point)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

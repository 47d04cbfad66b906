// Package mountinfo reads a process's mount table (/proc/<pid>/mountinfo):
// what a task's mount namespace holds, for criu's external mounts, and
// what a failed restore left mounted.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			return nil, fmt.Errorf("mountinfo of %s: malformed line %q", what, sc.Text())
		}
		id, err1 := strconv.Atoi(fields[0])
		parent, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("mountinfo of %s: malformed line %q", what, sc.Text())
		}
		out = append(out, Entry{ID: id, Parent: parent, Root: Unescape(fields[3]),
			Point: Unescape(fields[4]), FSType: fields[sep+1]})
	}
	return out, sc.Err()
}

// Unescape undoes mountinfo's octal escapes (\040 for a space).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

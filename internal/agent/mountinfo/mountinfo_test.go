package mountinfo

import (
	"strings"
	"testing"
)

// TestParseUnescapes: paths come back with mountinfo's octal escapes
// undone (moby's parser), a malformed escape as it was.
func TestParseUnescapes(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/a`:             "/tmp/a",
		`/tmp/with\040space`: "/tmp/with space",
		`/tmp/tab\011x\134y`: "/tmp/tab\tx\\y",
		`/mnt/a\040b`:        "/mnt/a b",
	} {
		line := "30 22 0:41 / " + in + " rw - tmpfs none rw\n"
		entries, err := Parse(strings.NewReader(line), "line")
		if err != nil || len(entries) != 1 || entries[0].Point != want {
			t.Errorf("Parse(%q) = %+v, %v; want the point %q", line, entries, err, want)
		}
	}
}

const sample = `22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw
35 22 0:30 / /proc rw,nosuid - proc proc rw
60 22 0:40 / /data/img/.criu.cgyard rw - tmpfs none rw
61 60 0:23 / /data/img/.criu.cgyard/pids rw - cgroup none rw,pids
62 22 0:41 /x /data/with\040space rw - tmpfs none rw
`

func TestParseAndBelow(t *testing.T) {
	entries, err := Parse(strings.NewReader(sample), "sample")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 || entries[1].Point != "/proc" || entries[1].FSType != "proc" || entries[4].Point != "/data/with space" || entries[4].Root != "/x" || entries[3].Parent != 60 {
		t.Fatalf("entries %+v", entries)
	}
	got := strings.Join(Below(entries, "/data/img"), ",")
	if want := "/data/img/.criu.cgyard/pids,/data/img/.criu.cgyard"; got != want {
		t.Fatalf("Below = %s, want %s (deepest first, nothing outside)", got, want)
	}
	if _, err := Parse(strings.NewReader("garbage\n"), "bad"); err == nil {
		t.Fatal("a malformed line parsed")
	}
}

// Package transcript runs the autoscaling cores' transcript tests: a story
// in a text file, each command followed by "----" and the output it must
// give, blocks separated by a blank line, reviewed as text and regenerated
// with the test's -rewrite flag (etcd-raft's data-driven tests are the
// model). It is imported only by tests; it knows nothing of the commands.
package transcript

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Run replays the story in file: each command goes to do, whose answer
// must be the output written under it. With rewrite the file is written
// again with what do says now instead.
func Run(t *testing.T, file string, rewrite bool, do func(cmd string) string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, block := range strings.Split(strings.TrimSpace(string(data)), "\n\n") {
		cmd, _, _ := strings.Cut(block, "\n----")
		cmd = strings.TrimSpace(cmd)
		got := do(cmd)
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", cmd, got)
		if want := strings.TrimSpace(strings.TrimPrefix(block[len(cmd):], "\n----")); !rewrite && want != got {
			t.Errorf("%s:\n got: %s\nwant: %s", cmd, got, want)
		}
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

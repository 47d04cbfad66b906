package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/server/servertest"
)

// lockedBuffer is a command's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDevACLFirstStart is issue 18 defect 6: `strata dev --acl` on a
// clean machine (no $STRATA_CACERT, no data dir yet) bootstraps its ACLs
// over its own TLS, with its own CA, and comes up; it exited with
// "certificate signed by unknown authority" before. A second start finds
// the management token it kept.
func TestDevACLFirstStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the dev cell's agent makes cgroups")
	}
	for _, k := range []string{"STRATA_CACERT", "STRATA_CLIENT_CERT", "STRATA_CLIENT_KEY", "STRATA_TLS_CA", "STRATA_TLS_CERT", "STRATA_TLS_KEY",
		"STRATA_INSECURE_PLAINTEXT", "STRATA_TOKEN", "STRATA_JOIN_TOKEN"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	for start := 1; start <= 2; start++ {
		out := &lockedBuffer{}
		g := &globals{stdout: out, stderr: out}
		cmd := newRoot(g)
		cmd.SetArgs([]string{"dev", "--acl", "--data-dir", root, "--http-addr", servertest.FreeAddr(t), "--agent-http-addr", "127.0.0.1:0",
			"--log-level", "warn"})
		cmd.SetOut(out)
		cmd.SetErr(out)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(out.String(), "strata dev cell: API on") {
			select {
			case err := <-done:
				cancel()
				t.Fatalf("start %d: strata dev --acl exited: %v\n%s", start, err, out.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("start %d: strata dev --acl did not come up in 60s:\n%s", start, out.String())
			}
		}
		cancel()
		if err := <-done; err != nil && !strings.Contains(err.Error(), "context canceled") {
			t.Fatalf("start %d: %v\n%s", start, err, out.String())
		}
		b, err := os.ReadFile(filepath.Join(root, devManagementTokenFile))
		if err != nil || strings.TrimSpace(string(b)) == "" {
			t.Fatalf("start %d: no management token kept: %v", start, err)
		}
	}
}

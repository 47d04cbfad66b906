package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestOperatorCommands drives `strata operator …` against a 3-server cell
// through --addr with every server listed.
func TestOperatorCommands(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	addr := strings.Join(c.Addrs(), ",")
	strata := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", addr}, args...)...)
	}

	out, errOut, code := strata("operator", "raft", "peers", "-o", "json")
	var conf api.RaftConfiguration
	if code != 0 || json.Unmarshal([]byte(out), &conf) != nil || len(conf.Servers) != 3 {
		t.Fatalf("raft peers -o json: exit %d %s %s", code, out, errOut)
	}
	if out, _, code := strata("operator", "raft", "peers"); code != 0 || strings.Count(out, "leader") != 1 || !strings.Contains(out, c.Configs[l].RaftAddr) {
		t.Fatalf("raft peers: exit %d\n%s", code, out)
	}

	dir := t.TempDir()
	snap := filepath.Join(dir, "backup.snap")
	if out, errOut, code := strata("operator", "snapshot", "save", snap); code != 0 || !strings.Contains(out, "saved the state at index") {
		t.Fatalf("snapshot save: exit %d %s %s", code, out, errOut)
	}
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-5] ^= 1
	bad := filepath.Join(dir, "bad.snap")
	os.WriteFile(bad, b, 0o600)
	if _, errOut, code := strata("operator", "snapshot", "restore", bad); code != 1 || !strings.Contains(errOut, "checksum mismatch") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("restore of a damaged file: exit %d, stderr %s", code, errOut)
	}
	if out, errOut, code := strata("operator", "snapshot", "restore", snap, "-o", "json"); code != 0 || !strings.Contains(out, `"sha256"`) {
		t.Fatalf("snapshot restore: exit %d %s %s", code, out, errOut)
	}

	f := c.Follower(l)
	c.Stop(f)
	if out, errOut, code := strata("operator", "raft", "remove-peer", c.Configs[f].RaftAddr); code != 0 || !strings.Contains(out, "removed server") {
		t.Fatalf("remove-peer: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := strata("operator", "raft", "remove-peer", "nobody"); code != 1 || !strings.Contains(errOut, "no server nobody") {
		t.Fatalf("remove-peer of an unknown server: exit %d, stderr %s", code, errOut)
	}
}

// TestStrataAddrList: $STRATA_ADDR may list several servers; a dead first
// one is skipped.
func TestStrataAddrList(t *testing.T) {
	c := servertest.Start(t, 1, nil)
	c.Leader()
	t.Setenv("STRATA_ADDR", fmt.Sprintf("http://%s,%s", servertest.FreeAddr(t), c.Addr(0)))
	if out, errOut, code := runCLI("nodes", "-o", "json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("nodes through a list: exit %d %q %s", code, out, errOut)
	}
}

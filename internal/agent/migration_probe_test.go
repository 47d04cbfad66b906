package agent

import (
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-dev/strata/internal/agent/criu"
)

// dumpsAsNobody dumps a sleeping process of user nobody with criu, as a
// move would dump a task of the default user, and reports whether criu
// could.
func dumpsAsNobody(t *testing.T, criuPath string) bool {
	t.Helper()
	cmd := osexec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	dir := t.TempDir()
	argv := criu.DumpArgs(criuPath, cmd.Process.Pid, dir, true)
	out, err := osexec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Logf("criu cannot dump a task of nobody here: %v %s %s", err, out, criu.ErrorTail(dir, criu.DumpLog))
	}
	return err == nil
}

// TestNodeSaysWhatItsCriuCanDump is issue 18 defect 14: a node
// advertised that its moves keep memory (`criu 4.2 (memory:
// containerd,exec)`) where criu could not dump the tasks it would move:
// on a host without CAP_SYS_RESOURCE every dump of a non-root task fails
// (`Can't get rlimit`), and the move fell back to stop-and-restart,
// memory lost, after freezing the task. The node's claim must match what
// a real dump of a task of the default user does on this host.
func TestNodeSaysWhatItsCriuCanDump(t *testing.T) {
	needCgroups(t)
	criuPath := os.Getenv("STRATA_CRIU")
	if criuPath == "" {
		criuPath, _ = osexec.LookPath("criu")
	}
	if info := criu.ProbeOnce(t.Context(), criuPath); !info.Available {
		t.Skipf("no working criu: %s (set STRATA_CRIU)", info.Reason)
	}
	can := dumpsAsNobody(t, criuPath)
	ag := startAgent(t, newFakeServer(), t.TempDir(), func(c *Config) { c.CriuPath = criuPath })
	ck := ag.Node().Checkpoint
	if ck == nil || !ck.Available || !slices.Contains(ck.Drivers, "exec") {
		t.Fatalf("checkpoint %+v: want available with exec (root tasks dump on any host with criu)", ck)
	}
	if ck.RootOnly == can {
		t.Fatalf("the node says rootOnly=%v (%q) where a dump of nobody's task succeeds=%v", ck.RootOnly, ck.Limit, can)
	}
	if !can && !strings.Contains(strings.ToLower(ck.Limit), "rlimit") {
		t.Errorf("the node's reason %q does not say what criu said", ck.Limit)
	}
}

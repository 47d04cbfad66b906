package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/api"
)

// TestTaskSeesOnlyItsGPUs gives a task one of two fake GPU device nodes
// (NVIDIA's major, no driver behind them: an allowed open fails with
// ENXIO, a denied one with EPERM) and the other as a node it must not
// open, as the agent does for the node's GPUs it was not assigned.
func TestTaskSeesOnlyItsGPUs(t *testing.T) {
	d := newTestDriver(t)
	// Under /var/lib: a task has private /tmp and /var/tmp, but sees the
	// rest of the host.
	dir, err := os.MkdirTemp("/var/lib", "strata-devtest-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fs.Flags&unix.ST_NODEV != 0 {
		t.Skipf("%s is on a nodev file system: device nodes there cannot be opened", dir)
	}
	var nodes []string
	for m := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("nvidia%d", m))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(m)))); err != nil {
			t.Skipf("mknod: %v", err)
		}
		nodes = append(nodes, p)
	}
	cfg := taskConfig(t, "gpu", api.Resources{}, sh(`
		for n in 0 1; do
			if (exec 3<"$DEVDIR/nvidia$n") 2>/dev/null; then echo "nvidia$n=open"
			else echo "nvidia$n=$( (exec 3<"$DEVDIR/nvidia$n") 2>&1 | sed 's/.*: //')"; fi
		done`)...)
	cfg.Env["DEVDIR"] = dir
	cfg.Devices, cfg.DenyDevices = nodes[:1], nodes[1:]
	h := start(t, d, cfg)
	res := wait(t, d, h.ID)
	out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log"))
	errOut, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stderr.log"))
	if res.ExitCode != 0 {
		t.Fatalf("task: %+v\n%s\n%s", res, out, errOut)
	}
	want := "nvidia0=No such device or address\nnvidia1=Operation not permitted\n"
	if string(out) != want {
		t.Fatalf("task saw\n%s\nwant\n%s(stderr %s)", out, want, errOut)
	}
}

package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestTaskSurvivesAFullLogDisk is issue 18 defect 9: with the data dir
// full, the shim's log copy stopped at the first write error, closed the
// task's pipe, and the task died of SIGPIPE. The task's directory sits on
// a small file system that is filled up while the task runs; the task
// writes megabytes to stdout and must end as it would have (exit 0), its
// output dropped and the drop said in its log once there is room again.
func TestTaskSurvivesAFullLogDisk(t *testing.T) {
	d := newTestDriver(t)
	disk := t.TempDir()
	if err := syscall.Mount("tmpfs", disk, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(disk, syscall.MNT_DETACH) })
	cfg := taskConfig(t, "chatty", api.Resources{}, "sh", "-c",
		`while [ ! -e "$STRATA_TASK_DIR/go" ]; do sleep 0.05; done; head -c 3000000 /dev/zero | tr '\0' x; echo; echo done`)
	cfg.TaskDir = filepath.Join(disk, cfg.AllocID, cfg.Name)
	if err := os.MkdirAll(cfg.TaskDir, 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The disk fills up (but 256 KiB) while the task runs, then it talks.
	ballast, err := os.Create(filepath.Join(disk, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	syscall.Statfs(disk, &st)
	if err := ballast.Truncate(0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for free := int64(st.Bavail) * st.Bsize; free > 256<<10; free -= int64(len(buf)) {
		if _, err := ballast.Write(buf); err != nil {
			break
		}
	}
	ballast.Close()
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := d.WaitTask(ctx, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Successful() {
		t.Fatalf("the task ended %+v on a full disk, want exit code 0", res)
	}
	d.DestroyTask(h.ID)
	os.Remove(filepath.Join(disk, "ballast"))
	out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log"))
	if !strings.Contains(string(out), "[strata: dropped ") {
		t.Errorf("the log does not say that output was dropped: ...%q", tailOf(out))
	}
}

func tailOf(b []byte) []byte {
	if len(b) > 300 {
		return b[len(b)-300:]
	}
	return b
}

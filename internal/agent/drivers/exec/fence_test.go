package exec

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// TestShimEnforcesLeaseFence: the shim stops a task whose lease fence is
// reached without any help from the agent (which may be frozen), and the
// exit says it was fenced; a task whose fence keeps moving runs on. The
// fences come near once the tasks run: a start takes the shim, the init
// of the task's namespaces and the task stage, which may well exceed a
// fence written before it on a loaded machine (TestShimDoesNotStartAFencedTask
// and TestFenceWatchDuringTheStart cover a fence reached before the command).
func TestShimEnforcesLeaseFence(t *testing.T) {
	d := newTestDriver(t)
	res := api.Resources{CPUMilli: 100, MemoryBytes: 64 << 20}

	far := drivers.BootClock() + time.Hour
	fenced := taskConfig(t, "fenced", res, "/bin/sleep", "60")
	renewed := taskConfig(t, "renewed", res, "/bin/sleep", "60")
	for _, c := range []*drivers.TaskConfig{fenced, renewed} {
		if err := drivers.WriteLeaseFence(c.TaskDir, drivers.LeaseFence{StopAt: far, KillAt: far, Why: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := d.StartTask(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	now := drivers.BootClock()
	if err := drivers.WriteLeaseFence(fenced.TaskDir, drivers.LeaseFence{StopAt: now + 300*time.Millisecond, KillAt: now + 800*time.Millisecond, Why: "test"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the agent renews one of them every 100 ms
		for ctx.Err() == nil {
			n := drivers.BootClock()
			drivers.WriteLeaseFence(renewed.TaskDir, drivers.LeaseFence{StopAt: n + 300*time.Millisecond, KillAt: n + 800*time.Millisecond, Why: "test"})
			time.Sleep(100 * time.Millisecond)
		}
	}()
	r := wait(t, d, fenced.ID)
	took := time.Since(start)
	if !r.Fenced || r.Signal != 15 {
		t.Fatalf("exit %+v, want fenced by SIGTERM", r)
	}
	if took > 2*time.Second {
		t.Fatalf("fenced after %s, want about 0.3s", took)
	}
	waitCtx, waitCancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer waitCancel()
	if r, err := d.WaitTask(waitCtx, renewed.ID); err == nil {
		t.Fatalf("the renewed task ended: %+v", r)
	}
	cancel()
	if err := d.StopTask(renewed.ID, time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestShimDoesNotStartAFencedTask: a task whose lease fence has reached
// its stop time (or its kill time) before the shim could start it never
// runs, and its exit says it was fenced.
func TestShimDoesNotStartAFencedTask(t *testing.T) {
	d := newTestDriver(t)
	for _, tc := range []struct {
		name         string
		stop, killAt time.Duration
	}{
		{"stop time passed", -time.Millisecond, 10 * time.Second},
		{"kill time passed", -time.Second, -time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := taskConfig(t, "late", api.Resources{}, "sh", "-c", "echo ran")
			now := drivers.BootClock()
			if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: now + tc.stop, KillAt: now + tc.killAt, Why: "test"}); err != nil {
				t.Fatal(err)
			}
			h, err := d.StartTask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := wait(t, d, h.ID)
			d.DestroyTask(h.ID)
			if !r.Fenced || !strings.Contains(r.Err, "not started") {
				t.Errorf("exit %+v, want fenced, not started", r)
			}
			if out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log")); len(out) > 0 {
				t.Errorf("the command ran: %q", out)
			}
		})
	}
}

// TestFenceWatchDuringTheStart: while the task is being set up (the shim
// has forked the init, the command does not run yet) the watch holds back
// SIGTERM, which the init would drop, and sends it as soon as the command
// runs; the kill time needs no command: SIGKILL goes at once.
func TestFenceWatchDuringTheStart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stop, kill  time.Duration
		startsLater bool // running is closed only after the hold-back check
		want        syscall.Signal
	}{
		{"stop time: SIGTERM once the command runs", -time.Millisecond, time.Minute, true, syscall.SIGTERM},
		{"kill time: SIGKILL during the setup", -time.Second, -time.Millisecond, false, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			now := drivers.BootClock()
			if err := drivers.WriteLeaseFence(dir, drivers.LeaseFence{StopAt: now + tc.stop, KillAt: now + tc.kill, Why: "test"}); err != nil {
				t.Fatal(err)
			}
			cmd := osexec.Command("sleep", "60")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			exited := make(chan *os.ProcessState, 1)
			go func() { cmd.Wait(); exited <- cmd.ProcessState }()
			var fenced atomic.Bool
			running, done := make(chan struct{}), make(chan struct{})
			defer close(done)
			go fenceWatch(dir, true, cmd.Process.Pid, nil, running, done, &fenced)
			if tc.startsLater {
				// Nothing to poll for: the check is that nothing happens
				// over several looks of the watch.
				select {
				case st := <-exited:
					t.Fatalf("signalled before the command ran: %v", st)
				case <-time.After(5 * drivers.FenceTick):
				}
				if fenced.Load() {
					t.Fatal("fenced before the command ran")
				}
				close(running)
			}
			select {
			case st := <-exited:
				ws := st.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != tc.want || !fenced.Load() {
					t.Errorf("ended by %v (fenced %v), want %v", st, fenced.Load(), tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the fence did not end the process")
			}
		})
	}
}

// TestShimStopsAFencedTaskWhoseLeaseFileIsGone is issue 18 defect 4: an
// agent cut off from its cell lost its data dir, and the shim, finding
// no lease file, stopped checking: the copy ran on past the lease, beside
// its replacement. A fenced task (TaskConfig.Fenced) whose lease file
// disappears, alone or with its whole directory, is stopped at once;
// SIGKILL follows after the grace its last fence gave. A fenced task
// whose lease file is missing when it would start does not start.
func TestShimStopsAFencedTaskWhoseLeaseFileIsGone(t *testing.T) {
	d := newTestDriver(t)
	for _, tc := range []struct {
		name string
		lose func(taskDir string) error
	}{
		{"lease file removed", func(dir string) error { return os.Remove(filepath.Join(dir, drivers.LeaseFile)) }},
		{"data dir lost", func(dir string) error { return os.RemoveAll(dir) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := taskConfig(t, "amo", api.Resources{}, "/bin/sleep", "60")
			cfg.Fenced = true
			far := drivers.BootClock() + time.Hour
			if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: far, KillAt: far + 2*time.Second, Why: "test"}); err != nil {
				t.Fatal(err)
			}
			h, err := d.StartTask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			lost := time.Now()
			if err := tc.lose(cfg.TaskDir); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r, err := d.WaitTask(ctx, h.ID)
			if err != nil {
				t.Fatalf("the task ran on without its lease file: %v", err)
			}
			took := time.Since(lost)
			if syscall.Kill(h.PID, 0) == nil {
				t.Errorf("pid %d lives on after its shim ended", h.PID)
			}
			switch {
			case took > 2*time.Second:
				t.Errorf("ended %s after its lease file went, want at once", took)
			case tc.name == "data dir lost":
				// exit.json had nowhere to go: the shim's end is all there is.
			case !r.Fenced || r.Signal != int(syscall.SIGTERM):
				t.Errorf("ended %+v, want fenced by SIGTERM", r)
			}
			d.DestroyTask(h.ID)
		})
	}
	t.Run("missing before the start", func(t *testing.T) {
		cfg := taskConfig(t, "amo", api.Resources{}, "sh", "-c", "echo ran")
		cfg.Fenced = true
		h, err := d.StartTask(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := wait(t, d, h.ID)
		d.DestroyTask(h.ID)
		if !r.Fenced || !strings.Contains(r.Err, "not started") {
			t.Errorf("exit %+v, want fenced, not started", r)
		}
		if out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log")); len(out) > 0 {
			t.Errorf("the command ran: %q", out)
		}
	})
}

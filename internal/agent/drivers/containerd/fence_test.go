package containerd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	client "github.com/containerd/containerd/v2/client"

	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// TestLeaseFenceHoldsWithoutTheAgent: a fenced task's container stops at
// its fence while no driver (no agent) runs: SIGTERM at StopAt for one
// that handles it, SIGKILL at KillAt for one that does not; the next
// driver reports the exit as fenced.
func TestLeaseFenceHoldsWithoutTheAgent(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	for _, c := range []struct {
		name       string
		cmd        []string
		wantSignal int
	}{
		{"stops on SIGTERM", []string{"sh", "-c", `trap "exit 0" TERM; while true; do sleep 0.1; done`}, 0},
		{"ignores SIGTERM, killed", []string{"sleep", "600"}, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := e.driver()
			cfg := newTask(t, ArchivePrefix+archive, c.cmd...).build()
			// A lease that is fine at start and lapses later: the agent
			// writes the fence before the start and after every renewal.
			now := drivers.BootClock()
			if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: now + time.Hour, KillAt: now + time.Hour, Why: "lease"}); err != nil {
				t.Fatal(err)
			}
			h := start(t, first, cfg)
			now = drivers.BootClock()
			if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: now + time.Second, KillAt: now + 3*time.Second, Why: "test lease lapsed"}); err != nil {
				t.Fatal(err)
			}
			first.Close() // the agent is gone; the fence must hold anyway
			eventually(t, "container stopped by its fence", func() bool {
				if taskStatus(t, e.socket, e.ns, containerID(cfg.ID)) == client.Stopped {
					return true
				}
				if msgs, err := os.ReadFile(filepath.Join(cfg.TaskDir, logErrFile)); err == nil && len(msgs) > 0 {
					t.Logf("log process: %s", msgs)
				}
				return false
			})
			if drivers.BootClock() < now+time.Second {
				t.Fatal("the container stopped before its fence")
			}
			second := e.driver()
			if err := second.RecoverTask(h); err != nil {
				t.Fatal(err)
			}
			res := wait(t, second, cfg.ID)
			if !res.Fenced || res.Signal != c.wantSignal {
				t.Fatalf("result %+v, want fenced with signal %d", res, c.wantSignal)
			}
		})
	}
}

// TestLeaseFileGoneStopsAFencedContainer is issue 18 defect 4 for
// containers: the log process stopped checking when the lease file was
// missing. A fenced container whose task directory is lost (the agent's
// data dir, while no agent runs) is stopped at once; a fenced task whose
// lease file is missing does not start.
func TestLeaseFileGoneStopsAFencedContainer(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	first := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `trap "exit 0" TERM; while true; do sleep 0.1; done`)
	b.cfg.Fenced = true
	cfg := b.build()
	now := drivers.BootClock()
	if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: now + time.Hour, KillAt: now + time.Hour, Why: "lease"}); err != nil {
		t.Fatal(err)
	}
	start(t, first, cfg)
	first.Close() // no agent
	lost := time.Now()
	if err := os.RemoveAll(cfg.TaskDir); err != nil {
		t.Fatal(err)
	}
	eventually(t, "container stopped without its lease file", func() bool {
		return taskStatus(t, e.socket, e.ns, containerID(cfg.ID)) == client.Stopped
	})
	if took := time.Since(lost); took > 3*time.Second {
		t.Errorf("stopped %s after its lease file went, want at once", took)
	}

	d := e.driver()
	b = newTask(t, ArchivePrefix+archive, "true")
	b.cfg.Fenced = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.StartTask(ctx, b.build()); err == nil || !strings.Contains(err.Error(), "lease file is gone") {
		t.Fatalf("StartTask of a fenced task without a lease file = %v, want a refusal", err)
	}
}

func TestFenceAlreadyPastRefusesToStart(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "true").build()
	now := drivers.BootClock()
	drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: now - time.Second, KillAt: now, Why: "no lease yet"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.StartTask(ctx, cfg); err == nil || !strings.Contains(err.Error(), "lease fence was reached") {
		t.Fatalf("StartTask = %v, want a refusal naming the fence", err)
	}
}

// TestSweepRemovesLeftoverContainers: containers no task of the driver
// tracks (an agent that lost its records left them) go once they are old
// and not running; running ones, tracked ones and young ones stay.
func TestSweepRemovesLeftoverContainers(t *testing.T) {
	e := newEnv(t)
	e.clock.now = time.Now()
	archive := ctrtest.BusyboxArchive(t)
	first := e.driver()
	exited := newTask(t, ArchivePrefix+archive, "true").build()
	start(t, first, exited)
	wait(t, first, exited.ID)
	running := newTask(t, ArchivePrefix+archive, "sleep", "600").build()
	start(t, first, running)
	first.Close() // its records are lost: the next driver tracks neither

	second := e.driver()
	tracked := newTask(t, ArchivePrefix+archive, "true").build()
	start(t, second, tracked)
	wait(t, second, tracked.ID)
	ctx := context.Background()
	if removed, err := second.SweepContainers(ctx); err != nil || len(removed) != 0 {
		t.Fatalf("sweep of young containers removed %v (%v)", removed, err)
	}
	e.clock.advance(leftoverAge + time.Minute)
	removed, err := second.SweepContainers(ctx)
	if err != nil || len(removed) != 1 || removed[0] != containerID(exited.ID) {
		t.Fatalf("sweep removed %v (%v), want only the exited leftover %s", removed, err, containerID(exited.ID))
	}
	left := ctrtest.Containers(t, e.socket, e.ns)
	if len(left) != 2 {
		t.Fatalf("containers left %v, want the running leftover and the tracked one", left)
	}
}

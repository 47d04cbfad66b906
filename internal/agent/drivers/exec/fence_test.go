package exec

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// TestShimEnforcesLeaseFence: the shim stops a task whose lease fence is
// reached without any help from the agent (which may be frozen), and the
// exit says it was fenced; a task whose fence keeps moving runs on.
func TestShimEnforcesLeaseFence(t *testing.T) {
	d := newTestDriver(t)
	res := api.Resources{CPUMilli: 100, MemoryBytes: 64 << 20}

	fenced := taskConfig(t, "fenced", res, "/bin/sleep", "60")
	now := drivers.BootClock()
	if err := drivers.WriteLeaseFence(fenced.TaskDir, drivers.LeaseFence{StopAt: now + 300*time.Millisecond, KillAt: now + 800*time.Millisecond, Why: "test"}); err != nil {
		t.Fatal(err)
	}
	renewed := taskConfig(t, "renewed", res, "/bin/sleep", "60")
	if err := drivers.WriteLeaseFence(renewed.TaskDir, drivers.LeaseFence{StopAt: now + 300*time.Millisecond, KillAt: now + 800*time.Millisecond, Why: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*drivers.TaskConfig{fenced, renewed} {
		if _, err := d.StartTask(context.Background(), c); err != nil {
			t.Fatal(err)
		}
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

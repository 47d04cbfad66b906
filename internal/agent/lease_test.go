package agent

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/lease"
)

func fencedGroup(atMostOnce bool, stopAfter time.Duration) *api.TaskGroup {
	return &api.TaskGroup{Name: "g", AtMostOnce: atMostOnce,
		Disconnect: &api.DisconnectPolicy{StopAfter: stopAfter},
		Tasks:      []*api.Task{{Name: "t", KillTimeout: 2 * time.Second}}}
}

func TestLeaseKeeperFence(t *testing.T) {
	const sent, granted = 100 * time.Second, 10 * time.Second
	amo := lease.AgentFence(lease.Defaults(), sent, granted, 2*time.Second)
	tests := []struct {
		name      string
		g         *api.TaskGroup
		renewed   bool
		want      drivers.LeaseFence
		wantFence bool
	}{
		{"no fence for an ordinary group", fencedGroup(false, 0), true, drivers.LeaseFence{}, false},
		{"never renewed: fenced already", fencedGroup(true, 0), false, drivers.LeaseFence{Why: "no lease yet"}, true},
		{"at most once", fencedGroup(true, 0), true, drivers.LeaseFence{StopAt: amo.StopAt, KillAt: amo.KillAt,
			Why: "atMostOnce: lease of 10s not renewed since it was sent"}, true},
		{"stopAfter", fencedGroup(false, 3*time.Second), true, drivers.LeaseFence{StopAt: sent + 3*time.Second, KillAt: sent + 5*time.Second,
			Why: "disconnect.stopAfter: no heartbeat answered for 3s"}, true},
		{"the earlier of the two", fencedGroup(true, time.Second), true, drivers.LeaseFence{StopAt: sent + time.Second, KillAt: sent + 3*time.Second,
			Why: "disconnect.stopAfter: no heartbeat answered for 1s"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newLeaseKeeper(func() time.Duration { return sent })
			if tt.renewed {
				k.renew(sent, granted)
			}
			f, ok := k.fence(tt.g)
			if ok != tt.wantFence || f != tt.want {
				t.Fatalf("fence = %+v, %v; want %+v, %v", f, ok, tt.want, tt.wantFence)
			}
		})
	}
}

// TestLeaseGateWaitsForRenewal: a fenced task does not start before the
// node holds a lease, and starts once it is renewed.
func TestLeaseGateWaitsForRenewal(t *testing.T) {
	now := 50 * time.Second
	k := newLeaseKeeper(func() time.Duration { return now })
	gate := &fenceHook{keeper: k, group: fencedGroup(true, 0)}
	dir := t.TempDir()
	started := make(chan bool, 1)
	go func() {
		err := gate.prestart(context.Background(), &drivers.TaskConfig{TaskDir: dir}, nil)
		started <- err == nil
	}()
	select {
	case <-started:
		t.Fatal("started without a lease")
	case <-time.After(50 * time.Millisecond):
	}
	k.renew(now, 10*time.Second)
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("prestart refused after the renewal")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not start after the renewal")
	}
	f, ok, err := drivers.ReadLeaseFence(dir)
	if err != nil || !ok || f.StopAt <= now {
		t.Fatalf("lease file %+v, %v, %v: want a fence after now", f, ok, err)
	}
	// A stale renewal answered late does not move the lease back.
	k.renew(now-time.Second, 10*time.Second)
	if g, _ := k.fence(gate.group); g != f {
		t.Fatalf("fence moved back to %+v", g)
	}
}

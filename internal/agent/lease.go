package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/lease"
)

// leaseKeeper holds the node's lease: renewed by every successful
// heartbeat, counted on the boot clock from the moment the heartbeat was
// sent. Fenced groups' tasks run only under it; the shim stops them at
// the fence (internal/lease) if it is not renewed.
type leaseKeeper struct {
	params lease.Params
	clock  func() time.Duration // the boot clock; injected in tests

	mu      sync.Mutex
	sent    time.Duration // boot clock when the last successful renewal was sent
	granted time.Duration // 0: never renewed
	renewed chan struct{} // closed and replaced by every renewal
}

func newLeaseKeeper(clock func() time.Duration) *leaseKeeper {
	return &leaseKeeper{params: lease.Defaults(), clock: clock, renewed: make(chan struct{})}
}

// renew records a renewal sent at sent for granted.
func (k *leaseKeeper) renew(sent, granted time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if sent < k.sent {
		return // an older renewal answered late
	}
	k.sent, k.granted = sent, granted
	close(k.renewed)
	k.renewed = make(chan struct{})
}

// fence is the group's fence under the current lease; ok is false when the
// group needs none. A lease never renewed gives a fence already reached.
func (k *leaseKeeper) fence(g *api.TaskGroup) (f drivers.LeaseFence, ok bool) {
	stopAfter := g.DisconnectPolicyOf().StopAfter
	if !g.AtMostOnce && stopAfter <= 0 {
		return drivers.LeaseFence{}, false
	}
	grace := g.StopGrace()
	k.mu.Lock()
	sent, granted := k.sent, k.granted
	k.mu.Unlock()
	f = drivers.LeaseFence{StopAt: sent, KillAt: sent, Why: "no lease yet"}
	if granted == 0 {
		return f, true
	}
	if g.AtMostOnce {
		lf := lease.AgentFence(k.params, sent, granted, grace)
		f = drivers.LeaseFence{StopAt: lf.StopAt, KillAt: lf.KillAt,
			Why: fmt.Sprintf("atMostOnce: lease of %s not renewed since it was sent", granted)}
	}
	if stopAfter > 0 && (f.Why == "no lease yet" || sent+stopAfter < f.StopAt) {
		f = drivers.LeaseFence{StopAt: sent + stopAfter, KillAt: sent + stopAfter + grace,
			Why: fmt.Sprintf("disconnect.stopAfter: no heartbeat answered for %s", stopAfter)}
	}
	return f, true
}

// waitUsable blocks until the group's fence is in the future (the lease
// is held), or ctx or stop ends; it returns false then.
func (k *leaseKeeper) waitUsable(ctx context.Context, stop <-chan struct{}, g *api.TaskGroup) bool {
	for {
		k.mu.Lock()
		renewed := k.renewed
		k.mu.Unlock()
		if f, ok := k.fence(g); !ok || k.clock() < f.StopAt {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-stop:
			return false
		case <-renewed:
		}
	}
}

// writeFences rewrites the lease file of every fenced task (after a
// renewal).
func (a *Agent) writeFences() {
	a.mu.Lock()
	runners := make([]*allocRunner, 0, len(a.allocs))
	for _, ar := range a.allocs {
		runners = append(runners, ar)
	}
	a.mu.Unlock()
	for _, ar := range runners {
		f, ok := a.lease.fence(ar.allocation().TaskGroup)
		if !ok {
			continue
		}
		for _, tr := range ar.tasks {
			if err := drivers.WriteLeaseFence(tr.cfg.TaskDir, f); err != nil {
				ar.log.Error("renew lease fence", "task", tr.cfg.Name, "err", err)
			}
		}
	}
}

// fenceHook gates every start of a task of a group that needs a fence
// (atMostOnce, stopAfter) on the node's lease (a prestart hook): it waits
// for a usable lease and writes the task's fence for the shim (the task's
// configuration says Fenced from the start: taskConfigFor). A fence that cannot be written fails the start: the task must not
// run without one.
type fenceHook struct {
	keeper *leaseKeeper
	group  *api.TaskGroup
}

func (g *fenceHook) prestart(ctx context.Context, cfg *drivers.TaskConfig, stop <-chan struct{}) error {
	if !g.keeper.waitUsable(ctx, stop, g.group) {
		return errNotStarting
	}
	f, _ := g.keeper.fence(g.group)
	return drivers.WriteLeaseFence(cfg.TaskDir, f)
}

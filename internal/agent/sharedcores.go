package agent

import (
	"context"
	"log/slog"
	"runtime"
	"sort"
	"sync"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// coreKeeper keeps exclusive cores exclusive: the node's shared pool is
// every core minus those assigned to allocations that hold exclusive
// cores and still have a task that is not dead, and every task cgroup of
// the agent that is not pinned has the pool as its cpuset. It rewrites
// them whenever a pinned allocation starts a task or loses its last one,
// and whenever a shared task starts (docs/hardware.md).
//
// sync is safe for concurrent use: the reservations are read and the
// cgroups written under one lock, so a later change is never overwritten
// by an earlier one.
type coreKeeper struct {
	version cgroup.Version
	root    string
	parent  string
	all     []int
	log     *slog.Logger

	mu sync.Mutex
}

// newCoreKeeper returns a keeper for the node's cores, or nil when the
// host has no cgroups to confine tasks with (then no driver pins either).
func newCoreKeeper(root, parent string, numa []api.NUMANode, log *slog.Logger) *coreKeeper {
	if root == "" {
		root = cgroup.DefaultRoot
	}
	v, err := cgroup.Detect(root)
	if err != nil {
		return nil
	}
	var all []int
	for _, n := range numa {
		all = append(all, n.CPUs...)
	}
	if len(all) == 0 {
		for c := 0; c < runtime.NumCPU(); c++ {
			all = append(all, c)
		}
	}
	sort.Ints(all)
	return &coreKeeper{version: v, root: root, parent: parent, all: all, log: log}
}

// sync computes the pool from reserved (called under the keeper's lock,
// returning allocation id → exclusive cores) and writes it into every
// task cgroup under the agent's parent whose allocation reserves none.
// It returns the pool, which a shared task about to start takes as its
// cpuset.
func (k *coreKeeper) sync(reserved func() map[string][]int) []int {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	res := reserved()
	sets := make([][]int, 0, len(res))
	for _, cpus := range res {
		sets = append(sets, cpus)
	}
	pool, starved := cgroup.SharedPool(k.all, sets)
	if starved {
		k.log.Warn("exclusive allocations hold every core; shared tasks keep all of them", "cores", cgroup.FormatCPUList(k.all))
	}
	refs, err := cgroup.ListTasks(k.version, k.root, k.parent)
	if err != nil {
		k.log.Warn("list task cgroups for the shared core pool", "err", err)
		return pool
	}
	for _, ref := range refs {
		if ref.Task == "" || res[ref.AllocID] != nil {
			continue
		}
		changed, err := cgroup.SetCPUs(k.version, k.root, ref.Rel(k.parent), pool)
		if err != nil {
			k.log.Warn("set shared task cpuset", "alloc", ref.AllocID, "task", ref.Task, "err", err)
			continue
		}
		if changed {
			k.log.Info("shared task cpuset", "alloc", ref.AllocID, "task", ref.Task, "cpus", cgroup.FormatCPUList(pool))
		}
	}
	return pool
}

// syncSharedCores brings every shared task's cpuset to the pool the
// running allocations leave and returns that pool.
func (a *Agent) syncSharedCores() []int {
	return a.cores.sync(a.exclusiveReservations)
}

// exclusiveReservations lists the exclusive cores of every allocation
// that has a task which is not dead (a pending one is about to start on
// them, a restarting one holds them between runs).
func (a *Agent) exclusiveReservations() map[string][]int {
	a.mu.Lock()
	runners := make([]*allocRunner, 0, len(a.allocs))
	for _, ar := range a.allocs {
		runners = append(runners, ar)
	}
	a.mu.Unlock()
	res := map[string][]int{}
	for _, ar := range runners {
		alloc := ar.allocation()
		if len(alloc.Assignment.CPUs) == 0 {
			continue
		}
		for _, tr := range ar.tasks {
			if !tr.dead() {
				res[alloc.ID] = alloc.Assignment.CPUs
				break
			}
		}
	}
	return res
}

// sharedCoresHook gives a task that is not pinned the node's shared pool
// as its cpuset (a prestart hook), rewriting every shared task's cpuset
// first: a task that starts is counted in the reservations from now on.
type sharedCoresHook struct{ agent *Agent }

func (h sharedCoresHook) prestart(_ context.Context, cfg *drivers.TaskConfig, _ <-chan struct{}) error {
	if pool := h.agent.syncSharedCores(); len(cfg.CPUs) == 0 {
		cfg.SharedCPUs = pool
	}
	return nil
}

package gc

import (
	"sort"
	"time"

	"github.com/strata-dev/strata/api"
)

// Input is what Collect reads: the stored workloads (by lookup) and every
// allocation, evaluation and deployment.
type Input struct {
	// Workload returns the stored workload, nil when there is none.
	Workload    func(namespace, name string) *api.Workload
	Allocs      []*api.Allocation
	Evals       []*api.Evaluation
	Deployments []*api.Deployment
}

// Garbage lists what to delete, each list sorted by ID.
type Garbage struct {
	Allocs      []string `json:"allocs,omitempty"`
	Evals       []string `json:"evals,omitempty"`
	Deployments []string `json:"deployments,omitempty"`
}

// Len is how many objects g names.
func (g Garbage) Len() int { return len(g.Allocs) + len(g.Evals) + len(g.Deployments) }

// Collect decides what is garbage at now under p. The rules (docs/gc.md):
//
//   - an object of a workload that is not stored, or of an earlier
//     incarnation of one (created before the workload of that name was
//     registered again), is garbage as soon as it is terminal: a purge
//     leaves nothing behind;
//   - a terminal allocation is garbage once it ended at least
//     p.Allocations ago, unless it is the newest allocation of a replica
//     the workload still has, or one of the failures its replica's
//     reschedule policy still counts (KeptFailures along the
//     PreviousAlloc chain, and every failure within a limited policy's
//     interval);
//   - a finished evaluation is garbage once it was created (or waited
//     until) at least p.Evaluations ago, unless it is its workload's
//     newest;
//   - a finished deployment is garbage once it last changed at least
//     p.Deployments ago, unless it is its workload's newest.
func Collect(in Input, p Policy, now time.Time) Garbage {
	var g Garbage
	if p.Off {
		return g
	}
	p = p.WithDefaults()
	g.Allocs = collectAllocs(in, p.Allocations, now)
	g.Evals = collectEvals(in, p.Evaluations, now)
	g.Deployments = collectDeployments(in, p.Deployments, now)
	return g
}

// orphan reports whether an object created at createIndex for workload
// (ns, name) belongs to no stored workload.
func orphan(in Input, ns, name string, createIndex uint64) bool {
	wl := in.Workload(api.NamespaceOf(ns), name)
	return wl == nil || (createIndex != 0 && createIndex < wl.CreateIndex)
}

// older reports whether t is at least retention before now.
func older(t time.Time, retention time.Duration, now time.Time) bool {
	return !t.After(now.Add(-retention))
}

type slotKey struct {
	ns, workload, group string
	index               int
}

type workloadKey struct{ ns, name string }

func collectAllocs(in Input, retention time.Duration, now time.Time) []string {
	byID := make(map[string]*api.Allocation, len(in.Allocs))
	newest := map[slotKey]*api.Allocation{}
	isOrphan := map[string]bool{}
	for _, a := range in.Allocs {
		byID[a.ID] = a
		if orphan(in, a.Namespace, a.Workload, a.CreateIndex) {
			isOrphan[a.ID] = true
			continue
		}
		k := slotKey{api.NamespaceOf(a.Namespace), a.Workload, a.Group, a.Index}
		if n := newest[k]; n == nil || a.CreateIndex > n.CreateIndex || (a.CreateIndex == n.CreateIndex && a.ID > n.ID) {
			newest[k] = a
		}
	}
	keep := map[string]bool{}
	var roots []*api.Allocation
	for k, a := range newest {
		if hasSlot(in.Workload(k.ns, k.workload), k.group, k.index) {
			keep[a.ID] = true // a finished task, or a replica left dead: the scheduler must see it
			roots = append(roots, a)
		}
	}
	for _, a := range in.Allocs {
		if !a.Terminal() && !isOrphan[a.ID] {
			roots = append(roots, a)
		}
	}
	for _, r := range roots {
		keepFailures(r, byID, isOrphan, keep, now)
	}
	var out []string
	for _, a := range in.Allocs {
		if !a.Terminal() {
			continue
		}
		ended := a.ClientStatusTime
		if ended.IsZero() {
			ended = a.CreateTime
		}
		if isOrphan[a.ID] || (!keep[a.ID] && older(ended, retention, now)) {
			out = append(out, a.ID)
		}
	}
	sort.Strings(out)
	return out
}

// hasSlot reports whether workload w still has replica index of group.
func hasSlot(w *api.Workload, group string, index int) bool {
	if w == nil {
		return false
	}
	for _, g := range w.Groups {
		if g.Name == group {
			return index < g.Replicas
		}
	}
	return false
}

// keepFailures marks the failed allocations before a along its
// PreviousAlloc chain that the reschedule policy still counts (the
// KeptFailures newest, and any within a limited policy's interval), and
// every allocation between them and a: the scheduler counts failures by
// walking the chain, which a gap would cut.
// An earlier incarnation's allocation ends the chain: it goes anyway.
func keepFailures(a *api.Allocation, byID map[string]*api.Allocation, isOrphan, keep map[string]bool, now time.Time) {
	var interval time.Duration
	if a.TaskGroup != nil {
		if p := a.TaskGroup.ReschedulePolicyOf(); !p.Unlimited {
			interval = p.Interval
		}
	}
	failures := 0
	var path []string // walked since the last kept failure
	seen := map[string]bool{a.ID: true}
	for prev := byID[a.PreviousAlloc]; prev != nil && !seen[prev.ID] && !isOrphan[prev.ID]; prev = byID[prev.PreviousAlloc] {
		seen[prev.ID] = true
		path = append(path, prev.ID)
		if prev.ClientStatus != api.AllocFailed {
			continue
		}
		recent := prev.ClientStatusTime.IsZero() || now.Sub(prev.ClientStatusTime) < interval
		if failures >= KeptFailures && !recent {
			break
		}
		for _, id := range path {
			keep[id] = true
		}
		path = path[:0]
		failures++
	}
}

func evalTerminal(status string) bool { return status == api.EvalComplete || status == api.EvalFailed }

func collectEvals(in Input, retention time.Duration, now time.Time) []string {
	newest := map[workloadKey]*api.Evaluation{}
	for _, e := range in.Evals {
		k := workloadKey{api.NamespaceOf(e.Namespace), e.Workload}
		if n := newest[k]; n == nil || e.CreateIndex > n.CreateIndex || (e.CreateIndex == n.CreateIndex && e.ID > n.ID) {
			newest[k] = e
		}
	}
	var out []string
	for _, e := range in.Evals {
		if !evalTerminal(e.Status) {
			continue
		}
		at := e.CreateTime
		if e.WaitUntil.After(at) {
			at = e.WaitUntil
		}
		k := workloadKey{api.NamespaceOf(e.Namespace), e.Workload}
		if orphan(in, e.Namespace, e.Workload, e.CreateIndex) || (newest[k] != e && older(at, retention, now)) {
			out = append(out, e.ID)
		}
	}
	sort.Strings(out)
	return out
}

func collectDeployments(in Input, retention time.Duration, now time.Time) []string {
	newest := map[workloadKey]*api.Deployment{}
	for _, d := range in.Deployments {
		k := workloadKey{api.NamespaceOf(d.Namespace), d.Workload}
		if n := newest[k]; n == nil || d.CreateIndex > n.CreateIndex || (d.CreateIndex == n.CreateIndex && d.ID < n.ID) {
			newest[k] = d
		}
	}
	var out []string
	for _, d := range in.Deployments {
		if !api.DeploymentTerminal(d.Status) {
			continue
		}
		at := d.ModifyTime
		if at.IsZero() {
			at = d.CreateTime
		}
		k := workloadKey{api.NamespaceOf(d.Namespace), d.Workload}
		if orphan(in, d.Namespace, d.Workload, d.CreateIndex) || (newest[k] != d && older(at, retention, now)) {
			out = append(out, d.ID)
		}
	}
	sort.Strings(out)
	return out
}

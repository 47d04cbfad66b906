package gc

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// randomCell draws workloads (some purged, some registered again), and
// allocations in replica chains, evaluations and deployments of any
// status and age.
func randomCell(rt *rapid.T) *cellBuilder {
	c := newCell()
	names := []string{"a", "b", "c"}
	for _, n := range names {
		if rapid.IntRange(0, 3).Draw(rt, "purged") > 0 {
			c.workload(n, rapid.IntRange(0, 3).Draw(rt, "replicas"), uint64(rapid.IntRange(1, 120).Draw(rt, "createIndex")))
		}
	}
	allocStatuses := []string{api.AllocPending, api.AllocRunning, api.AllocComplete, api.AllocFailed, api.AllocLost}
	last := map[string]string{}
	for i := range rapid.IntRange(0, 30).Draw(rt, "allocs") {
		n := rapid.SampledFrom(names).Draw(rt, "workload")
		idx := rapid.IntRange(0, 3).Draw(rt, "index")
		k := fmt.Sprint(n, idx)
		prev := ""
		if rapid.Bool().Draw(rt, "chained") {
			prev = last[k]
		}
		id := fmt.Sprintf("a%02d", i)
		c.alloc(id, n, idx, rapid.SampledFrom(allocStatuses).Draw(rt, "status"), time.Duration(rapid.IntRange(0, 100).Draw(rt, "hours"))*time.Hour, prev)
		last[k] = id
	}
	evalStatuses := []string{api.EvalPending, api.EvalBlocked, api.EvalComplete, api.EvalFailed}
	for i := range rapid.IntRange(0, 15).Draw(rt, "evals") {
		c.eval(fmt.Sprintf("e%02d", i), rapid.SampledFrom(names).Draw(rt, "workload"), rapid.SampledFrom(evalStatuses).Draw(rt, "status"),
			time.Duration(rapid.IntRange(0, 100).Draw(rt, "hours"))*time.Hour, uint64(rapid.IntRange(1, 200).Draw(rt, "createIndex")))
	}
	depStatuses := []string{api.DeploymentRunning, api.DeploymentSuccessful, api.DeploymentFailed, api.DeploymentCancelled}
	for i := range rapid.IntRange(0, 10).Draw(rt, "deployments") {
		c.deployment(fmt.Sprintf("d%02d", i), rapid.SampledFrom(names).Draw(rt, "workload"), rapid.SampledFrom(depStatuses).Draw(rt, "status"),
			time.Duration(rapid.IntRange(0, 100).Draw(rt, "hours"))*time.Hour, uint64(rapid.IntRange(1, 200).Draw(rt, "createIndex")))
	}
	return c
}

// TestPropertyCollectKeepsWhatTheCellNeeds: over random cells, Collect
// names only terminal objects; never the newest allocation of a replica
// the workload has, nor a stored workload's newest evaluation or
// deployment; every terminal object of a purged workload; and deleting
// what it names leaves nothing more for a second pass at the same time
// (no chain it kept is cut).
func TestPropertyCollectKeepsWhatTheCellNeeds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := randomCell(rt)
		g := Collect(c.in, Policy{}, now)
		allocs := map[string]*api.Allocation{}
		newestOfSlot := map[slotKey]*api.Allocation{}
		for _, a := range c.in.Allocs {
			allocs[a.ID] = a
			wl := c.in.Workload(a.Namespace, a.Workload)
			if wl == nil || a.CreateIndex < wl.CreateIndex {
				if a.Terminal() && !slices.Contains(g.Allocs, a.ID) {
					rt.Fatalf("terminal allocation %s of a purged workload kept", a.ID)
				}
				continue
			}
			k := slotKey{a.Namespace, a.Workload, a.Group, a.Index}
			if n := newestOfSlot[k]; n == nil || a.CreateIndex > n.CreateIndex {
				newestOfSlot[k] = a
			}
		}
		for _, id := range g.Allocs {
			a := allocs[id]
			if !a.Terminal() {
				rt.Fatalf("live allocation %s collected", id)
			}
			k := slotKey{a.Namespace, a.Workload, a.Group, a.Index}
			if newestOfSlot[k] == a && hasSlot(c.in.Workload(a.Namespace, a.Workload), a.Group, a.Index) {
				rt.Fatalf("allocation %s, the newest of its replica, collected", id)
			}
		}
		// newest is a workload's object of the highest create index; among
		// equals, the greatest ID for evaluations and the least for
		// deployments (state.LatestDeployment's order).
		checkNewest := func(kind string, ids []string, objs []struct {
			id, name, status string
			createIndex      uint64
			terminal         bool
		}, greaterID bool) {
			newest := map[string]int{}
			for i, o := range objs {
				j, ok := newest[o.name]
				if !ok || o.createIndex > objs[j].createIndex ||
					(o.createIndex == objs[j].createIndex && (o.id > objs[j].id) == greaterID) {
					newest[o.name] = i
				}
			}
			for _, o := range objs {
				if !slices.Contains(ids, o.id) {
					continue
				}
				if !o.terminal {
					rt.Fatalf("%s %s (%s) collected", kind, o.id, o.status)
				}
				wl := c.in.Workload(api.DefaultNamespace, o.name)
				if wl != nil && o.createIndex >= wl.CreateIndex && objs[newest[o.name]].id == o.id {
					rt.Fatalf("%s %s, its workload's newest, collected", kind, o.id)
				}
			}
		}
		type obj = struct {
			id, name, status string
			createIndex      uint64
			terminal         bool
		}
		var evals, deps []obj
		for _, e := range c.in.Evals {
			evals = append(evals, obj{e.ID, e.Workload, e.Status, e.CreateIndex, evalTerminal(e.Status)})
		}
		for _, d := range c.in.Deployments {
			deps = append(deps, obj{d.ID, d.Workload, d.Status, d.CreateIndex, api.DeploymentTerminal(d.Status)})
		}
		checkNewest("evaluation", g.Evals, evals, true)
		checkNewest("deployment", g.Deployments, deps, false)

		// A second pass over what is left finds nothing.
		left := c.in
		left.Allocs = slices.DeleteFunc(slices.Clone(c.in.Allocs), func(a *api.Allocation) bool { return slices.Contains(g.Allocs, a.ID) })
		left.Evals = slices.DeleteFunc(slices.Clone(c.in.Evals), func(e *api.Evaluation) bool { return slices.Contains(g.Evals, e.ID) })
		left.Deployments = slices.DeleteFunc(slices.Clone(c.in.Deployments), func(d *api.Deployment) bool { return slices.Contains(g.Deployments, d.ID) })
		if again := Collect(left, Policy{}, now); again.Len() != 0 {
			rt.Fatalf("a second pass collects %+v", again)
		}
	})
}

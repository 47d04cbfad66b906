package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
)

// DefaultMinHealthy is how long `strata run --wait` wants each allocation
// to stay healthy before it counts: a task that starts and crashes a
// second later must not be reported as up.
const DefaultMinHealthy = 5 * time.Second

// waitVerdict is what one look at a workload tells `strata run --wait`.
type waitVerdict struct {
	done     bool   // every wanted instance of the submitted version is up
	fail     string // non-empty: the wait failed, for this reason
	progress string // "2/3 healthy", printed when it changes
	// recheck, when set, is when an allocation now settling will have
	// been healthy for minHealthy: look again then even if nothing changes.
	recheck time.Time
}

// waitMemory is what judgeWait remembers between looks: since when (by
// the CLI's clock) each allocation has been seen healthy without a break.
type waitMemory struct {
	minHealthy   time.Duration
	healthySince map[string]time.Time
}

// judgeWait decides, from one consistent look at the workload's status and
// allocations, whether the version reg submitted is up, has failed, or is
// still on its way. Only allocations that run the submitted version count:
// those of that version, and older ones whose group spec it did not change
// (a scale-up or a re-submit keeps them). An allocation counts once it has
// been healthy (Allocation.Healthy: readiness checks pass, or its tasks
// run when it has none) for minHealthy; a failed, crashed, OOM-killed or
// unhealthy allocation of the submitted version fails the wait with its
// reason.
func judgeWait(reg *api.RegisterResponse, st *api.WorkloadStatus, allocs []*api.Allocation, now time.Time, mem *waitMemory) waitVerdict {
	if mem.healthySince == nil {
		mem.healthySince = map[string]time.Time{}
	}
	w := st.Workload
	if w != nil && w.Version > reg.Version {
		return waitVerdict{fail: fmt.Sprintf("workload %q was updated to version %d meanwhile; version %d is no longer wanted", reg.Name, w.Version, reg.Version)}
	}
	if w == nil || w.Version < reg.Version {
		return waitVerdict{progress: fmt.Sprintf("waiting for version %d to be visible", reg.Version)}
	}
	specs := map[string]string{}
	for _, g := range w.Groups {
		specs[g.Name], _ = api.RunSpec(g)
	}
	desired := 0
	for _, gs := range st.Groups {
		desired += gs.Desired
	}
	var v waitVerdict
	healthy, settling := 0, 0
	for _, a := range sortedAllocs(allocs) {
		spec, ok := specs[a.Group]
		if a.DesiredStatus != api.DesiredRun || !ok {
			delete(mem.healthySince, a.ID)
			continue
		}
		if a.WorkloadVersion != reg.Version {
			if run, ok := api.RunSpec(a.TaskGroup); !ok || run != spec {
				continue // the old version, being replaced (the scheduler's rule)
			}
		}
		fresh := a.WorkloadVersion == reg.Version || a.CreateIndex >= reg.Index
		if why := allocTrouble(a, fresh); why != "" {
			return waitVerdict{fail: fmt.Sprintf("allocation %s (%s[%d]) on %s: %s", shortID(a.ID), a.Group, a.Index, a.NodeName, why)}
		}
		if !a.Healthy() {
			delete(mem.healthySince, a.ID)
			continue
		}
		since, seen := mem.healthySince[a.ID]
		if !seen {
			since = now
			mem.healthySince[a.ID] = now
		}
		if ready := since.Add(mem.minHealthy); now.Before(ready) {
			settling++
			if v.recheck.IsZero() || ready.Before(v.recheck) {
				v.recheck = ready
			}
			continue
		}
		healthy++
	}
	if e := st.LatestEval; e != nil && e.Status == api.EvalBlocked && e.CreateIndex >= reg.Index {
		var b strings.Builder
		for _, f := range e.Failures {
			fmt.Fprintf(&b, "\n  group %s: %d not placed: %s", f.Group, f.Missing, f.Summary)
		}
		return waitVerdict{fail: fmt.Sprintf("%q cannot be fully placed:%s", reg.Name, b.String())}
	}
	v.progress = fmt.Sprintf("%d/%d healthy", healthy, desired)
	if settling > 0 {
		v.progress += fmt.Sprintf(" (%d more healthy for less than %s)", settling, mem.minHealthy)
	}
	evaluated := st.LatestEval != nil && st.LatestEval.CreateIndex >= reg.Index && st.LatestEval.Status == api.EvalComplete
	v.done = desired == 0 || (evaluated && healthy >= desired)
	return v
}

// allocTrouble says why an allocation will not become (or stay) healthy:
// it failed, it is unhealthy, or, for one placed for the submitted
// version (fresh), one of its tasks already crashed and was restarted.
func allocTrouble(a *api.Allocation, fresh bool) string {
	if a.ClientStatus == api.AllocFailed {
		return "failed: " + a.ClientReason
	}
	if a.Health != nil && a.Health.Status == api.HealthUnhealthy {
		return "unhealthy: " + a.Health.Reason
	}
	if !fresh {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(a.TaskStates)) {
		ts := a.TaskStates[name]
		if ts == nil || ts.Restarts == 0 {
			continue
		}
		what := "crashed"
		if ts.OOMKilled {
			what = "was OOM-killed"
		}
		return fmt.Sprintf("task %s %s and was restarted %d times: %s", name, what, ts.Restarts, ts.Message)
	}
	return ""
}

func sortedAllocs(allocs []*api.Allocation) []*api.Allocation {
	out := slices.Clone(allocs)
	slices.SortFunc(out, func(a, b *api.Allocation) int { return strings.Compare(a.ID, b.ID) })
	return out
}

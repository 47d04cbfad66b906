package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
)

// waitVerdict is what one look at a workload tells `strata run --wait`.
type waitVerdict struct {
	done     bool   // every wanted instance of the submitted version is up
	fail     string // non-empty: the wait failed, for this reason
	progress string // "2/3 running", printed when it changes
}

// judgeWait decides, from one consistent look at the workload's status and
// allocations, whether the version reg submitted is up, has failed, or is
// still on its way.
func judgeWait(reg *api.RegisterResponse, st *api.WorkloadStatus, allocs []*api.Allocation, now time.Time, seen *waitMemory) waitVerdict {
	desired, running := 0, 0
	for _, gs := range st.Groups {
		desired += gs.Desired
	}
	for _, a := range allocs {
		if a.DesiredStatus != api.DesiredRun {
			continue
		}
		switch {
		case a.ClientStatus == api.AllocRunning:
			running++
		case a.ClientStatus == api.AllocFailed && a.WorkloadVersion == reg.Version:
			return waitVerdict{fail: fmt.Sprintf("allocation %s (%s[%d]) on %s failed: %s", shortID(a.ID), a.Group, a.Index, a.NodeName, a.ClientReason)}
		}
	}
	if e := st.LatestEval; e != nil && e.Status == api.EvalBlocked && e.CreateIndex >= reg.Index {
		var b strings.Builder
		for _, f := range e.Failures {
			fmt.Fprintf(&b, "\n  group %s: %d not placed: %s", f.Group, f.Missing, f.Summary)
		}
		return waitVerdict{fail: fmt.Sprintf("%q cannot be fully placed:%s", reg.Name, b.String())}
	}
	v := waitVerdict{progress: fmt.Sprintf("%d/%d running", running, desired)}
	evaluated := st.LatestEval != nil && st.LatestEval.CreateIndex >= reg.Index && st.LatestEval.Status == api.EvalComplete
	v.done = desired == 0 || (evaluated && running >= desired)
	return v
}

// waitMemory is what judgeWait remembers between looks.
type waitMemory struct {
	minHealthy time.Duration
}

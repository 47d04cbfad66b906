package httpapi

import (
	"github.com/strata-dev/strata/api"
)

// workloadStatus summarizes a workload from its allocations and its newest
// evaluation. It is a pure function of its inputs.
func workloadStatus(w *api.Workload, allocs []*api.Allocation, evals []*api.Evaluation) *api.WorkloadStatus {
	st := &api.WorkloadStatus{Workload: w, Unenforced: w.Unenforced}
	for _, e := range evals {
		if st.LatestEval == nil || e.CreateIndex > st.LatestEval.CreateIndex {
			st.LatestEval = e
		}
		if e.Status == api.EvalPending && !e.WaitUntil.IsZero() && (st.NextEval == nil || e.WaitUntil.Before(st.NextEval.WaitUntil)) {
			st.NextEval = e
		}
	}
	byGroup := map[string]*api.GroupStatus{}
	for _, g := range w.Groups {
		gs := api.GroupStatus{Name: g.Name, Desired: g.Replicas}
		if w.Stopped {
			gs.Desired = 0
		}
		st.Groups = append(st.Groups, gs)
	}
	for i := range st.Groups {
		byGroup[st.Groups[i].Name] = &st.Groups[i]
	}
	for _, a := range allocs {
		gs := byGroup[a.Group]
		if gs == nil {
			continue // a group removed by an update
		}
		if a.PreemptedBy != "" {
			gs.Preempted++
			continue
		}
		switch a.ClientStatus {
		case api.AllocLost:
			gs.Lost++
			continue
		}
		if a.DesiredStatus != api.DesiredRun {
			if a.ClientStatus == api.AllocFailed && a.DesiredReason != "" && !w.Stopped {
				// Stopped while failed: the reschedule policy's verdict.
				gs.Failed++
				gs.Dead++
				gs.DeadReason = a.DesiredReason
			}
			continue
		}
		switch a.ClientStatus {
		case api.AllocPending:
			gs.Pending++
		case api.AllocRunning:
			gs.Running++
			if a.Healthy() {
				gs.Healthy++
			}
		case api.AllocComplete:
			gs.Complete++
		case api.AllocFailed:
			gs.Failed++
		}
	}
	if e := st.LatestEval; e != nil && e.Status == api.EvalBlocked {
		for i := range e.Failures {
			if gs := byGroup[e.Failures[i].Group]; gs != nil {
				gs.Failure = &e.Failures[i]
			}
		}
	}
	explain(evals, byGroup)
	st.Status = overallStatus(w, st.Groups)
	return st
}

// explain gives each group the explanation of the newest evaluation that
// tried to place some of it.
func explain(evals []*api.Evaluation, byGroup map[string]*api.GroupStatus) {
	newest := map[string]uint64{}
	for _, e := range evals {
		for i := range e.Explanations {
			x := &e.Explanations[i]
			gs := byGroup[x.Group]
			if gs == nil || (gs.Explanation != nil && newest[x.Group] >= e.CreateIndex) {
				continue
			}
			gs.Explanation, gs.ExplainedBy, newest[x.Group] = x, e.ID, e.CreateIndex
		}
	}
}

func overallStatus(w *api.Workload, groups []api.GroupStatus) string {
	if w.Stopped {
		return api.WorkloadStopped
	}
	var desired, running, pending, finished int
	for _, g := range groups {
		desired += g.Desired
		running += g.Running
		pending += g.Pending + unplaced(g)
		finished += g.Complete + g.Failed
	}
	switch {
	case desired == 0:
		return api.WorkloadDead
	case running >= desired:
		return api.WorkloadRunning
	case running == 0 && pending == 0 && finished > 0:
		return api.WorkloadDead
	case running == 0:
		return api.WorkloadPending
	}
	return api.WorkloadPartial
}

func unplaced(g api.GroupStatus) int {
	if g.Failure != nil {
		return g.Failure.Missing
	}
	return 0
}

func summarize(st *api.WorkloadStatus) api.WorkloadSummary {
	s := api.WorkloadSummary{Name: st.Workload.Name, Status: st.Status, PriorityClass: st.Workload.PriorityClass,
		Priority: st.Workload.Priority, Version: st.Workload.Version}
	for _, g := range st.Groups {
		s.Desired += g.Desired
		s.Running += g.Running
		s.Pending += g.Pending + unplaced(g)
		s.Failed += g.Failed
	}
	return s
}

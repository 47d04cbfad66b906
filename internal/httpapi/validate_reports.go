package httpapi

import (
	"maps"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/spec"
)

type allocUpdatesRequest struct {
	Updates []*api.AllocUpdate `json:"updates"`
}

// agentClientStatuses are the client statuses an agent may report; lost is
// the server's to set.
var agentClientStatuses = []string{api.AllocPending, api.AllocRunning, api.AllocComplete, api.AllocFailed}

var taskStates = []string{api.TaskPending, api.TaskRunning, api.TaskDead}

// validateAllocUpdates checks an agent's report before any of it is
// looked up: a list (not null), each update an allocation id once, a
// status an agent may report, task states keyed by task names.
func validateAllocUpdates(req *allocUpdatesRequest) error {
	var f fieldErrors
	if req.Updates == nil {
		f.add("updates", "required: a list of allocation updates")
	}
	seen := map[string]int{}
	for i, u := range req.Updates {
		p := fieldpath.Index("updates", i)
		if u == nil {
			f.add(p, "expected an update, got null")
			continue
		}
		if problem := spec.CheckID(u.ID); problem != "" {
			f.add(p+".id", "%s", problem)
		} else if first, dup := seen[u.ID]; dup {
			f.add(p+".id", "allocation %s is already reported by updates[%d]", u.ID, first)
		} else {
			seen[u.ID] = i
		}
		if !oneOf(u.ClientStatus, agentClientStatuses) {
			f.add(p+".clientStatus", "unknown status %.64q (want %s)", u.ClientStatus, strings.Join(agentClientStatuses, ", "))
		}
		f.check(p+".clientReason", checkText(u.ClientReason, maxTextBytes))
		validateHealth(&f, p+".health", u.Health)
		for _, name := range slices.Sorted(maps.Keys(u.TaskStates)) {
			validateTaskState(&f, fieldpath.Join(p+".taskStates", name), name, u.TaskStates[name])
		}
	}
	if len(f) == 0 {
		return nil
	}
	return route.Invalid("invalid-alloc-update", f)
}

func validateTaskState(f *fieldErrors, p, name string, ts *api.TaskState) {
	if problem := spec.CheckName(name); problem != "" {
		f.add(p, "not a task name: %s", problem)
		return
	}
	if ts == nil {
		f.add(p, "expected a task state, got null")
		return
	}
	if !oneOf(ts.State, taskStates) {
		f.add(p+".state", "unknown task state %.64q (want %s)", ts.State, strings.Join(taskStates, ", "))
	}
	if ts.PID < 0 {
		f.add(p+".pid", "must not be negative, got %d", ts.PID)
	}
	if ts.Restarts < 0 {
		f.add(p+".restarts", "must not be negative, got %d", ts.Restarts)
	}
	if ts.Signal < 0 || ts.Signal > maxTaskSignal {
		f.add(p+".signal", "must be between 0 and %d, got %d", maxTaskSignal, ts.Signal)
	}
	f.check(p+".message", checkText(ts.Message, maxTextBytes))
}

// maxCheckResults bounds the check results of one allocation's report:
// every task and service at spec.MaxChecks, with room to spare.
const maxCheckResults = 1024

var (
	healthStatuses = []string{api.HealthPending, api.HealthHealthy, api.HealthUnhealthy}
	checkStatuses  = []string{api.CheckPending, api.CheckPassing, api.CheckFailing}
	checkTypes     = []string{api.CheckHTTP, api.CheckTCP, api.CheckExec}
	checkPurposes  = []string{api.CheckReadiness, api.CheckLiveness}
)

// validateHealth checks an agent's health report of one allocation.
func validateHealth(f *fieldErrors, p string, h *api.AllocHealth) {
	if h == nil {
		return
	}
	if !oneOf(h.Status, healthStatuses) {
		f.add(p+".status", "unknown health status %.64q (want %s)", h.Status, strings.Join(healthStatuses, ", "))
	}
	f.check(p+".reason", checkText(h.Reason, maxTextBytes))
	if len(h.Checks) > maxCheckResults {
		f.add(p+".checks", "at most %d check results, got %d", maxCheckResults, len(h.Checks))
		return
	}
	for i, c := range h.Checks {
		cp := fieldpath.Index(p+".checks", i)
		f.check(cp+".name", spec.CheckName(c.Name))
		if c.Task != "" {
			f.check(cp+".task", spec.CheckName(c.Task))
		}
		if c.Service != "" {
			f.check(cp+".service", spec.CheckName(c.Service))
		}
		if !oneOf(c.Type, checkTypes) {
			f.add(cp+".type", "unknown check type %.64q", c.Type)
		}
		if !oneOf(c.Purpose, checkPurposes) {
			f.add(cp+".purpose", "unknown check purpose %.64q", c.Purpose)
		}
		if !oneOf(c.Status, checkStatuses) {
			f.add(cp+".status", "unknown check status %.64q (want %s)", c.Status, strings.Join(checkStatuses, ", "))
		}
		f.check(cp+".output", checkText(c.Output, maxTextBytes))
		if c.Failures < 0 {
			f.add(cp+".failures", "must not be negative, got %d", c.Failures)
		}
	}
}

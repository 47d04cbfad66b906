package server

import (
	"fmt"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/spec"
)

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

// healthEvents are the events of an agent's report about one allocation:
// its health changing to healthy or unhealthy, and each check whose
// status changed, with its last output.
func healthEvents(old *api.Allocation, u *api.AllocUpdate) []api.Event {
	if u.Health == nil {
		return nil
	}
	var out []api.Event
	where := fmt.Sprintf("%s[%d] on %s", old.Group, old.Index, old.NodeName)
	ev := func(typ, msg string) api.Event {
		return api.Event{Type: typ, Workload: old.Workload, NodeID: old.NodeID, AllocID: old.ID, Message: msg}
	}
	before := map[string]string{}
	if old.Health != nil {
		for _, c := range old.Health.Checks {
			before[c.Task+"/"+c.Service+"/"+c.Name] = c.Status
		}
	}
	for _, c := range u.Health.Checks {
		prev, known := before[c.Task+"/"+c.Service+"/"+c.Name]
		if c.Status == api.CheckPending || (known && prev == c.Status) {
			continue
		}
		owner := "task " + c.Task
		if c.Task == "" {
			owner = "service " + c.Service
		}
		out = append(out, ev(api.EventCheck, fmt.Sprintf("%s: %s check %s of %s is %s: %s", where, c.Purpose, c.Name, owner, c.Status, c.Output)))
	}
	was := ""
	if old.Health != nil {
		was = old.Health.Status
	}
	if now := u.Health.Status; now != was && now != api.HealthPending {
		msg := where + " is " + now
		if u.Health.Reason != "" {
			msg += ": " + u.Health.Reason
		}
		out = append(out, ev(api.EventAllocHealth, msg))
	}
	return out
}

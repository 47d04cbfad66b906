package server

import (
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

package api

import "encoding/json"

// RunSpec is a group's spec as a replica of it runs: the group as JSON
// (struct fields in declaration order, map keys sorted) without Replicas,
// Update, Disruption and ShutdownDelay, which change how many run, how a
// new version rolls out, how many the cell may move at once and how long
// a stop waits (the agent reads it when it stops), not what a replica
// runs. ok is false for a missing or unencodable spec.
//
// It is the one rule for "does this allocation run the current spec?":
// the scheduler replaces an allocation whose RunSpec differs from its
// group's (scheduler.NeedsReplacement), and `strata run --wait` counts one
// whose RunSpec is the group's as running the submitted version.
func RunSpec(g *TaskGroup) (spec string, ok bool) {
	if g == nil {
		return "", false
	}
	cp := *g
	cp.Replicas = 0
	cp.Update = nil
	cp.Disruption = nil
	cp.ShutdownDelay = 0
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// SameRun reports whether a replica of spec old runs what one of spec cur
// runs (RunSpec). One spec runs the same as itself; a missing or
// unencodable spec runs nothing else the same.
func SameRun(old, cur *TaskGroup) bool {
	if old == cur {
		return true
	}
	a, okA := RunSpec(old)
	b, okB := RunSpec(cur)
	return okA && okB && a == b
}

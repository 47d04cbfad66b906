// Package schedplacer lets the simulator place pods with Strata's real
// scheduler (internal/scheduler), the same code the server runs, instead of
// the simulator's own policy implementations. It presents the simulator's
// cluster model to the scheduler as a read-only scheduler.State (one node per
// simulated node, one synthetic allocation per used GPU), asks Schedule for a
// one-pod plan, and turns the plan's assignment back into a placement.
//
// It owns only that translation: it must never decide placements itself.
package schedplacer

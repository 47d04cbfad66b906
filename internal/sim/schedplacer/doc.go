// Package schedplacer lets the simulator place pods with Strata's real
// scheduler (internal/scheduler), the same code the server runs, instead of
// the simulator's own policy implementations. It presents the simulator's
// cluster model to the scheduler as a read-only scheduler.State (one node per
// simulated node, one synthetic allocation per used GPU, kept up to date from
// the cluster's change log), asks Schedule for a plan of one workload whose
// replicas are the pods it is handed (a job's tasks submitted together are
// one evaluation, as on the server), and turns the plan's assignments back
// into placements.
//
// It owns only that translation: it must never decide placements itself.
package schedplacer

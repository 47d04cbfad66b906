// Package health runs an allocation's health checks on its node: the
// tasks' exec, HTTP and TCP checks and its services' checks, and turns
// their results into the allocation's health (api.AllocHealth) that the
// agent reports with its status.
//
// The core is pure and clock-free: a Set holds one tracker per check
// (consecutive passes and failures, thresholds, initial delay, when the
// next run is due) and is driven by the caller with the time and each
// probe's outcome. The Runner is the thin concurrent shell: it waits on an
// injected Clock, runs the due probes through a Prober (the only I/O, in
// probe.go) and reports changes through callbacks. A liveness check that
// reaches its failure threshold asks for the task's restart (the agent's
// task runner applies the restart policy); readiness checks only decide
// health. The package never talks to the server and never starts or stops
// a task itself. docs/health.md is its manual.
package health
